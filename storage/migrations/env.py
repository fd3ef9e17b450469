"""Alembic environment: migrations run on the connection ``storage.db.upgrade`` hands over."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from storage.db import get_engine
from storage.models import SQLModel

target_metadata = SQLModel.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        # SQLite cannot ALTER most things in place; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    """Print the SQL instead of running it (``alembic upgrade --sql``)."""
    context.configure(
        url=context.config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Migrate through the shared connection, or open one from ``sqlalchemy.url``."""
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    with get_engine(context.config.get_main_option("sqlalchemy.url")).begin() as conn:
        _run(conn)


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
