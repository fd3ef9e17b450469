"""An installed game through the whole service: ``examples/kalah`` installed with pip into a
fresh virtual environment, then played locally and over HTTP by real workers.

Two environments are made in the test's folder, each seeing this environment's packages
through a ``.pth`` line (playtester's editable install included): one gets a copy of
``examples/kalah`` installed with pip, the other is left without it (so what the project's
own ``.venv`` holds does not matter). In the first, ``playtester games`` lists kalah with its
package, ``check-game kalah`` passes and a batch runs locally. Then a real uvicorn API and a
Celery worker from the kalah environment and a second Celery worker from the other one share
a private PostgreSQL database and redis-server: with only the worker without kalah up, the
batch's status names kalah as the game no worker has; once the kalah worker starts the batch
completes, every chunk played by it (the stored chunk rows and the broker's delivery counts
say so) and none failed; the dashboard's replay page draws a kalah position. Every wait is on
something observed; every process, database and queue made is removed at the end.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from overlay_venv import plain_venv
from service_fixtures import PgCluster, RedisServer, free_port, pg_cluster, redis_server
from sqlalchemy import text

from harness.servers import ROOT, service_env, wait_for
from storage.db import dispose_engine, get_engine, upgrade
from workers import roster
from workers.dispatch import deliveries_key

__all__ = ["pg_cluster", "redis_server"]

pytestmark = [pytest.mark.slow, pytest.mark.integration]

CLI = "import sys; from api.cli import main; sys.argv[0] = 'playtester'; main()"
KALAH = ROOT / "examples" / "kalah"
SMALL = {"houses": 3, "seeds": 3}
"""A small Kalah: a random game is a few dozen plies."""
MATCHES, CHUNK = 6, 2
WAIT = 150.0
"""Seconds any one observed event may take before the test fails: a guard on a shared
machine, never a measured figure."""
MISSING = "waiting: no worker has the game kalah (install playtester-kalah on a worker)"


class Processes:
    """The processes this test starts, each the leader of its own group, with its log."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.started: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, command: list[str], env: dict[str, str]) -> None:
        log = open(self.log(name), "wb")  # noqa: SIM115 - the child owns it
        self.started[name] = subprocess.Popen(
            command,
            env=env,
            cwd=self.folder,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self, name: str) -> Path:
        return self.folder / f"{name}.log"

    def text(self, name: str) -> str:
        return self.log(name).read_text(errors="replace")

    def finished(self, name: str) -> str:
        """Wait for ``name`` to end; its output, which must come from a clean exit."""
        process = self.started[name]
        code = process.wait(WAIT)
        output = self.text(name)
        assert code == 0, f"{name} ended with {code}:\n{output[-3000:]}"
        return " ".join(output.split())

    def stop(self, name: str) -> None:
        process = self.started.pop(name)
        if process.poll() is None:
            process.terminate()  # a worker withdraws from the roster as it stops
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(20)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # whatever of its group is left
        process.wait(10)

    def stop_all(self) -> None:
        for name in list(self.started):
            self.stop(name)


def worker(python: Path, node: str) -> list[str]:
    return [
        *(str(python), "-m", "celery", "-A", "workers", "worker", "--pool=solo"),
        *("-Q", "playtester,playtester.control", "-n", node),
        *("--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info"),
    ]


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    made = Processes(tmp_path)
    try:
        yield made
    finally:
        made.stop_all()


@pytest.fixture
def database(pg_cluster: PgCluster) -> Iterator[str]:
    name = pg_cluster.create_database()
    url = pg_cluster.url(name)
    upgrade(url)
    yield url
    dispose_engine(url)
    pg_cluster.drop_database(name)


@pytest.fixture
def broker(redis_server: RedisServer) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    yield client
    client.flushdb()  # the queues, the roster and the batch's keys this test made
    client.close()


def wait_status(api: httpx.Client, batch_id: str, check: Any, what: str) -> dict[str, Any]:
    def read() -> dict[str, Any] | None:
        batch: dict[str, Any] = api.get(f"/batches/{batch_id}").raise_for_status().json()
        return batch if check(batch) else None

    found: dict[str, Any] = wait_for(read, WAIT, what, 0.3)
    return found


