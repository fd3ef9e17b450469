"""Chunk deliveries in distributed mode without Celery: leases, attempt counts, giving up, the
soft time limit kept out of writes, and the sweep queueing lost ranges again. Against a real
(private) redis-server and a SQLite file."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest
from service_fixtures import RedisServer, redis_server
from sqlalchemy import select

import workers.play
from storage import crud
from storage.db import get_engine
from storage.models import Batch, BatchStatus
from storage.settings import Settings
from workers import attempts, dispatch
from workers.batches import plan_batch
from workers.delivery import deliver_chunk

__all__ = ["redis_server"]


@pytest.fixture
def service(
    migrated_sqlite_url: str, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Settings]:
    """Settings that point at a fresh SQLite file and the private Redis, passed to every call
    as a worker passes its own. The environment names another broker and other limits: a
    function that read it instead would fail or queue the wrong number of chunks."""
    from storage.settings import get_settings

    monkeypatch.setenv("DATABASE_URL", "sqlite:///nowhere/at/all.db")
    monkeypatch.setenv("BROKER_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("MAX_CHUNKS_IN_FLIGHT", "64")
    get_settings.cache_clear()
    settings = Settings(
        database_url=migrated_sqlite_url,
        broker_url=redis_server.url,
        max_chunks_in_flight=4,
        stall_seconds=60,
    )
    dispatch.broker(settings).flushdb()
    yield settings
    get_settings.cache_clear()


def new_batch(url: str, matches: int, chunk_size: int | None) -> Batch:
    plan = plan_batch(
        settings=Settings(),
        game="alquerque",
        players=None,
        options={},
        agents=["random", "random"],
        matches=matches,
        seed=9,
        seat_policy=None,
        chunk_size=chunk_size,
        max_plies=None,
    )
    return crud.create_batch(get_engine(url), plan=plan)


def handed_out(settings: Settings, batch_id: str) -> dict[int, int]:
    raw = dispatch.broker(settings).hgetall(dispatch.ranges_key(batch_id))
    return {int(a): int(b) for a, b in raw.items()}


def matches_of(url: str, batch_id: str) -> list[tuple[int, bool, str, str | None]]:
    with get_engine(url).connect() as conn:
        rows = conn.execute(
            select(crud.MATCH.c.match_index, crud.MATCH.c.ok, crud.MATCH.c.ended_by)
            .add_columns(crud.MATCH.c.error)
            .where(crud.MATCH.c.batch_id == batch_id)
            .order_by(crud.MATCH.c.match_index)
        )
        return [(int(i), bool(ok), str(e), err) for i, ok, e, err in rows]


def test_the_first_chunk_measures_then_the_pipeline_fills(service: Settings) -> None:
    batch = new_batch(service.database_url, matches=500, chunk_size=None)
    engine = get_engine(service.database_url)
    assert dispatch.open_batch(engine, batch, service) == [(0, 1)]
    assert dispatch.open_batch(engine, batch, service) == []  # a second start task changes nothing
    delivery = deliver_chunk(batch.id, 0, 1, settings=service)
    assert delivery.attempt == 1 and delivery.outcome is not None and delivery.outcome.written
    queued = sorted(handed_out(service, batch.id).items())
    assert 0 not in dict(queued)  # written, so forgotten
    # Four chunks (MAX_CHUNKS_IN_FLIGHT) of the size the first chunk measured, one after another.
    sizes = {b - a for a, b in queued}
    assert len(queued) == 4 and len(sizes) == 1
    size = sizes.pop()
    assert [a for a, _b in queued] == [1 + k * size for k in range(4)]
    stored = dispatch.broker(service).get(dispatch.size_key(batch.id))
    assert stored is not None and int(stored) == queued[0][1] - queued[0][0]
    # The next chunk written queues exactly one more, right after the cursor.
    a, b = queued[0]
    deliver_chunk(batch.id, a, b, settings=service)
    after = handed_out(service, batch.id)
    assert a not in after and len(after) == 4
    assert max(after) == queued[-1][1]


def test_a_held_lease_makes_other_deliveries_skip(service: Settings) -> None:
    batch = new_batch(service.database_url, matches=6, chunk_size=3)
    lease = attempts.acquire(dispatch.broker(service), batch.id, 0)
    assert lease is not None and lease.attempt == 1
    try:
        skipped = deliver_chunk(batch.id, 0, 3, settings=service)
        assert skipped.outcome is None
        assert matches_of(service.database_url, batch.id) == []
    finally:
        lease.release()
    played = deliver_chunk(batch.id, 0, 3, settings=service)
    assert played.attempt == 2 and played.outcome is not None and played.outcome.written
    assert [i for i, *_ in matches_of(service.database_url, batch.id)] == [0, 1, 2]


def test_past_max_attempts_a_chunk_is_stored_failed_without_playing(
    service: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = new_batch(service.database_url, matches=4, chunk_size=4)
    client = dispatch.broker(service)
    # Three deliveries took the lease and died without a word (SIGKILL, hard time limit).
    client.hset(attempts.attempts_key(batch.id), "0", 3)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a chunk given up must not be played")

    monkeypatch.setattr(workers.play, "play_match", never)
    delivery = deliver_chunk(batch.id, 0, 4, settings=service)
    assert delivery.attempt == 4
    rows = matches_of(service.database_url, batch.id)
    assert [(i, ok, ended) for i, ok, ended, _e in rows] == [
        (i, False, "abandoned") for i in range(4)
    ]
    assert all("3 times without a result" in str(e) for *_, e in rows)
    stored = crud.get_batch(get_engine(service.database_url), batch.id)
    assert stored is not None and stored.status == BatchStatus.FAILED
    assert "abandoned" in str(stored.error)


def test_a_chunk_whose_worker_died_twice_is_given_up_on_the_third_delivery(
    service: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default two deliveries that ended without a result (killed at the hard time limit)
    are all a chunk gets: the third stores its matches as failed instead of playing again."""
    batch = new_batch(service.database_url, matches=2, chunk_size=2)
    dispatch.broker(service).hset(attempts.attempts_key(batch.id), "0", 2)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a chunk given up must not be played")

    monkeypatch.setattr(workers.play, "play_match", never)
    delivery = deliver_chunk(batch.id, 0, 2, settings=service)
    assert delivery.attempt == 3
    rows = matches_of(service.database_url, batch.id)
    assert [(ok, ended) for _i, ok, ended, _e in rows] == [(False, "abandoned")] * 2
    assert all("2 times without a result" in str(e) for *_, e in rows)


