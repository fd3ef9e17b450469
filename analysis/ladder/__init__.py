"""Each game's strength ladder: its levels and reference (:mod:`.ladders`), its results files
(:mod:`.results`), the Elo and CPU-time fit (:mod:`.fit`) and its tables and plot
(:mod:`.show`). ``python -m bench.ladder`` plays it; study pages quote it
(:mod:`analysis.studies.levels`)."""
