"""Databases made by the first release of migration 0001 upgrade to the schema of a fresh one.

That first 0001 (``tests/data/migration_0001_original.py``, recovered verbatim from git:
``git show 184728f^:storage/migrations/versions/0001_initial.py``) gave ``match`` and
``seat_result`` foreign keys to ``batch``; the shipped 0001 was later edited to drop them, so
migration 0002 drops them where they exist.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from alembic.autogenerate import compare_metadata
from alembic.operations import Operations
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from repo_paths import DATA
from server_support import throwaway_pg_database
from sqlalchemy import MetaData, inspect, text

from storage import db
from storage.models import SQLModel

ORIGINAL_0001 = DATA / "migration_0001_original.py"


def original_0001() -> ModuleType:
    spec = importlib.util.spec_from_file_location("original_0001", ORIGINAL_0001)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def create_with_original_0001(url: str) -> None:
    """Run the first 0001 on an empty database and record it as applied, as it was shipped."""
    module = original_0001()
    with db.get_engine(url).begin() as conn:
        context = MigrationContext.configure(conn)
        with Operations.context(context):
            module.upgrade()
        context.stamp(ScriptDirectory.from_config(db.alembic_config()), module.revision)


def differences(url: str, metadata: MetaData) -> list:
    with db.get_engine(url).connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(context, metadata))


def reflected(url: str) -> MetaData:
    metadata = MetaData()
    metadata.reflect(bind=db.get_engine(url))
    metadata.remove(metadata.tables["alembic_version"])
    return metadata


def batch_keys(url: str) -> dict[str, int]:
    found = inspect(db.get_engine(url))
    return {
        table: sum(1 for k in found.get_foreign_keys(table) if k["referred_table"] == "batch")
        for table in ("chunk", "match", "seat_result")
    }


@pytest.fixture(params=["sqlite", "postgresql"])
def two_databases(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """Two empty databases of one dialect: (legacy, fresh)."""
    if request.param == "sqlite":
        urls = (f"sqlite:///{tmp_path}/legacy.db", f"sqlite:///{tmp_path}/fresh.db")
        yield urls
        for url in urls:
            db.dispose_engine(url)
        return
    with throwaway_pg_database() as legacy, throwaway_pg_database() as fresh:
        yield legacy, fresh


def test_the_original_0001_made_the_keys_the_models_no_longer_have(two_databases) -> None:
    legacy, _ = two_databases
    create_with_original_0001(legacy)
    assert db.current_revision(legacy) == "0001_initial"
    assert batch_keys(legacy) == {"chunk": 1, "match": 1, "seat_result": 1}


def test_a_database_from_the_original_0001_upgrades_to_a_fresh_schema(two_databases) -> None:
    legacy, fresh = two_databases
    create_with_original_0001(legacy)
    with db.get_engine(legacy).begin() as conn:  # rows survive the upgrade's table rebuilds
        conn.execute(
            text(
                "INSERT INTO batch (id, created_at, game, players, options, agents, labels, "
                "matches, seed, seat_policy, chunk_size, max_plies, status, stopped_early) "
                "VALUES ('b1', CURRENT_TIMESTAMP, 'alquerque', 2, '{}', '[]', '[]', 1, 5, "
                "'rotate', 1, 10, 'done', false)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO match (batch_id, match_index, seed, ok, plies, ended_by, duration, "
                "moves, stats, error) VALUES ('b1', 0, 9, true, 3, 'normal', 0.1, 'a b c', '{}', "
                "NULL)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO seat_result (batch_id, match_index, seat, agent, agent_index, "
                "points, win_share, rank) VALUES ('b1', 0, 0, 'random', 0, 1, 1, 1), "
                "('b1', 0, 1, 'random#2', 1, 0, 0, 2)"
            )
        )
    db.upgrade(legacy)
    db.upgrade(fresh)
    assert db.current_revision(legacy) == db.current_revision(fresh) == db.head_revision()
    assert batch_keys(legacy) == batch_keys(fresh) == {"chunk": 1, "match": 0, "seat_result": 0}
    assert differences(legacy, reflected(fresh)) == []
    assert differences(fresh, reflected(legacy)) == []
    assert differences(legacy, SQLModel.metadata) == []
    with db.get_engine(legacy).connect() as conn:
        assert conn.execute(text("SELECT moves FROM match")).scalar_one() == "a b c"
        assert conn.execute(text("SELECT count(*) FROM seat_result")).scalar_one() == 2
    inspector = inspect(db.get_engine(legacy))
    assert {i["name"] for i in inspector.get_indexes("seat_result")} == {
        "ix_seat_result_batch_agent"
    }


def test_without_0002_the_legacy_keys_would_show(two_databases) -> None:
    """The comparison above can fail: at 0001 the legacy database differs from the models."""
    legacy, _ = two_databases
    create_with_original_0001(legacy)
    kinds = {d[0] for d in differences(legacy, SQLModel.metadata) if isinstance(d, tuple)}
    assert "remove_fk" in kinds
