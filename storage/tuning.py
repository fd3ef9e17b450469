"""Where ``playtester tune`` keeps its Optuna trials: beside the project's own tables.

Optuna keeps its own tables and its own Alembic version table, which would clash with the
project's ``alembic_version``. In PostgreSQL they live in the schema ``optuna`` of the
project's database, reached with the connection options of every other connection here
(:mod:`storage.db`: keepalives, timeouts, TLS verification); a SQLite database gets a sibling
file ``<name>.optuna.db``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import make_url

from storage.db import engine_options, get_engine, is_sqlite, normalise_url
from storage.settings import Settings

OPTUNA_SCHEMA = "optuna"


def optuna_storage(settings: Settings) -> Any:
    """Optuna's RDB storage for the project's database (``settings.database_url``)."""
    import optuna

    url = normalise_url(settings.database_url)
    if is_sqlite(url):
        path = make_url(url).database or ""
        if not path or path == ":memory:":
            return optuna.storages.RDBStorage("sqlite:///:memory:")
        return optuna.storages.RDBStorage(f"sqlite:///{path}.optuna.db")
    with get_engine(url).begin() as conn:
        conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {OPTUNA_SCHEMA}"))
    return optuna.storages.RDBStorage(
        make_url(url).render_as_string(hide_password=False),
        engine_kwargs=engine_options(url, search_path=OPTUNA_SCHEMA),
    )
