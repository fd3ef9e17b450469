"""A backlog is not a stall: batches waiting in the queue behind long chunks, against the real
service (API with its sweeper, two Celery workers, private Redis and PostgreSQL), are never
queued again, while a chunk whose worker died still is (``test_service_integration``)."""

from __future__ import annotations

import pytest
from service_fixtures import Service, pg_cluster, redis_server, service_factory, wait_for
from sqlalchemy import text

__all__ = ["pg_cluster", "redis_server", "service_factory"]

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(240)]

LONG = {
    "game": "alquerque",
    "agents": [{"name": "mcts", "iterations": 10, "backend": "python"}, "random"],
    "seed": 21,
}
"""About 20 ms a match: 300 of them keep a worker busy for several seconds."""
LONG_CHUNK = 300
SMALL = {"game": "alquerque", "agents": ["random", "random"]}
BACKLOG = 20


def deliveries(service: Service, batch_id: str) -> dict[int, int]:
    """What the workers recorded: deliveries per chunk start."""
    from workers.dispatch import deliveries_key, redis_client

    raw = redis_client(service.redis.url).hgetall(deliveries_key(batch_id))
    return {int(a): int(n) for a, n in raw.items()}


def chunk_starts(service: Service, batch_id: str) -> list[int]:
    from storage.db import get_engine

    with get_engine(service.database_url).connect() as conn:
        rows = conn.execute(
            text("SELECT start FROM chunk WHERE batch_id = :b ORDER BY start"), {"b": batch_id}
        )
        return [int(r[0]) for r in rows]


def test_twenty_batches_behind_two_long_chunks_are_delivered_once(service_factory) -> None:
    # A stall period of one second: the backlog waits through several of them.
    service = service_factory(workers=2, STALL_SECONDS="1")
    from workers.attempts import attempts
    from workers.dispatch import redis_client

    broker = redis_client(service.redis.url)
    long = service.submit(**LONG, matches=2 * LONG_CHUNK, chunk_size=LONG_CHUNK)
    wait_for(
        lambda: all(attempts(broker, long["id"], s) for s in (0, LONG_CHUNK)),
        60,
        "both workers playing a long chunk",
    )
    backlog = [
        service.submit(**SMALL, matches=10, chunk_size=5, seed=100 + k) for k in range(BACKLOG)
    ]
    for batch in backlog:
        finished = service.wait_finished(batch["id"], timeout=180)
        assert finished["status"] == "done" and finished["progress"]["done"] == 10
        assert service.stored_indices(batch["id"]) == list(range(10))
    assert service.wait_finished(long["id"], timeout=60)["status"] == "done"
    # The long chunks outlasted several stall periods while the backlog waited: each chunk,
    # theirs and the backlog's, was delivered exactly once.
    counted = {b["id"]: deliveries(service, b["id"]) for b in [long, *backlog]}
    expected = {b["id"]: dict.fromkeys(chunk_starts(service, b["id"]), 1) for b in [long, *backlog]}
    if counted != expected:
        # Which path delivered a chunk again: a retry (the worker's log), the sweep (it notes
        # what it queued again), or the broker handing a message back.
        from workers.dispatch import requeued_key

        for batch_id in (b for b in counted if counted[b] != expected[b]):
            print(batch_id, "queued again by the sweep:", broker.hgetall(requeued_key(batch_id)))
        service.print_logs(tail=200_000)
    assert counted == expected
    assert len(chunk_starts(service, long["id"])) == 2