def test_an_installed_game_plays_locally_and_through_the_service_on_its_workers_only(
    tmp_path: Path,
    processes: Processes,
    database: str,
    broker: redis.Redis,
    redis_server: RedisServer,
) -> None:
    kalah_python = plain_venv(tmp_path / "with-kalah")
    plain_python = plain_venv(tmp_path / "without-kalah")
    env = service_env(database, redis_server.url)
    # Installing waits mostly on pip's build requirements: the worker without kalah starts
    # meanwhile.
    source = tmp_path / "kalah-source"
    shutil.copytree(KALAH, source, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    pip = [str(kalah_python), "-m", "pip", "install", "-q", "--no-deps", str(source)]
    processes.start("pip", pip, env)
    plain = f"plain-{uuid.uuid4().hex[:6]}@test"
    processes.start("plain", worker(plain_python, plain), env)
    processes.finished("pip")

    local_db = f"sqlite:///{tmp_path / 'local.db'}"
    small = [f"--option={key}={value}" for key, value in SMALL.items()]
    processes.start("games", [str(kalah_python), "-c", CLI, "games"], env)
    check = ["check-game", "kalah", "--games", "200", *small]
    processes.start("check", [str(kalah_python), "-c", CLI, *check], env)
    run = ["run", "kalah", "--agents", "random", "--matches", "6", "--workers", "1"]
    run += ["--seed", "7", "--db", local_db, *small]
    processes.start("run", [str(kalah_python), "-c", CLI, *run], env)
    port = free_port()
    uvicorn = [str(kalah_python), "-m", "uvicorn", "api.app:app", "--port", str(port)]
    processes.start("api", [*uvicorn, "--host", "127.0.0.1", "--log-level", "warning"], env)

    assert "kalah — Kalah (2 players) from playtester-kalah 0.1.0" in processes.finished("games")
    assert "ok: 200 games met every check" in processes.finished("check")
    assert "6 matches" in processes.finished("run")

    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as api:
        wait_for(lambda: api.get("/openapi.json").status_code == 200, WAIT, "the API")
        body = {
            "game": "kalah",
            "options": SMALL,
            "agents": ["random", "random"],
            "matches": MATCHES,
            "seed": 5,
            "chunk_size": CHUNK,
        }
        submitted = api.post("/batches", json=body)
        assert submitted.status_code == 202, submitted.text
        batch_id = submitted.json()["id"]

        waiting = wait_status(
            api, batch_id, lambda b: b["waiting"] == MISSING, "the status naming kalah"
        )
        assert waiting["status"] == "queued"
        live = {w.node: dict(w.games) for w in roster.live_workers(broker)}
        assert "alquerque" in live[plain] and "kalah" not in live[plain]
        # The batch was started (by either worker: any takes the control queue) and its
        # chunks wait in kalah's queue, untaken.
        queued = lambda: broker.llen("playtester.game.kalah") == MATCHES // CHUNK  # noqa: E731
        wait_for(queued, WAIT, "the chunks in kalah's queue")
        assert broker.hlen(deliveries_key(batch_id)) == 0

        kalah = f"kalah-{uuid.uuid4().hex[:6]}@test"
        processes.start("kalah", worker(kalah_python, kalah), env)
        done = wait_status(
            api, batch_id, lambda b: b["status"] in {"done", "failed", "cancelled"}, "the batch"
        )
        assert done["status"] == "done", done
        assert done["waiting"] is None
        assert (done["progress"]["done"], done["progress"]["failed"]) == (MATCHES, 0)

        replay = api.get(f"/ui/batches/{batch_id}/matches/0")
        assert replay.status_code == 200
        assert "board-kalah" in replay.text  # the package's own renderer drew it

    with get_engine(database).connect() as conn:
        chunks = conn.execute(
            text("SELECT start, stop, worker, failed FROM chunk WHERE batch_id = :b"),
            {"b": batch_id},
        ).all()
        failed = conn.execute(
            text("SELECT count(*) FROM match WHERE batch_id = :b AND NOT ok"), {"b": batch_id}
        ).scalar_one()
    starts = list(range(0, MATCHES, CHUNK))
    assert sorted((c.start, c.stop) for c in chunks) == [(a, a + CHUNK) for a in starts]
    assert {c.worker for c in chunks} == {kalah}
    assert sum(c.failed for c in chunks) == 0 and failed == 0
    # Each chunk was delivered once, to the kalah worker: the other never received one.
    deliveries = {int(a): int(n) for a, n in broker.hgetall(deliveries_key(batch_id)).items()}
    assert deliveries == dict.fromkeys(starts, 1)
    assert "playtester.play_chunk[" not in processes.text("plain")  # "Task ...[id] received"

    processes.stop_all()
    assert roster.live_workers(broker) == []  # both withdrew as they stopped
