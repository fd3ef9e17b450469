"""The local runner and the chunk function: pools, resume, failures, Ctrl-C."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys

import pytest
from sqlalchemy import func, select
from storage_rows import wait_for_a_chunk

import workers.play
from engines.core import match_seed
from storage import crud
from storage.db import get_engine
from storage.models import BatchStatus
from storage.settings import Settings
from workers.batches import plan_batch
from workers.chunks import run_chunk
from workers.lifecycle import after_chunk
from workers.local import run_local


def new_batch(url: str, matches: int = 20, chunk_size: int | None = 3, **overrides: object) -> str:
    args: dict = {
        "game": "alquerque",
        "players": None,
        "options": {},
        "agents": ["random", "random"],
        "matches": matches,
        "seed": 5,
        "seat_policy": "rotate",
        "chunk_size": chunk_size,
        "max_plies": None,
    }
    args.update(overrides)
    return crud.create_batch(get_engine(url), plan=plan_batch(settings=Settings(), **args)).id


def stored_indices(url: str, batch_id: str) -> list[int]:
    with get_engine(url).connect() as conn:
        return list(
            conn.execute(
                select(crud.MATCH.c.match_index)
                .where(crud.MATCH.c.batch_id == batch_id)
                .order_by(crud.MATCH.c.match_index)
            ).scalars()
        )


def seat_rows(url: str, batch_id: str) -> int:
    with get_engine(url).connect() as conn:
        return conn.execute(
            select(func.count()).where(crud.SEAT_RESULT.c.batch_id == batch_id)
        ).scalar_one()


def test_pool_plays_every_match_exactly_once(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    batch_id = new_batch(url, matches=20, chunk_size=3)
    seen: list[crud.Progress] = []
    final = run_local(
        batch_id, workers=2, settings=Settings(database_url=url), progress=seen.append
    )
    assert (final.done, final.failed, final.status) == (20, 0, BatchStatus.DONE)
    assert final.chunks_written == final.chunks_total == 7
    assert stored_indices(url, batch_id) == list(range(20))
    assert seat_rows(url, batch_id) == 40
    assert seen[0].finished_matches == 0 and seen[-1].finished_matches == 20
    # Running a finished batch again plays nothing.
    assert run_local(batch_id, workers=2, settings=Settings(database_url=url)).done == 20


def chunk_rows(url: str, batch_id: str) -> list[tuple[int, int, int, float]]:
    """(start, stop, matches stored, seconds of play) of every chunk row, in order."""
    with get_engine(url).connect() as conn:
        rows = conn.execute(
            select(crud.CHUNK.c.start, crud.CHUNK.c.stop, crud.CHUNK.c.done, crud.CHUNK.c.duration)
            .where(crud.CHUNK.c.batch_id == batch_id)
            .order_by(crud.CHUNK.c.start)
        )
        return [(int(a), int(b), int(n), float(d)) for a, b, n, d in rows]


def test_chunks_without_a_size_follow_the_measured_work(migrated_sqlite_url: str) -> None:
    """One process: each chunk is sized from the chunks before it, as docs/batches.md states:
    about CHUNK_SECONDS of work at the rate measured so far, at most 8 times the matches
    measured."""
    url = migrated_sqlite_url
    batch_id = new_batch(url, matches=400, chunk_size=None)
    settings = Settings(database_url=url, chunk_seconds=0.5)
    final = run_local(batch_id, workers=1, settings=settings)
    assert (final.done, final.status) == (400, BatchStatus.DONE)
    assert stored_indices(url, batch_id) == list(range(400))
    rows = chunk_rows(url, batch_id)
    assert rows[0][:2] == (0, 1)  # the measuring chunk: one match
    played, seconds = 0, 0.0
    for (_a, _b, n, d), (start, stop, _n, _d) in itertools.pairwise(rows):
        played, seconds = played + n, seconds + d
        expected = max(1, min(int(0.5 * played / seconds), 8 * played, 5000))
        assert stop - start == min(expected, 400 - start), (start, stop, played, seconds)
    assert len({b - a for a, b, _n, _d in rows}) > 2  # sizes changed as the batch was measured


def test_a_pool_with_measured_sizes_stores_every_index_once(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    batch_id = new_batch(url, matches=300, chunk_size=None)
    final = run_local(batch_id, workers=2, settings=Settings(database_url=url))
    assert (final.done, final.failed, final.status) == (300, 0, BatchStatus.DONE)
    assert stored_indices(url, batch_id) == list(range(300))
    rows = chunk_rows(url, batch_id)
    assert rows[0][:2] == (0, 1)
    assert [a for a, _b, _n, _d in rows[1:]] == [b for _a, b, _n, _d in rows[:-1]]  # a tiling
    assert sum(n for *_, n, _d in rows) == 300


def test_resume_after_an_interruption_plays_only_the_missing_matches(
    migrated_sqlite_url: str,
) -> None:
    url = migrated_sqlite_url
    batch_id = new_batch(url, matches=14, chunk_size=3)
    calls = []

    def interrupt_after_two_chunks(p: crud.Progress) -> None:
        calls.append(p)
        if p.chunks_written == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_local(
            batch_id,
            workers=1,
            settings=Settings(database_url=url),
            progress=interrupt_after_two_chunks,
        )
    engine = get_engine(url)
    batch = crud.get_batch(engine, batch_id)
    assert batch is not None and batch.status == BatchStatus.QUEUED
    assert stored_indices(url, batch_id) == list(range(6))
    assert crud.missing_chunks(engine, batch) == [(6, 9), (9, 12), (12, 14)]
    final = run_local(batch_id, workers=2, settings=Settings(database_url=url))
    assert (final.done, final.status) == (14, BatchStatus.DONE)
    assert stored_indices(url, batch_id) == list(range(14))


def test_a_failed_match_is_recorded_and_the_batch_completes(
    migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = migrated_sqlite_url
    batch_id = new_batch(url, matches=8, chunk_size=3)
    bad_seed = match_seed(5, 4)
    real = workers.play.play_match

    def flaky(game, agents, seed, *args, **kwargs):  # type: ignore[no-untyped-def]
        if seed == bad_seed:
            raise ValueError("no legal move found")
        return real(game, agents, seed, *args, **kwargs)

    monkeypatch.setattr(workers.play, "play_match", flaky)
    final = run_local(batch_id, workers=1, settings=Settings(database_url=url))
    assert (final.done, final.failed, final.status) == (7, 1, BatchStatus.DONE)
    assert stored_indices(url, batch_id) == list(range(8))
    assert crud.first_error(get_engine(url), batch_id) == "ValueError: no legal move found"
    assert seat_rows(url, batch_id) == 14


def test_a_batch_where_every_match_fails_is_failed(
    migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = migrated_sqlite_url
    batch_id = new_batch(url, matches=4, chunk_size=2)

    def broken(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("rules bug")

    monkeypatch.setattr(workers.play, "play_match", broken)
    final = run_local(batch_id, workers=1, settings=Settings(database_url=url))
    assert (final.done, final.failed, final.status) == (0, 4, BatchStatus.FAILED)
    batch = crud.get_batch(get_engine(url), batch_id)
    assert batch is not None and batch.error == "RuntimeError: rules bug"


def test_run_chunk_writes_once_on_both_dialects(db_url: str) -> None:
    batch_id = new_batch(db_url, matches=5, chunk_size=3)
    first = run_chunk(batch_id, 0, 3, database_url=db_url, worker="test")
    assert (first.done, first.failed, first.skipped, first.written) == (3, 0, False, True)
    assert first.batch_status == BatchStatus.RUNNING
    again = run_chunk(batch_id, 0, 3, database_url=db_url)
    assert again.skipped and not again.written
    last = run_chunk(batch_id, 3, 5, database_url=db_url)
    assert last.batch_status == BatchStatus.DONE
    assert stored_indices(db_url, batch_id) == list(range(5))
    with pytest.raises(ValueError, match="outside batch"):
        run_chunk(batch_id, 3, 9, database_url=db_url)
    with pytest.raises(LookupError):
        run_chunk("missing", 0, 1, database_url=db_url)


def test_run_chunk_skips_a_cancelled_batch(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    batch_id = new_batch(url, matches=5, chunk_size=3)
    crud.cancel_batch(get_engine(url), batch_id)
    outcome = run_chunk(batch_id, 0, 3, database_url=url)
    assert outcome.skipped and outcome.batch_status == BatchStatus.CANCELLED
    assert stored_indices(url, batch_id) == []
    assert run_local(batch_id, settings=Settings(database_url=url)).done == 0


def test_the_worker_path_takes_full_ids_only(migrated_sqlite_url: str) -> None:
    """A prefix is resolved at the edges; past them it names no batch, so nothing is played."""
    url = migrated_sqlite_url
    batch_id = new_batch(url, matches=4, chunk_size=2)
    prefix = batch_id[:6]
    with pytest.raises(crud.NotFound):
        run_chunk(prefix, 0, 2, database_url=url)
    with pytest.raises(crud.NotFound):
        run_local(prefix, settings=Settings(database_url=url))
    with pytest.raises(crud.NotFound):
        after_chunk(get_engine(url), prefix)
    assert stored_indices(url, batch_id) == []
    assert crud.progress(get_engine(url), batch_id).status == BatchStatus.QUEUED


CLI = [sys.executable, "-c", "from api.cli import main; main()"]


@pytest.mark.slow
@pytest.mark.parametrize("started", ["from a terminal", "as a script's background job"])
def test_ctrl_c_stops_cleanly_and_resume_completes(migrated_sqlite_url: str, started: str) -> None:
    """Ctrl-C lands as soon as the first chunk is stored, while most of the batch is still to
    play: 16 one-match chunks of about 0.3 s each on two processes cannot all be written in
    the moment between seeing that chunk and the signal. A shell's background job starts with
    SIGINT ignored (``trap '' INT`` does the same), and ``kill -INT`` must still stop it."""
    url = migrated_sqlite_url
    matches = 16
    ignore = ["sh", "-c", 'trap "" INT; exec "$@"', "sh"] if started != "from a terminal" else []
    command = [
        *ignore,
        *CLI,
        "run",
        "alquerque",
        "--agents",
        "mcts:iterations=1000,backend=python,random",
        "--matches",
        str(matches),
        "--seed",
        "3",
        "--chunk-size",
        "1",
        "--workers",
        "2",
        "--db",
        url,
    ]
    # A new session stands in for the terminal's process group, which Ctrl-C signals whole.
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    engine = get_engine(url)
    written = wait_for_a_chunk(engine, proc)
    assert written >= 1 and proc.poll() is None, "no chunk was stored while the batch ran"
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "playtester resume" in stderr
    batch = crud.list_batches(engine)[0]
    assert batch.status == BatchStatus.QUEUED
    assert len(stored_indices(url, batch.id)) < matches

    resumed = subprocess.run(
        [*CLI, "resume", batch.id[:6], "--db", url], capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    assert stored_indices(url, batch.id) == list(range(matches))
    assert crud.progress(engine, batch.id).status == BatchStatus.DONE
