"""The two user interfaces: the HTTP API (FastAPI) and the command line (Typer)."""
