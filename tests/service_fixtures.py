"""The service tests' fixtures over ``harness.servers``' throwaway servers: a private PostgreSQL
cluster and redis-server for the session, and ``service_factory`` for a test's own database, API
and workers. Import the fixtures into a test module with ``from service_fixtures import ...``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_support import server_missing

from harness.servers import (
    ROOT,
    Api,
    PgCluster,
    RedisServer,
    ServerMissing,
    Service,
    Workers,
    free_port,
    service_env,
    wait_for,
)

__all__ = [
    "ROOT",
    "Api",
    "PgCluster",
    "RedisServer",
    "Service",
    "Workers",
    "free_port",
    "missing_is_decided",
    "pg_cluster",
    "redis_server",
    "service_env",
    "service_factory",
    "wait_for",
]


@contextlib.contextmanager
def missing_is_decided() -> Iterator[None]:
    """A server this machine lacks skips the test, or fails it where servers are required."""
    try:
        yield
    except ServerMissing as exc:
        server_missing(str(exc))


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """A private PostgreSQL cluster for the whole session."""
    with missing_is_decided():
        cluster = PgCluster()
        cluster.start()
    yield cluster
    cluster.remove()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A private redis-server for the whole session."""
    server = RedisServer()
    with missing_is_decided():
        server.start()
    yield server
    server.remove()


@pytest.fixture
def service_factory(
    pg_cluster: PgCluster, redis_server: RedisServer, tmp_path: Path
) -> Iterator[Any]:
    """Build a ``Service`` with ``workers`` worker processes of ``pool`` and extra environment
    settings (``STALL_SECONDS="3"``); everything is stopped after."""
    made: list[Service] = []

    def make(workers: int = 2, pool: str = "solo", **env: str) -> Service:
        service = Service(pg_cluster, redis_server, tmp_path, workers, pool, **env)
        made.append(service)
        return service

    yield make
    for service in made:
        service.close()
