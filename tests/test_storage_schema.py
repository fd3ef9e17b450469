"""The Alembic migrations create exactly the model tables, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from storage import db
from storage.models import SQLModel

TABLES = {"batch", "chunk", "match", "seat_result", "outbox", "idempotency_key"}


def test_upgrade_creates_exactly_the_model_tables(db_url: str) -> None:
    engine = db.get_engine(db_url)
    names = set(inspect(engine).get_table_names()) - {"alembic_version"}
    assert names == TABLES
    with engine.connect() as conn:
        diff = compare_metadata(
            MigrationContext.configure(conn, opts={"compare_type": True}), SQLModel.metadata
        )
    assert diff == []
    assert db.current_revision(db_url) == db.head_revision()


def test_upgrade_is_repeatable_and_downgrade_removes_everything(db_url: str) -> None:
    db.upgrade(db_url)
    assert db.current_revision(db_url) == db.head_revision()
    db.downgrade(db_url, "base")
    assert set(inspect(db.get_engine(db_url)).get_table_names()) <= {"alembic_version"}
    db.upgrade(db_url)
    assert set(inspect(db.get_engine(db_url)).get_table_names()) >= TABLES


def test_ensure_schema_creates_a_fresh_sqlite_file(sqlite_url: str) -> None:
    assert db.current_revision(sqlite_url) is None
    db.ensure_schema(sqlite_url)
    assert db.current_revision(sqlite_url) == db.head_revision()


def test_sqlite_connections_use_wal_and_foreign_keys(migrated_sqlite_url: str) -> None:
    with db.get_engine(migrated_sqlite_url).connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == db.SQLITE_BUSY_TIMEOUT_MS


def test_urls_are_normalised_and_passwords_hidden() -> None:
    assert db.normalise_url("postgresql://u:p@h/d") == "postgresql+psycopg://u:p@h/d"
    assert db.normalise_url("postgres://h/d") == "postgresql+psycopg://h/d"
    assert db.normalise_url("sqlite:///x.db") == "sqlite:///x.db"
    assert "secret" not in db.safe_url("postgresql://u:secret@h/d")
    assert db.is_sqlite("sqlite:///x.db") and not db.is_sqlite("postgresql://h/d")


def test_engines_are_cached_per_url(sqlite_url: str) -> None:
    assert db.get_engine(sqlite_url) is db.get_engine(sqlite_url)
