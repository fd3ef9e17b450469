"""Over-long matches against the real service: the soft time limit of a prefork worker ends
them, a chunk whose worker keeps dying is given up after ``MAX_CHUNK_ATTEMPTS``, and in both
cases the batch ends and the batch queued behind it completes."""

from __future__ import annotations

from datetime import datetime

import pytest
from service_fixtures import Service, pg_cluster, redis_server, service_factory, wait_for
from sqlalchemy import text

__all__ = ["pg_cluster", "redis_server", "service_factory"]

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(400)]

OVER_LONG = {
    "game": "alquerque",
    # The Python search: a compiled search only sees the soft time limit when its move ends.
    "agents": [{"name": "mcts", "iterations": 1_000_000, "backend": "python"}],
    "seed": 3,
}
"""About ten minutes a move on this machine: no match of it ever ends by itself."""
QUICK = {"game": "alquerque", "agents": ["random", "random"], "seed": 4}
SOFT, HARD, STALL, ATTEMPTS = 2, 4, 3, 3
LEASE = 3
"""Seconds a dead worker's chunk lease outlives it (``CHUNK_LEASE_SECONDS``): each of the
kills below waits that out, ten seconds at the default."""


def stored_matches(service: Service, batch_id: str) -> list[tuple[int, bool, str, str]]:
    from storage.db import get_engine

    with get_engine(service.database_url).connect() as conn:
        rows = conn.execute(
            text(
                "SELECT match_index, ok, ended_by, error FROM match WHERE batch_id = :b "
                "ORDER BY match_index"
            ),
            {"b": batch_id},
        )
        return [(int(i), bool(ok), str(e), str(err)) for i, ok, e, err in rows]


def seconds_running(batch: dict) -> float:
    started = datetime.fromisoformat(batch["started_at"])
    finished = datetime.fromisoformat(batch["finished_at"])
    return (finished - started).total_seconds()


def test_the_soft_time_limit_ends_an_over_long_match_and_the_queue_moves_on(
    service_factory,
) -> None:
    service = service_factory(
        workers=1,
        pool="prefork",
        TASK_SOFT_TIME_LIMIT=str(SOFT),
        TASK_TIME_LIMIT=str(HARD),
        STALL_SECONDS=str(STALL),
        MAX_AGENT_ITERATIONS="1000000",
    )
    slow = service.submit(**OVER_LONG, matches=2, chunk_size=1)
    behind = service.submit(**QUICK, matches=40, chunk_size=10)

    ended = service.wait_finished(slow["id"], timeout=120)
    assert ended["status"] == "failed"  # every match of it failed
    assert "time limit" in ended["error"]
    assert (ended["progress"]["done"], ended["progress"]["failed"]) == (0, 2)
    assert seconds_running(ended) <= ATTEMPTS * HARD + STALL
    rows = stored_matches(service, slow["id"])
    assert [(i, ok, how) for i, ok, how, _e in rows] == [(i, False, "time_limit") for i in (0, 1)]
    assert all("soft time limit" in error for *_, error in rows)

    completed = service.wait_finished(behind["id"], timeout=120)
    assert completed["status"] == "done" and completed["progress"]["done"] == 40
    assert service.stored_indices(behind["id"]) == list(range(40))


def test_a_chunk_whose_worker_keeps_dying_is_given_up_and_its_batch_ends(
    service_factory,
) -> None:
    """Solo pool, no time limit: the worker is killed with SIGKILL in the middle of the chunk,
    three times. The attempt count is in Redis, so it survives; the fourth delivery stores
    the chunk's matches as failed without playing them."""
    from workers import attempts
    from workers.dispatch import redis_client

    service = service_factory(
        workers=1,
        STALL_SECONDS=str(STALL),
        MAX_AGENT_ITERATIONS="1000000",
        MAX_CHUNK_ATTEMPTS=str(ATTEMPTS),
        CHUNK_LEASE_SECONDS=str(LEASE),
    )
    doomed = service.submit(**OVER_LONG, matches=2, chunk_size=2)
    broker = redis_client(service.redis.url)
    for attempt in range(1, ATTEMPTS + 1):
        wait_for(
            lambda n=attempt: attempts.attempts(broker, doomed["id"], 0) >= n,
            120,
            f"delivery {attempt} of the chunk",
        )
        service.workers.kill(0)
        service.workers.start(0)
    behind = service.submit(**QUICK, matches=30, chunk_size=10)

    ended = service.wait_finished(doomed["id"], timeout=150)
    assert ended["status"] == "failed"
    assert attempts.attempts(broker, doomed["id"], 0) == ATTEMPTS + 1
    rows = stored_matches(service, doomed["id"])
    assert [(i, ok, how) for i, ok, how, _e in rows] == [(i, False, "abandoned") for i in (0, 1)]
    assert all(f"{ATTEMPTS} times without a result" in error for *_, error in rows)

    completed = service.wait_finished(behind["id"], timeout=120)
    assert completed["status"] == "done"
    assert service.stored_indices(behind["id"]) == list(range(30))
