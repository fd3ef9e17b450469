"""Distributed mode end to end: the API and real Celery workers over a private Redis and
PostgreSQL, with workers killed, Redis restarted and PostgreSQL stopped mid-batch."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from service_fixtures import Service, pg_cluster, redis_server, service_factory, wait_for
from sqlalchemy import text

from harness.worker_log import taken_chunks
from workers.batches import stop_rule_chunk_cap
from workers.game_queues import chunk_queue

__all__ = ["pg_cluster", "redis_server", "service_factory"]

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(180)]

FAST = {"game": "alquerque", "agents": ["random", "random"]}
SLOW = {
    "game": "alquerque",
    "agents": [{"name": "mcts", "iterations": 10, "backend": "python"}, "random"],
}
"""About 20 ms a match: long enough to kill a worker in the middle of a chunk."""


def assert_every_index_once(service: Service, batch: dict, players: int = 2) -> None:
    indices = service.stored_indices(batch["id"])
    assert indices == list(range(batch["matches"]))
    from storage.db import get_engine

    with get_engine(service.database_url).connect() as conn:
        seats = conn.execute(
            text("SELECT count(*) FROM seat_result WHERE batch_id = :b"), {"b": batch["id"]}
        ).scalar()
        chunk_total = conn.execute(
            text("SELECT sum(done) + sum(failed) FROM chunk WHERE batch_id = :b"),
            {"b": batch["id"]},
        ).scalar()
    assert seats == batch["matches"] * players
    assert chunk_total == batch["matches"]


def test_two_workers_store_every_index_once_and_the_answers_agree(service_factory) -> None:
    from workers.dispatch import redis_client
    from workers.roster import live_workers

    service = service_factory(workers=2)
    # Both workers must be consuming before the batch is queued, or on a loaded host the first
    # may play all 20 short chunks before the second has started.
    broker = redis_client(service.redis.url)
    wait_for(lambda: len(live_workers(broker)) == 2, 90, "both workers to be ready")
    submitted = service.submit(**FAST, matches=300, chunk_size=15, seed=7)
    assert submitted["status"] == "queued"
    batch = service.wait_finished(submitted["id"])
    assert batch["status"] == "done"
    assert batch["progress"]["done"] == 300
    assert batch["progress"]["chunks_written"] == 20
    assert_every_index_once(service, batch)

    client = service.api.client
    csv_lines = client.get(f"/batches/{batch['id']}/export?format=csv").text.strip().splitlines()
    assert len(csv_lines) == 1 + 300 * 2
    page = client.get(f"/batches/{batch['id']}/matches", params={"limit": 1000}).json()
    wins = sum(m["returns"][0] for m in page["items"])
    report = client.get(f"/batches/{batch['id']}/report").json()
    assert report["batch"]["matches_done"] == 300
    seat0 = next(s for s in report["seats"] if s["seat"] == 0)
    assert seat0["games"] == 300
    assert seat0["win_share"] == pytest.approx(wins / 300)
    detail = client.get(f"/batches/{batch['id']}/matches/123").json()
    assert detail["index"] == 123 and len(detail["moves"]) == detail["plies"]
    # Both workers took part.
    from storage.db import get_engine

    with get_engine(service.database_url).connect() as conn:
        names = conn.execute(
            text("SELECT count(DISTINCT worker) FROM chunk WHERE batch_id = :b"),
            {"b": batch["id"]},
        ).scalar()
    assert names == 2


def test_measured_chunk_sizes_store_every_index_once(service_factory) -> None:
    """No chunk_size: the first chunk is one match; every later one holds at most 8 times the
    matches written before it started (what it was sized from), and sizes grow as measured."""
    service = service_factory(workers=2, CHUNK_SECONDS="0.2")
    submitted = service.submit(**FAST, matches=1500, seed=8)
    assert submitted["chunk_size"] == 0
    batch = service.wait_finished(submitted["id"])
    assert batch["status"] == "done" and batch["progress"]["failed"] == 0
    assert_every_index_once(service, batch)
    from storage.db import get_engine

    with get_engine(service.database_url).connect() as conn:
        rows = conn.execute(
            text(
                "SELECT start, stop, done + failed, finished_at, duration FROM chunk "
                "WHERE batch_id = :b ORDER BY start"
            ),
            {"b": batch["id"]},
        ).all()
    assert (rows[0][0], rows[0][1]) == (0, 1)
    for start, stop, _n, finished, duration in rows[1:]:
        began = finished - timedelta(seconds=duration)
        measured = sum(n for _a, _b, n, done_at, _d in rows if done_at <= began)
        assert stop - start <= max(1, 8 * measured), (start, stop, measured)
    assert max(stop - start for start, stop, *_ in rows) > 8


def kill_in_flight(service: Service, batch_id: str, spare: set[int]) -> int:
    """Kill a worker while it holds a chunk of the batch it has not stored, other than those
    in ``spare``, and start it again; return the chunk's start. The worker is frozen while
    that is checked, so what is seen is what the kill interrupts: no race between looking and
    killing."""
    from storage.db import get_engine

    def stored() -> set[int]:
        with get_engine(service.database_url).connect() as conn:
            rows = conn.execute(
                text("SELECT start FROM chunk WHERE batch_id = :b"), {"b": batch_id}
            )
            return {start for (start,) in rows}

    def frozen_holding() -> tuple[int, int] | None:
        for i, process in enumerate(service.workers.processes):
            if process is None or not service.workers.held(i):
                continue
            service.workers.freeze(i)
            taken = taken_chunks(service.workers.text(i), batch_id)
            unstored = [start for start in taken if start not in stored() | spare]
            if unstored:
                return i, unstored[-1]
            service.workers.thaw(i)
        return None

    worker, start = wait_for(frozen_holding, 90, "a worker to hold a chunk", 0.01)
    service.workers.kill(worker)
    service.workers.start(worker)
    return int(start)


def test_killing_a_worker_three_times_loses_and_duplicates_nothing(service_factory) -> None:
    from workers import attempts
    from workers.dispatch import redis_client

    # A killed worker's lease lapses after CHUNK_LEASE_SECONDS (10 s by default) before
    # another delivery may take its chunk: each kill waits that out.
    service = service_factory(workers=2, CHUNK_LEASE_SECONDS="3")
    submitted = service.submit(**SLOW, matches=480, chunk_size=4, seed=11)
    killed: set[int] = set()
    for _ in range(3):
        # Another chunk each time: one killed MAX_CHUNK_ATTEMPTS times is given up by design.
        killed.add(kill_in_flight(service, submitted["id"], spare=killed))
    assert len(killed) == 3
    batch = service.wait_finished(submitted["id"], timeout=150)
    assert batch["status"] == "done" and batch["progress"]["failed"] == 0
    assert_every_index_once(service, batch)
    # Each kill interrupted a chunk: its lease lapsed and another delivery took it again.
    broker = redis_client(service.redis.url)
    assert all(attempts.attempts(broker, submitted["id"], start) >= 2 for start in killed)


def test_a_batch_survives_a_redis_restart(service_factory) -> None:
    service = service_factory(workers=2)
    submitted = service.submit(**SLOW, matches=200, chunk_size=4, seed=12)
    wait_for(
        lambda: service.batch(submitted["id"])["progress"]["chunks_written"] >= 3, 60, "progress"
    )
    service.redis.stop()
    time.sleep(1.0)
    service.redis.start()  # empty: the queued chunks and the cursor are gone
    batch = service.wait_finished(submitted["id"], timeout=120)
    assert batch["status"] == "done"
    assert_every_index_once(service, batch)


def test_chunks_retry_while_postgresql_is_down(service_factory) -> None:
    service = service_factory(workers=2)
    submitted = service.submit(**SLOW, matches=200, chunk_size=4, seed=13)
    wait_for(
        lambda: service.batch(submitted["id"])["progress"]["chunks_written"] >= 3, 60, "progress"
    )
    service.pg.stop()
    time.sleep(3.0)
    service.pg.start()
    batch = service.wait_finished(submitted["id"], timeout=120)
    assert batch["status"] == "done"
    # Deliveries that met the outage are retried, not counted as attempts: nothing given up.
    assert batch["progress"]["failed"] == 0
    assert_every_index_once(service, batch)
    retried = "".join(p.read_text() for p in service.folder.glob("worker*.log"))
    assert "retrying" in retried


def test_cancel_stops_new_chunks_and_lets_running_ones_finish(service_factory) -> None:
    import redis

    workers = 2
    service = service_factory(workers=workers)
    submitted = service.submit(**SLOW, matches=2000, chunk_size=4, seed=14)
    wait_for(
        lambda: service.batch(submitted["id"])["progress"]["chunks_written"] >= 4, 60, "progress"
    )
    answer = service.api.client.post(f"/batches/{submitted['id']}/cancel")
    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    written_at_cancel = service.batch(submitted["id"])["progress"]["chunks_written"]
    broker = redis.Redis.from_url(service.redis.url)

    def settled() -> bool:
        """Every queued chunk delivered and acknowledged (late: once its task ended, played
        or skipped), and no worker holding one."""
        idle = not any(service.workers.held(i) for i in range(workers))
        waiting = broker.llen(chunk_queue(SLOW["game"]))
        return idle and waiting == 0 and broker.hlen("unacked") == 0

    wait_for(settled, 60, "the queued chunks to be skipped", 0.05)
    batch = service.batch(submitted["id"])
    assert batch["status"] == "cancelled"
    # Chunks written after the cancel answered were running when it did: one a worker at
    # most. Queued chunks were skipped, so nothing else was played.
    assert written_at_cancel <= batch["progress"]["chunks_written"] <= written_at_cancel + workers
    assert batch["progress"]["chunks_written"] < 500


def test_a_stop_rule_stops_the_workers_on_time(service_factory) -> None:
    service = service_factory(workers=2)
    rule = {"agents": ["easy", "random"], "elo0": 0, "elo1": 60}
    submitted = service.submit(
        game="alquerque", agents=["easy", "random"], matches=6000, seed=1, stop_rule=rule
    )
    # Chunks are sized by the runner: under a stop rule at most min(200, 1 % of 6000) = 60.
    assert submitted["chunk_size"] == 0
    largest_chunk = stop_rule_chunk_cap(6000, pairs=True)
    assert largest_chunk == 60
    batch = service.wait_finished(submitted["id"])
    assert batch["status"] == "done" and batch["decision"]["result"] == "H1"
    # A warm shutdown lets each worker finish the chunk it is playing: after it, nothing more
    # can be written, and queued chunks were skipped.
    service.workers.stop()
    final = service.batch(submitted["id"])
    decided_at = final["decision"]["decided_at_matches"]
    assert decided_at <= 1000
    assert final["progress"]["finished"] <= decided_at + 2 * largest_chunk
    from storage.db import get_engine

    with get_engine(service.database_url).connect() as conn:
        sizes = conn.execute(
            text("SELECT stop - start FROM chunk WHERE batch_id = :b"), {"b": submitted["id"]}
        ).scalars()
        sizes = list(sizes)
    assert sizes and all(2 <= size <= largest_chunk and size % 2 == 0 for size in sizes)
    assert final["stopped_early"] is True