def test_the_soft_time_limit_does_not_undo_a_chunk_being_stored(
    service: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's soft time limit signal arrives in the middle of the write: held off."""
    from billiard.pool import soft_timeout_sighandler

    batch = new_batch(service.database_url, matches=3, chunk_size=3)
    real_write = crud.write_chunk

    def write_when_the_limit_passes(*args: object, **kwargs: object) -> bool:
        os.kill(os.getpid(), signal.SIGUSR1)
        return real_write(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(crud, "write_chunk", write_when_the_limit_passes)
    previous = signal.signal(signal.SIGUSR1, soft_timeout_sighandler)
    try:
        delivery = deliver_chunk(batch.id, 0, 3, settings=service)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert delivery.outcome is not None and delivery.outcome.written
    assert [ok for _i, ok, *_ in matches_of(service.database_url, batch.id)] == [True, True, True]


def test_the_soft_time_limit_raises_again_once_the_write_is_done() -> None:
    from billiard.exceptions import SoftTimeLimitExceeded
    from billiard.pool import soft_timeout_sighandler

    from workers.timelimit import soft_limit_held

    previous = signal.signal(signal.SIGUSR1, soft_timeout_sighandler)
    try:
        with soft_limit_held() as arrived:
            os.kill(os.getpid(), signal.SIGUSR1)
        assert arrived == [True]
        with pytest.raises(SoftTimeLimitExceeded):
            os.kill(os.getpid(), signal.SIGUSR1)
    finally:
        signal.signal(signal.SIGUSR1, previous)


def take_and_die(settings: Settings, batch_id: str, starts: list[int]) -> None:
    """Deliveries take these chunks' leases and their workers die: the leases lapse."""
    client = dispatch.broker(settings)
    for start in starts:
        lease = attempts.acquire(client, batch_id, start)
        assert lease is not None
        lease.release()  # as it lapses once nothing renews it: free, the attempt counted


def sweep_again(
    engine: object, settings: Settings, batch: Batch, *, after: float = 0.0
) -> list[tuple[int, int]]:
    """One more sweep, an hour from now (past the batch's stall time) and ``after`` seconds."""
    from datetime import UTC, datetime, timedelta

    dispatch.broker(settings).delete(dispatch.sweep_key(batch.id))
    later = datetime.now(UTC) + timedelta(hours=1, seconds=after)
    return dispatch.sweep(engine, batch, settings=settings, now=later)  # type: ignore[arg-type]


def test_ranges_waiting_in_the_queue_or_being_played_are_not_stalled(service: Settings) -> None:
    """Four chunks queued behind other work, for many stall periods: none is queued again.
    One is taken and played (its lease held) past the stall time: still none. Its worker dies:
    that one, and only that one, is queued again, once."""
    engine = get_engine(service.database_url)
    batch = new_batch(service.database_url, matches=40, chunk_size=10)
    queued = dispatch.open_batch(engine, batch, service)
    assert queued == [(0, 10), (10, 20), (20, 30), (30, 40)]
    for _ in range(5):
        assert sweep_again(engine, service, batch) == []
    client = dispatch.broker(service)
    lease = attempts.acquire(client, batch.id, 10)
    assert lease is not None
    try:
        for _ in range(3):
            assert sweep_again(engine, service, batch) == []
    finally:
        lease.release()  # its worker is gone
    assert sweep_again(engine, service, batch) == [(10, 20)]
    # Queued again, it waits in the queue like the others: not queued a third time.
    for _ in range(3):
        assert sweep_again(engine, service, batch) == []
    # A delivery takes it and dies too: it is queued again once more.
    take_and_die(service, batch.id, [10])
    assert sweep_again(engine, service, batch) == [(10, 20)]


def test_a_range_written_while_the_sweep_looks_is_not_queued_again(
    service: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep reads the missing ranges from the database, then the broker's leases. A worker
    that writes its chunk and lets go of its lease in between left a range that looks taken by
    a worker gone: it is read again, found written, and not queued a second time."""
    engine = get_engine(service.database_url)
    batch = new_batch(service.database_url, matches=20, chunk_size=10)
    dispatch.open_batch(engine, batch, service)
    read_ranges = dispatch._below_cursor

    def worker_finishes_first(*args: object, **kwargs: object) -> object:
        deliver_chunk(batch.id, 0, 10, settings=service)
        return read_ranges(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(dispatch, "_below_cursor", worker_finishes_first)
    assert sweep_again(engine, service, batch) == []
    counts = dispatch.broker(service).hgetall(dispatch.deliveries_key(batch.id))
    assert {int(a): int(n) for a, n in counts.items()} == {0: 1}


def test_untaken_ranges_of_an_empty_queue_come_back_a_lease_length_later(
    service: Settings,
) -> None:
    """The queue lost the chunk messages (purged): nothing waits, nothing was taken. The sweeps
    only note it until it has lasted as long as a lease (a worker may be between the queue and
    the lease); the next one queues them again, and they are then waiting, not lost."""
    engine = get_engine(service.database_url)
    batch = new_batch(service.database_url, matches=20, chunk_size=10)
    dispatch.open_batch(engine, batch, service)
    assert dispatch.celery_for(service).control.purge() == 2
    assert dispatch.chunks_waiting(service) == 0
    lease = service.chunk_lease_seconds
    assert sweep_again(engine, service, batch) == []
    assert sweep_again(engine, service, batch, after=1.0) == []
    assert sweep_again(engine, service, batch, after=lease - 0.5) == []
    assert sweep_again(engine, service, batch, after=lease + 0.5) == [(0, 10), (10, 20)]
    assert dispatch.chunks_waiting(service) == 2
    assert sweep_again(engine, service, batch, after=3 * lease) == []
    # Each delivery is counted, the repeat of a written chunk too.
    deliver_chunk(batch.id, 0, 10, settings=service)
    deliver_chunk(batch.id, 0, 10, settings=service)
    counts = dispatch.broker(service).hgetall(dispatch.deliveries_key(batch.id))
    assert {int(a): int(n) for a, n in counts.items()} == {0: 2}


def test_the_stall_rule_by_case() -> None:
    handed = {0: 10, 10: 20, 20: 30, 30: 40, 40: 50}
    below = [(0, 10), (10, 20), (20, 30), (30, 40), (40, 50), (50, 55)]  # 50: no record

    def rule(queue_empty: bool, idle_since: dict[int, float]) -> tuple[list, dict]:
        return dispatch.stalled(
            below,
            handed,
            taken={0, 10},
            held={10, 20},
            queue_empty=queue_empty,
            idle_since=idle_since,
            now=120.0,
            grace=10.0,
        )

    assert rule(False, {30: 100.0}) == ([(0, 10), (50, 55)], {})
    # 30 has stood idle for longer than the grace, 40 only from now on.
    assert rule(True, {30: 100.0}) == ([(0, 10), (30, 40), (50, 55)], {40: 120.0})
    # Idle for less than the grace: still only noted, since when it was first seen so.
    assert rule(True, {30: 115.0}) == ([(0, 10), (50, 55)], {30: 115.0, 40: 120.0})


def test_the_sweep_queues_lost_ranges_as_they_were(service: Settings) -> None:
    from datetime import UTC, datetime, timedelta

    engine = get_engine(service.database_url)
    batch = new_batch(service.database_url, matches=500, chunk_size=None)
    dispatch.open_batch(engine, batch, service)
    deliver_chunk(batch.id, 0, 1, settings=service)
    lost = sorted(handed_out(service, batch.id).items())
    a, b = lost[1]
    deliver_chunk(
        batch.id, a, b, settings=service
    )  # one of them does get written (and queues one more)
    # The others are taken by workers that die: their leases lapse, their attempts stay.
    expected = sorted(set(handed_out(service, batch.id).items()))
    take_and_die(service, batch.id, [s for s, _e in expected])
    later = datetime.now(UTC) + timedelta(hours=1)
    batch = crud.get_batch(engine, batch.id)
    assert batch is not None
    requeued = dispatch.sweep(engine, batch, settings=service, now=later)
    assert sorted(requeued) == expected and (a, b) not in requeued
    assert (
        dispatch.sweep(engine, batch, settings=service, now=later) == []
    )  # one sweep per stall period

    # Redis restarted empty: the cursor, the ranges and the sizes are gone.
    dispatch.broker(service).flushdb()
    written = crud.written_ranges(engine, batch.id)
    resumed = dispatch.sweep(engine, batch, settings=service, now=later)
    gaps_below = [r for r in crud.gaps(engine, batch) if r[1] <= written[-1][1]]
    assert [r for r in resumed if r[1] <= written[-1][1]] == gaps_below
    assert int(dispatch.broker(service).get(dispatch.cursor_key(batch.id)) or 0) >= written[-1][1]
