"""``db``: the database schema commands."""

from __future__ import annotations

import typer

from api.cli.common import DbOption, out, user_errors
from storage.db import safe_url, upgrade

app = typer.Typer(help="Database schema commands.", no_args_is_help=True)


@app.command("upgrade")
def db_upgrade(db: DbOption = None) -> None:
    """Create the tables or upgrade them to the newest schema (Alembic migrations)."""
    with user_errors(db):
        upgrade(db)
        out.print(f"database {safe_url(db)} is at the newest schema")
