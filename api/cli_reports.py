"""Report commands (report, compare) register on the main CLI app."""
