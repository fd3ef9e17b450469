"""Deliveries on a worker host that has not compiled what a chunk needs yet: the chunk is queued
again, not played, failed or counted; the sweep leaves it be; a search that failed to compile
fails its chunks with the reason; a chunk whose agents call no compiled code is played at once.
Against a real (private) redis-server and a SQLite file, without Celery."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from service_fixtures import redis_server
from test_delivery import matches_of, service, sweep_again

from engines.compiled.warm import Need, all_needs
from storage import crud
from storage.db import get_engine
from storage.models import Batch
from storage.settings import Settings
from workers import attempts, dispatch, warmup
from workers.batches import plan_batch
from workers.delivery import deliver_chunk

__all__ = ["redis_server", "service"]

NEGAMAX = Need("alquerque", "negamax")
REASON = "KernelCompileError: compiling the negamax search for alquerque failed (boom)"


@pytest.fixture
def compiler() -> Iterator[warmup.HostCompiler]:
    """This process as a worker host whose compiler has compiled nothing yet; its command
    stands for the compilation (it fails with ``REASON``), never run unless a test says so."""
    fails = [sys.executable, "-c", f"import sys; sys.exit({REASON!r})"]
    host = warmup.HostCompiler(all_needs(), command=fails)
    warmup.install(host)
    yield host
    warmup.install(None)


def new_batch(url: str, agents: list[object], chunk_size: int = 2) -> Batch:
    plan = plan_batch(
        settings=Settings(),
        game="alquerque",
        players=None,
        options={},
        agents=agents,
        matches=4,
        seed=3,
        seat_policy=None,
        chunk_size=chunk_size,
        max_plies=None,
    )
    return crud.create_batch(get_engine(url), plan=plan)


COMPILED = [{"name": "alphabeta", "depth": 2, "backend": "compiled"}, "random"]


def test_a_chunk_needing_what_is_not_compiled_is_queued_again_uncounted(
    service: Settings, compiler: warmup.HostCompiler
) -> None:
    engine = get_engine(service.database_url)
    batch = new_batch(service.database_url, COMPILED)
    assert dispatch.open_batch(engine, batch, service) == [(0, 2), (2, 4)]
    assert dispatch.celery_for(service).control.purge() == 2  # taken off the queue
    delivery = deliver_chunk(batch.id, 0, 2, settings=service)
    assert delivery.outcome is None and delivery.deferred == (NEGAMAX,)
    assert compiler.state(NEGAMAX) == warmup.WANTED
    client = dispatch.broker(service)
    # Neither an attempt nor a delivery, nothing stored; the chunk is waiting in the queue.
    assert attempts.attempts(client, batch.id, 0) == 0
    assert client.hgetall(dispatch.deliveries_key(batch.id)) == {}
    assert matches_of(service.database_url, batch.id) == []
    assert dispatch.chunks_waiting(service) == 1
    # Held by a worker until it is due, the message is off the queue: the sweep does not take
    # the deferred chunk for lost, while the other one, gone from an empty queue, comes back.
    dispatch.celery_for(service).control.purge()
    lease = service.chunk_lease_seconds
    assert sweep_again(engine, service, batch) == []
    assert sweep_again(engine, service, batch, after=lease) == [(2, 4)]
    assert sweep_again(engine, service, batch, after=2 * lease) == []


def test_a_chunk_of_agents_without_compiled_code_is_played_at_once(
    service: Settings, compiler: warmup.HostCompiler
) -> None:
    batch = new_batch(service.database_url, ["random", "easy"])
    delivery = deliver_chunk(batch.id, 0, 2, settings=service)
    assert delivery.deferred == () and delivery.attempt == 1
    assert delivery.outcome is not None and delivery.outcome.done == 2
    assert all(compiler.state(need) == warmup.IDLE for need in all_needs())


def test_a_search_that_failed_to_compile_fails_its_chunks_with_the_reason(
    service: Settings, compiler: warmup.HostCompiler
) -> None:
    batch = new_batch(service.database_url, COMPILED, chunk_size=4)
    assert deliver_chunk(batch.id, 0, 4, settings=service).deferred == (NEGAMAX,)
    assert compiler.compile_next()
    delivery = deliver_chunk(batch.id, 0, 4, settings=service)
    assert delivery.attempt == 1 and delivery.outcome is not None
    rows = matches_of(service.database_url, batch.id)
    assert [(i, ok, ended) for i, ok, ended, _e in rows] == [(i, False, "error") for i in range(4)]
    assert all(str(error).startswith(REASON) for *_, error in rows)
