"""A playtester cluster on one machine: a broker host, a database host, an API host and worker
hosts, each a network namespace with its own hostname and address, joined by virtual links.

The layout is that of docs/across-machines.md: Redis (password, protected mode, its link
address only) on ``broker``, PostgreSQL (scram-sha-256 passwords, its link address only) on
``db``, ``playtester serve`` (with the sweeper) on ``api``, and ``celery -A workers worker`` on
each ``w<n>``, started with nothing but the connection settings in its environment and its own
numba cache. ``scripts/cluster up|down`` builds the same for a person
(``python -m harness.cluster``).

    with Cluster.create(workers=3) as cluster:
        batch = cluster.submit(game="alquerque", agents=["random", "random"], matches=200)
        cluster.network.cut("w1")          # pull w1's cable
        cluster.wait_finished(batch["id"])
"""

from __future__ import annotations

import contextlib
import secrets
import signal
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from harness.cluster.net import Network, Unavailable, check_available, remove_leftovers
from harness.cluster.servers import (
    Api,
    Authority,
    Broker,
    Database,
    Worker,
    python_env,
    wait_until,
)

__all__ = ["Cluster", "Unavailable", "check_available", "remove_leftovers", "wait_until"]

ADDRESSES = {"broker": 2, "db": 3, "api": 4}
FIRST_WORKER = 10


class Cluster:
    """The hosts and servers of one cluster; ``close`` removes every one of them."""

    def __init__(self, network: Network, *, tls: bool, api_env: dict[str, str]) -> None:
        self.network = network
        self.folder = network.folder
        self.api_key = secrets.token_urlsafe(18)
        self.tls = tls
        self.authority = Authority(self.folder / "ca") if tls else None
        if self.authority is not None:
            self.authority.cert.chmod(0o644)
        self.broker = Broker(
            network,
            network.add_host("broker", ADDRESSES["broker"]),
            secrets.token_urlsafe(18),
            self.authority,
        )
        self.broker.start()
        self.database = Database(
            network,
            network.add_host("db", ADDRESSES["db"]),
            secrets.token_urlsafe(18),
            self.authority,
        )
        self.database_url = self.database.url()
        self.broker_url = self.broker.url()
        from storage.db import upgrade

        upgrade(self.local_database_url)
        self.api_host = network.add_host("api", ADDRESSES["api"])
        self.api = Api(
            network,
            self.api_host,
            python_env(**self.connection_env(), API_KEY=self.api_key, **api_env),
        )
        self.workers: dict[str, Worker] = {}
        self._next = FIRST_WORKER
        import httpx

        self.http = httpx.Client(
            base_url=self.api.url,
            timeout=30,
            headers={"Authorization": f"Bearer {self.api_key}"},
        )
        wait_until(lambda: self.http.get("/healthz").status_code == 200, 60, "the API")

    @classmethod
    def create(
        cls,
        *,
        workers: int = 0,
        tls: bool = False,
        keep: bool = False,
        api_env: dict[str, str] | None = None,
    ) -> Cluster:
        """A new cluster with ``workers`` worker hosts; ``keep``: a later run's cleanup of
        leftovers leaves it alone (``scripts/cluster up``)."""
        network = Network.create(keep=keep)
        try:
            cluster = cls(network, tls=tls, api_env=api_env or {})
            for _ in range(workers):
                cluster.add_worker()
        except BaseException:
            network.close()
            raise
        return cluster

    def connection_env(
        self, *, database_url: str | None = None, broker_url: str | None = None
    ) -> dict[str, str]:
        """The settings a host needs to reach the broker and the database (and trust them)."""
        env = {
            "DATABASE_URL": database_url or self.database_url,
            "BROKER_URL": broker_url or self.broker_url,
        }
        if self.authority is not None:
            env["DATABASE_CA_FILE"] = str(self.authority.cert)
            env["BROKER_CA_FILE"] = str(self.authority.cert)
        return env

    @property
    def local_database_url(self) -> str:
        """The database URL for this process: with the CA in the URL, so the setting (which
        is process-wide) stays the other tests'."""
        if self.authority is None:
            return self.database_url
        return f"{self.database_url}?sslmode=verify-full&sslrootcert={self.authority.cert}"

    def add_worker(self, **env: str) -> str:
        """Start one more worker host; return its name. ``env`` replaces connection settings
        (a wrong password) or adds others."""
        name = f"w{self._next - FIRST_WORKER + 1}"
        host = self.network.add_host(name, self._next)
        self._next += 1
        self.workers[name] = Worker(
            self.network, host, python_env(**{**self.connection_env(), **env})
        )
        return name

    def worker_ready(self, name: str, timeout: float = 60) -> None:
        """Wait until the worker logs that it is connected and listening."""
        worker = self.workers[name]
        wait_until(lambda: " ready." in worker.text(), timeout, f"worker {name}")

    def kill_host(self, name: str) -> None:
        """Every process of the host killed at once, as a host lost would be."""
        self.network.hosts[name].kill_all()
        self.workers.pop(name, None)

    def restart_broker(self) -> None:
        self.broker.stop()
        self.broker.start()

    def restart_database(self) -> None:
        self.database.stop()
        self.database.start()

    # ------------------------------------------------------------------ batches

    def submit(self, **body: Any) -> dict[str, Any]:
        response = self.http.post("/batches", json=body)
        assert response.status_code == 202, response.text
        result: dict[str, Any] = response.json()
        return result

    def batch(self, batch_id: str) -> dict[str, Any]:
        response = self.http.get(f"/batches/{batch_id}")
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    def wait_finished(self, batch_id: str, timeout: float = 120) -> dict[str, Any]:
        """The batch once finished (polled from the database, through the API)."""

        def finished() -> dict[str, Any] | None:
            batch = self.batch(batch_id)
            return batch if batch["status"] in {"done", "failed", "cancelled"} else None

        result: dict[str, Any] = wait_until(finished, timeout, f"batch {batch_id}")
        return result

    def sql(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        """Rows of ``query`` on the playtester database, as its superuser (over the socket)."""
        with self.database.admin(Database.NAME) as conn:
            return list(conn.execute(query, args).fetchall())

    def logs(self) -> str:
        """Every log of the cluster, for a failing test's report."""
        out = []
        for log in sorted(self.folder.glob("*.log")) + sorted(self.folder.glob("*/*.log")):
            out.append(f"--- {log.name}\n{log.read_text(errors='replace')[-4000:]}")
        return "\n".join(out)

    def all_log_text(self) -> str:
        return "\n".join(
            p.read_text(errors="replace")
            for p in [*self.folder.glob("*.log"), *self.folder.glob("*/*.log")]
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.http.close()
        for worker in list(self.workers.values()):
            worker.process.stop(signal.SIGTERM, timeout=5)
        with contextlib.suppress(Exception):
            self.api.process.stop(signal.SIGTERM, timeout=5)
        self.database.stop()
        self.broker.stop()
        from storage.db import dispose_engine

        dispose_engine(self.local_database_url)
        self.network.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def wait_log(path: Path, text: str, timeout: float) -> None:
    """Wait until ``text`` appears in the log at ``path``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.05)
    raise TimeoutError(f"{text!r} did not appear in {path.name} within {timeout:.0f} s")
