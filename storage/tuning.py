"""Where ``playtester tune`` keeps its Optuna trials: beside the project's own tables.

Optuna keeps its own tables and its own Alembic version table, which would clash with the
project's ``alembic_version``. In PostgreSQL they live in the schema ``optuna`` of the
project's database; a SQLite database gets a sibling file ``<name>.optuna.db``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

OPTUNA_SCHEMA = "optuna"


def optuna_storage(database_url: str) -> Any:
    """Optuna's RDB storage for the project's database ``database_url``."""
    import optuna

    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        path = url.database or ""
        if not path or path == ":memory:":
            return optuna.storages.RDBStorage("sqlite:///:memory:")
        return optuna.storages.RDBStorage(f"sqlite:///{path}.optuna.db")
    with create_engine(url).begin() as conn:
        conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {OPTUNA_SCHEMA}"))
    return optuna.storages.RDBStorage(
        url.render_as_string(hide_password=False),
        engine_kwargs={"connect_args": {"options": f"-csearch_path={OPTUNA_SCHEMA}"}},
    )
