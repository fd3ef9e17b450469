"""A worker host that joins with an empty numba cache takes work at once: against the real
service (prefork worker, private Redis and PostgreSQL), a batch of agents that call no compiled
code is played while the worker compiles the alpha-beta another batch needs, and that batch's
chunk is played once the compilation is over, never inside it.

One cold compilation, of the one search the compiled batch needs (the worker's own cache)."""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

import pytest
from service_fixtures import pg_cluster, redis_server, service_factory, wait_for
from sqlalchemy import text

__all__ = ["pg_cluster", "redis_server", "service_factory"]

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(900)]

COMPILED = {
    "game": "alquerque",
    "agents": [{"name": "alphabeta", "depth": 2, "backend": "compiled"}, "random"],
    "seed": 17,
}
PLAIN = {"game": "alveoles", "agents": ["random", "greedy"], "seed": 5, "matches": 40}
SOFT, HARD = 20, 30
"""Far below what a cold compilation takes (minutes here), above loading it from the cache."""
EVENT = re.compile(r"^\[(?P<at>[\d-]+ [\d:,]+): \w+/MainProcess\] (?P<what>.*)$", re.M)


def events(log: Path, what: str) -> list[datetime]:
    """When the worker's main process logged a line starting with ``what`` (local time)."""
    found = EVENT.finditer(log.read_text(errors="replace"))
    return [
        datetime.strptime(m["at"], "%Y-%m-%d %H:%M:%S,%f").astimezone()
        for m in found
        if m["what"].startswith(what)
    ]


def process_start(pid: int) -> float:
    """When process ``pid`` started, in seconds since the epoch (Linux's /proc; to a second)."""
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    boot = next(
        int(line.split()[1])
        for line in Path("/proc/stat").read_text().splitlines()
        if line.startswith("btime ")
    )
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def test_a_worker_with_an_empty_cache_plays_plain_work_while_it_compiles(
    service_factory, tmp_path: Path
) -> None:
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    service = service_factory(
        workers=1,
        pool="prefork",
        NUMBA_CACHE_DIR=str(cache),
        TASK_SOFT_TIME_LIMIT=str(SOFT),
        TASK_TIME_LIMIT=str(HARD),
        STALL_SECONDS="30",
    )
    log = tmp_path / "worker0.log"
    (worker,) = service.workers.processes
    assert worker is not None
    began = process_start(worker.pid)
    compiled = service.submit(**COMPILED, matches=2, chunk_size=2)
    # The compiled batch's chunk came, found the search missing, and set its compilation going.
    wait_for(lambda: events(log, "compiling alquerque:negamax"), 120, "the compilation")
    plain = service.submit(**PLAIN)
    done = service.wait_finished(plain["id"], timeout=120)
    assert done["status"] == "done" and done["progress"]["done"] == PLAIN["matches"], done
    finished = datetime.fromisoformat(done["finished_at"])
    print(f"plain batch done {finished.timestamp() - began:.1f} s after its worker started")

    batch = service.wait_finished(compiled["id"], timeout=840)
    assert batch["status"] == "done" and batch["progress"]["done"] == 2, batch
    (ready,) = events(log, "compiled alquerque:negamax")
    # The plain batch was played while the search was being compiled.
    assert finished < ready
    from storage.db import get_engine

    with get_engine(service.database_url).connect() as conn:
        (start, finished_at, duration), *more = conn.execute(
            text("SELECT start, finished_at, duration FROM chunk WHERE batch_id = :b"),
            {"b": compiled["id"]},
        ).all()
    assert not more
    # The compiled chunk started playing after the compilation had ended: none of its time
    # went to compiling (its time limit started a moment before, with the delivery).
    assert finished_at.timestamp() - duration > ready.timestamp()
    import redis

    from workers import attempts

    client = redis.Redis.from_url(service.redis.url)
    # Deferred while its search compiled, the chunk was taken, and counted, once.
    assert attempts.attempts(client, compiled["id"], start) == 1
    print(f"the search compiled {ready.timestamp() - began:.1f} s after the worker started")
    assert any(cache.rglob("*.nbi"))
