"""The Alembic migrations create exactly the model tables, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from storage import db
from storage.models import SQLModel

TABLES = {"batch", "chunk", "match", "seat_result", "outbox", "idempotency_key", "import_key"}


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


def test_the_column_lists_are_the_tables_columns_in_order() -> None:
    from storage.models import (
        CHUNK,
        MATCH,
        MATCH_COLUMNS,
        SEAT_COLUMNS,
        SEAT_RESULT,
        STOP_COLUMNS,
    )
    from storage.records import SeatRecord

    assert tuple(MATCH.c.keys()) == MATCH_COLUMNS
    assert tuple(SEAT_RESULT.c.keys()) == SEAT_COLUMNS
    assert set(STOP_COLUMNS) <= set(CHUNK.c.keys())
    # A seat record is a seat_result row after its batch and match: same order, same meaning.
    renamed = {"agent_label": "agent"}
    assert tuple(renamed.get(f, f) for f in SeatRecord._fields) == SEAT_COLUMNS[2:]


def test_batch_columns_are_declared_once_for_plan_table_and_api() -> None:
    from api.schemas import BatchPublic
    from storage.models import Batch, BatchBase, BatchPlan, BatchState

    request = set(BatchBase.model_fields)
    assert set(BatchPlan.model_fields) == request
    assert request < set(BatchState.model_fields) < set(Batch.model_fields)
    # The API shows every column but the table's run bookkeeping, and never derives from the
    # table model itself.
    assert set(Batch.model_fields) - set(BatchPublic.model_fields) == {
        "run_started_at",
        "run_start_finished",
    }
    # What it adds is derived at read time: progress, links and why chunks wait.
    assert set(BatchPublic.model_fields) - set(Batch.model_fields) == {
        "progress",
        "links",
        "waiting",
    }
    assert not issubclass(BatchPublic, Batch) and not issubclass(BatchPlan, Batch)


def test_batch_statuses_keep_their_stored_values() -> None:
    from storage.models import BatchStatus

    assert [s.value for s in BatchStatus] == ["queued", "running", "done", "cancelled", "failed"]
    assert {"done", "cancelled", "failed"} == BatchStatus.FINISHED
    assert {"queued", "running", "done", "cancelled", "failed"} == BatchStatus.ALL
    # Rows hand back plain strings: they must find themselves in the sets and equal the members.
    assert "cancelled" in BatchStatus.FINISHED and "running" not in BatchStatus.FINISHED
    assert BatchStatus.DONE in BatchStatus.FINISHED and BatchStatus("done") == "done"
    assert f"{BatchStatus.RUNNING}" == "running"
