"""Service commands (serve, submit, status) register on the main CLI app."""
