"""Rate and ETA count from the current run: a batch resumed today is not measured from a start
days ago."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from storage import crud
from storage.db import get_engine
from storage.models import BatchStatus
from storage.settings import Settings
from workers.batches import plan_batch
from workers.chunks import run_chunk


def new_batch(url: str, matches: int = 12, chunk_size: int = 3) -> str:
    plan = plan_batch(
        settings=Settings(),
        game="alquerque",
        players=None,
        options={},
        agents=["random", "random"],
        matches=matches,
        seed=5,
        seat_policy="rotate",
        chunk_size=chunk_size,
        max_plies=None,
    )
    return crud.create_batch(get_engine(url), plan=plan).id


def aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def run_columns(url: str, batch_id: str) -> tuple[datetime, int]:
    with get_engine(url).connect() as conn:
        row = conn.execute(
            select(crud.BATCH.c.run_started_at, crud.BATCH.c.run_start_finished).where(
                crud.BATCH.c.id == batch_id
            )
        ).one()
    return aware(row[0]), row[1]


def shift_back(url: str, batch_id: str, by: timedelta) -> None:
    """Pretend everything so far happened ``by`` earlier."""
    t = crud.BATCH
    with get_engine(url).begin() as conn:
        started, run_started = conn.execute(
            select(t.c.started_at, t.c.run_started_at).where(t.c.id == batch_id)
        ).one()
        conn.execute(
            update(t)
            .where(t.c.id == batch_id)
            .values(started_at=aware(started) - by, run_started_at=aware(run_started) - by)
        )


def test_rate_and_eta_of_a_resumed_batch_count_from_the_resume(db_url: str) -> None:
    engine = get_engine(db_url)
    batch_id = new_batch(db_url)
    run_chunk(batch_id, 0, 3, database_url=db_url)
    run_chunk(batch_id, 3, 6, database_url=db_url)
    first_start, base = run_columns(db_url, batch_id)
    assert base == 0
    # Interrupted (as run_local leaves it), and the first run was a day ago.
    crud.set_status(engine, batch_id, BatchStatus.QUEUED, only_from={BatchStatus.RUNNING})
    shift_back(db_url, batch_id, timedelta(days=1))
    before_resume = datetime.now(UTC)
    run_chunk(batch_id, 6, 9, database_url=db_url)  # the resume: queued -> running again
    resumed_at, base = run_columns(db_url, batch_id)
    assert base == 6 and resumed_at >= before_resume - timedelta(seconds=1)
    batch = crud.get_batch(engine, batch_id)
    assert batch is not None and aware(batch.started_at) < first_start  # the first start stays

    # 10 s into the resumed run, 3 matches of it played and 3 of 12 left.
    p = crud.progress(engine, batch_id, now=resumed_at + timedelta(seconds=10))
    assert p.finished_matches == 9
    assert p.rate == pytest.approx(3 / 10)
    assert p.eta_seconds == pytest.approx(3 / (3 / 10))


def test_a_second_chunk_of_a_run_does_not_restart_the_clock(db_url: str) -> None:
    engine = get_engine(db_url)
    batch_id = new_batch(db_url)
    run_chunk(batch_id, 0, 3, database_url=db_url)
    started, base = run_columns(db_url, batch_id)
    crud.set_status(engine, batch_id, BatchStatus.RUNNING)  # already running: no new run
    run_chunk(batch_id, 3, 6, database_url=db_url)
    assert run_columns(db_url, batch_id) == (started, base) and base == 0
    p = crud.progress(engine, batch_id, now=started + timedelta(seconds=4))
    assert p.rate == pytest.approx(6 / 4)


def test_batches_started_before_the_run_columns_count_from_their_first_start(
    migrated_sqlite_url: str,
) -> None:
    url = migrated_sqlite_url
    engine = get_engine(url)
    batch_id = new_batch(url)
    run_chunk(batch_id, 0, 3, database_url=url)
    t = crud.BATCH
    with engine.begin() as conn:
        conn.execute(
            update(t).where(t.c.id == batch_id).values(run_started_at=None, run_start_finished=None)
        )
    batch = crud.get_batch(engine, batch_id)
    assert batch is not None and batch.started_at is not None
    p = crud.progress(engine, batch_id, now=aware(batch.started_at) + timedelta(seconds=6))
    assert p.rate == pytest.approx(3 / 6)
