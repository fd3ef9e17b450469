"""Submissions and the sweeper against the real servers: a private Redis that the tests stop,
a private PostgreSQL, the API in uvicorn and Celery workers.

- A submission is atomic: with the database down the answer is 503 and nothing is stored;
  with the broker down it is 202, and the batch runs once the broker is back.
- A retried POST with the same Idempotency-Key returns the same batch, also when the retries
  race each other.
- Reads change nothing in the broker; of two API processes only one sweeps.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import redis
from service_fixtures import (
    Api,
    RedisServer,
    Service,
    pg_cluster,
    redis_server,
    service_factory,
    wait_for,
)
from sqlalchemy import text
from test_service_integration import FAST, assert_every_index_once

from storage.db import get_engine
from workers.dispatch import cursor_key
from workers.game_queues import chunk_queue
from workers.sweeper import LEASE_KEY, TICKS_KEY, Lease

__all__ = ["pg_cluster", "redis_server", "service_factory"]

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(180)]

CHUNKS = chunk_queue(FAST["game"])
"""Where the batches' chunks wait: their game's queue."""
QUEUES = (CHUNKS, "playtester.control")


def scalar(service: Service, sql: str, **params: Any) -> Any:
    with get_engine(service.database_url).connect() as conn:
        return conn.execute(text(sql), params).scalar()


def broker(service: Service) -> redis.Redis:
    return redis.Redis.from_url(service.redis.url)


def test_with_the_database_down_a_submission_is_503_and_stores_nothing(service_factory) -> None:
    service = service_factory(workers=0)
    service.pg.stop()
    try:
        response = service.api.client.post(
            "/batches", json={**FAST, "matches": 10}, headers={"Idempotency-Key": "db-down"}
        )
    finally:
        service.pg.start()
    assert response.status_code == 503, response.text
    assert "database" in response.json()["message"]
    assert scalar(service, "SELECT count(*) FROM batch") == 0
    assert scalar(service, "SELECT count(*) FROM outbox") == 0
    # The same key once the database is back makes the batch (the failed try used nothing up).
    retried = service.api.client.post(
        "/batches", json={**FAST, "matches": 10}, headers={"Idempotency-Key": "db-down"}
    )
    assert retried.status_code == 202, retried.text
    assert scalar(service, "SELECT count(*) FROM batch") == 1


def test_with_the_broker_down_a_submission_is_accepted_and_runs_once_it_is_back(
    service_factory,
) -> None:
    # A stall period far beyond the test: only the outbox can start the batch.
    service = service_factory(workers=1, STALL_SECONDS="600")
    body = {**FAST, "matches": 40, "chunk_size": 10, "seed": 21}
    key = {"Idempotency-Key": str(uuid.uuid4())}
    service.redis.stop()
    try:
        first = service.api.client.post("/batches", json=body, headers=key)
        assert first.status_code == 202, first.text
        again = service.api.client.post("/batches", json=body, headers=key)
        assert again.status_code == 200, again.text
        assert again.json()["id"] == first.json()["id"]
        batch_id = first.json()["id"]
        assert scalar(service, "SELECT count(*) FROM batch") == 1
        assert scalar(service, "SELECT batch_id FROM outbox") == batch_id
        assert service.batch(batch_id)["status"] == "queued"
    finally:
        service.redis.start()  # empty, on the same port
    batch = service.wait_finished(batch_id, timeout=120)
    assert batch["status"] == "done"
    assert_every_index_once(service, batch)
    assert scalar(service, "SELECT count(*) FROM outbox") == 0
    assert scalar(service, "SELECT count(*) FROM batch") == 1


def test_concurrent_posts_with_one_key_make_one_batch(service_factory) -> None:
    service = service_factory(workers=1)
    body = {**FAST, "matches": 20, "chunk_size": 10, "seed": 4}
    key = {"Idempotency-Key": "one-batch-please"}
    racers = 12
    barrier = threading.Barrier(racers)

    def post(_: int) -> httpx.Response:
        with httpx.Client(base_url=service.api.url, timeout=60) as client:
            barrier.wait()
            return client.post("/batches", json=body, headers=key)

    with ThreadPoolExecutor(racers) as pool:
        answers = list(pool.map(post, range(racers)))
    assert sorted(a.status_code for a in answers) == [200] * (racers - 1) + [202]
    ids = {a.json()["id"] for a in answers}
    assert len(ids) == 1
    assert scalar(service, "SELECT count(*) FROM batch") == 1
    assert scalar(service, "SELECT count(*) FROM idempotency_key") == 1
    batch = service.wait_finished(ids.pop())
    assert batch["status"] == "done"
    assert_every_index_once(service, batch)


def queue_state(service: Service, batch_id: str) -> dict[str, Any]:
    client = broker(service)
    state: dict[str, Any] = {name: client.llen(name) for name in QUEUES}
    state["cursor"] = client.get(cursor_key(batch_id))
    return state


def test_a_get_queues_nothing_even_for_a_stalled_batch(service_factory) -> None:
    service = service_factory(workers=0)
    client = broker(service)
    # Another process holds the sweeper lease: this API must not sweep, and no read may. The
    # API starts again after the lease is taken, so no sweep of its own is still under way.
    client.set(LEASE_KEY, "elsewhere", px=600_000)
    service.api.stop()
    service.api = Api(service.env, service.folder, name="api-restarted")
    submitted = service.submit(**FAST, matches=100, chunk_size=10)
    batch_id = submitted["id"]
    # Stalled: created an hour ago, no chunk since, no cursor (its start task never ran).
    with get_engine(service.database_url).begin() as conn:
        conn.execute(
            text("UPDATE batch SET created_at = created_at - interval '1 hour' WHERE id = :b"),
            {"b": batch_id},
        )
    before = queue_state(service, batch_id)
    assert before == {CHUNKS: 0, "playtester.control": 1, "cursor": None}
    for path in (f"/batches/{batch_id}", f"/batches/{batch_id[:6]}", "/batches"):
        for _ in range(3):
            assert service.api.client.get(path).status_code == 200
    assert queue_state(service, batch_id) == before
    # The check can see a sweep: once the lease is free, this API's sweeper rescues the batch.
    client.delete(LEASE_KEY)
    wait_for(lambda: broker(service).llen(CHUNKS) > 0, 30, "the sweeper to queue chunks")
    assert queue_state(service, batch_id)["cursor"] is not None


def ticks(service: Service) -> dict[str, int]:
    raw = broker(service).hgetall(TICKS_KEY)
    return {k.decode(): int(v) for k, v in raw.items()}


def pid_of(owner: str) -> int:
    return int(owner.split(":")[1])


def test_of_two_api_processes_one_sweeps_and_the_other_takes_over(service_factory) -> None:
    service = service_factory(workers=0)
    second = Api(service.env, service.folder, name="api2")
    apis = {service.api.process.pid: service.api, second.process.pid: second}
    try:
        wait_for(lambda: sum(ticks(service).values()) >= 6, 60, "six sweeper ticks")
        counted = ticks(service)
        assert len(counted) == 1, counted
        (owner,) = counted
        assert broker(service).get(LEASE_KEY) == owner.encode()
        assert pid_of(owner) in apis
        # The holder stops (releasing its lease): the other process takes over.
        holder = apis.pop(pid_of(owner))
        holder.stop()
        (standby_pid,) = apis
        wait_for(lambda: any(pid_of(o) == standby_pid for o in ticks(service)), 60, "a takeover")
        frozen = ticks(service)[owner]
        wait_for(
            lambda: sum(v for o, v in ticks(service).items() if o != owner) >= 3,
            60,
            "three ticks of the new holder",
        )
        assert ticks(service)[owner] == frozen
        assert len(ticks(service)) == 2
    finally:
        second.stop()


def test_the_lease_has_one_holder_and_only_it_renews_or_releases(
    redis_server: RedisServer,
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    first, second = Lease(client, "first", seconds=5), Lease(client, "second", seconds=5)
    assert first.hold() and not second.hold()
    assert first.hold()  # renewed by its holder
    assert 0 < client.pttl(LEASE_KEY) <= 5000
    second.release()  # not the holder: changes nothing
    assert first.holder() == "first" and not second.hold()
    first.release()
    assert first.holder() is None
    assert second.hold() and second.holder() == "second" and not first.hold()
