"""Balance statistics: tidy DataFrames in, tidy DataFrames out. Never imports workers or api."""
