"""Throwaway servers on this machine: PostgreSQL, Redis, the API and Celery workers.

Fault-injection tests stop and restart these, so they are private to whoever starts them (free
ports, temporary folders): the machine's shared PostgreSQL and Redis are never touched. The
service tests (``tests/service_fixtures.py`` makes them fixtures) and the benchmarks
(``bench/service.py``) run on them. A server or tool this machine lacks raises
``ServerMissing``; the tests decide whether that skips or fails them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from harness.worker_log import held_tasks

ROOT = Path(__file__).resolve().parent.parent
PG_BIN_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/bin")


class ServerMissing(RuntimeError):  # noqa: N818 - named for what the caller is told
    """A server, or a tool to start one, is not installed on this machine."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Any, timeout: float, what: str, interval: float = 0.1) -> Any:
    """Poll ``predicate`` until it returns something truthy; raise ``AssertionError`` (a
    test's failure) after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as exc:  # the server may still be starting
            last = exc
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


def _pg_tool(name: str) -> str:
    for folder in PG_BIN_DIRS:
        candidate = Path(folder) / name
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise ServerMissing(f"PostgreSQL tool {name} is not installed")
    return found


def scratch_folder(prefix: str) -> Path:
    """A new temporary folder, in memory (``/dev/shm``) where the machine has one.

    A session's throwaway cluster grows to hundreds of megabytes in thousands of files: deleting
    them from disk took 11 to 26 s at a session's end here.
    """
    memory = Path("/dev/shm")
    usable = memory.is_dir() and os.access(memory, os.W_OK | os.X_OK)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=memory if usable else None))


class PgCluster:
    """A PostgreSQL cluster in a temporary folder on a free port (initdb + pg_ctl)."""

    def __init__(self) -> None:
        initdb = _pg_tool("initdb")
        self.port = free_port()
        self.folder = scratch_folder("pt_pg_")
        self.data = self.folder / "data"
        self.as_postgres = os.geteuid() == 0  # initdb refuses to run as root
        if self.as_postgres:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run(initdb, "-D", str(self.data), "-U", "postgres", "-A", "trust")

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_postgres else []
        subprocess.run([*prefix, *command], check=True, capture_output=True, cwd=self.folder)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -F"
        self._run(
            _pg_tool("pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.folder / "log"),
            "-w",
            "start",
        )

    def stop(self) -> None:
        self._run(_pg_tool("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    @property
    def _admin_dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def create_database(self) -> str:
        import psycopg

        name = "pt_" + uuid.uuid4().hex[:10]
        with psycopg.connect(self._admin_dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        """Drop a database made by ``create_database``, ending its connections."""
        import psycopg

        with psycopg.connect(self._admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def remove(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class RedisServer:
    """A redis-server on a free port, without persistence (a restart empties it)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="pt_redis_"))
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        redis_server = shutil.which("redis-server")
        if redis_server is None:
            raise ServerMissing("redis-server is not installed")
        self.process = subprocess.Popen(
            [
                *(redis_server, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""),
                *("--appendonly", "no", "--dir", str(self.folder)),
                *("--maxmemory-policy", "noeviction"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import redis

        wait_for(lambda: redis.Redis.from_url(self.url).ping(), 10, "redis-server")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def service_env(database_url: str, broker_url: str, **extra: str) -> dict[str, str]:
    """Environment of the API and worker processes of a test."""
    env = {k: v for k, v in os.environ.items() if k not in {"API_KEY", "API_KEY_READS"}}
    env.update(
        DATABASE_URL=database_url,
        BROKER_URL=broker_url,
        PYTHONPATH=str(ROOT),
        STALL_SECONDS="3",
        TASK_TIME_LIMIT="120",
        MAX_CHUNKS_IN_FLIGHT="8",
    )
    env.update(extra)
    return env


class Workers:
    """Real ``celery -A workers worker`` processes, one task at a time each.

    ``pool="solo"`` runs tasks in the worker process itself (no time limits); ``"prefork"``
    runs them in one child process, as deployments do, with the soft and hard time limits.
    Each worker is the leader of its own process group, so killing it kills its child too.
    """

    def __init__(self, env: dict[str, str], count: int, folder: Path, pool: str = "solo") -> None:
        self.env = env
        self.folder = folder
        self.pool = pool
        self.processes: list[subprocess.Popen[bytes] | None] = [None] * count
        self.log_starts = [0] * count
        for i in range(count):
            self.start(i)

    def log(self, i: int) -> Path:
        return self.folder / f"worker{i}.log"

    def text(self, i: int) -> str:
        """Worker ``i``'s log since it last started (a task a killed worker held never ends in
        the log, so earlier lives are left out)."""
        path = self.log(i)
        if not path.exists():
            return ""
        with path.open("rb") as log:
            log.seek(self.log_starts[i])
            return log.read().decode(errors="replace")

    def held(self, i: int) -> list[str]:
        """The chunk tasks worker ``i`` holds now (received, not ended)."""
        return held_tasks(self.text(i))

    def freeze(self, i: int) -> None:
        """Stop worker ``i`` where it is (SIGSTOP to its group): what it holds stays held."""
        self._signal(i, signal.SIGSTOP)

    def thaw(self, i: int) -> None:
        self._signal(i, signal.SIGCONT)

    def _signal(self, i: int, number: int) -> None:
        process = self.processes[i]
        if process is not None:
            os.killpg(process.pid, number)

    def start(self, i: int) -> None:
        command = [sys.executable, "-m", "celery", "-A", "workers", "worker", f"--pool={self.pool}"]
        command += ["--concurrency=1"] if self.pool == "prefork" else []
        command += ["-Q", "playtester,playtester.control", "-n", f"w{i}-{uuid.uuid4().hex[:6]}@%h"]
        command += ["--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info"]
        path = self.log(i)
        self.log_starts[i] = path.stat().st_size if path.exists() else 0
        log = open(path, "ab")  # noqa: SIM115 - the child owns it
        self.processes[i] = subprocess.Popen(
            command,
            env=self.env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self, i: int) -> None:
        process = self.processes[i]
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
            self.processes[i] = None

    def stop(self) -> None:
        for i, process in enumerate(self.processes):
            if process is not None:
                process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(15)
                self.kill(i)  # whatever of its group is left
        self.processes = [None] * len(self.processes)


class Api:
    """``uvicorn api.app:app`` in a subprocess on a free port (its log: ``<name>.log``)."""

    def __init__(self, env: dict[str, str], folder: Path, name: str = "api") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        log = open(folder / f"{name}.log", "ab")  # noqa: SIM115 - the child owns it
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "uvicorn", "api.app:app", "--port", str(self.port)),
                *("--host", "127.0.0.1", "--log-level", "warning"),
            ],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.client = httpx.Client(base_url=self.url, timeout=30)
        try:
            wait_for(lambda: self.client.get("/openapi.json").status_code == 200, 30, "the API")
        except AssertionError:
            self.stop()  # nobody else holds this server: it would outlive the test run
            raise

    def stop(self) -> None:
        self.client.close()
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Service:
    """Everything one test needs: its own database, the API, and a set of workers."""

    def __init__(
        self,
        pg: PgCluster,
        redis_server: RedisServer,
        folder: Path,
        workers: int,
        pool: str = "solo",
        **env: str,
    ) -> None:
        import redis

        from storage.db import upgrade

        redis.Redis.from_url(redis_server.url).flushdb()
        self.pg = pg
        self.redis = redis_server
        self.database = pg.create_database()
        self.database_url = pg.url(self.database)
        upgrade(self.database_url)
        self.env = service_env(self.database_url, redis_server.url, **env)
        self.folder = folder
        self.api = Api(self.env, folder)
        self.workers = Workers(self.env, workers, folder, pool)

    def submit(self, **body: Any) -> dict[str, Any]:
        response = self.api.client.post("/batches", json=body)
        assert response.status_code == 202, response.text
        result: dict[str, Any] = response.json()
        return result

    def batch(self, batch_id: str) -> dict[str, Any]:
        response = self.api.client.get(f"/batches/{batch_id}")
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    def wait_finished(self, batch_id: str, timeout: float = 90) -> dict[str, Any]:
        def finished() -> dict[str, Any] | None:
            batch = self.batch(batch_id)
            return batch if batch["status"] in {"done", "failed", "cancelled"} else None

        try:
            result: dict[str, Any] = wait_for(finished, timeout, f"batch {batch_id}", 0.3)
        except AssertionError:
            self.print_logs()
            raise
        return result

    def print_logs(self, tail: int = 3000) -> None:
        """Print the end of the API's and every worker's log (pytest shows it with a failure)."""
        for log in sorted(self.folder.glob("*.log")):
            print(f"--- {log.name}\n{log.read_text(errors='replace')[-tail:]}")

    def stored_indices(self, batch_id: str) -> list[int]:
        from sqlalchemy import text

        from storage.db import get_engine

        with get_engine(self.database_url).connect() as conn:
            rows = conn.execute(
                text("SELECT match_index FROM match WHERE batch_id = :b ORDER BY match_index"),
                {"b": batch_id},
            )
            return [int(r[0]) for r in rows]

    def close(self) -> None:
        """Stop the workers and the API, and drop the test's database (the session's cluster
        stays small)."""
        from storage.db import dispose_engine

        self.workers.stop()
        self.api.stop()
        dispose_engine(self.database_url)
        with contextlib.suppress(Exception):  # a test may have stopped the cluster itself
            self.pg.drop_database(self.database)
