"""Secured links between hosts: Redis and PostgreSQL speaking TLS only, with certificates from
a throwaway authority made here (``openssl``), passwords on both; a client without TLS is
refused, and no secret shows in any log, answer, page or command output."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import server_missing

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster import Cluster, Unavailable, check_available, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(600)]

FAST = {"game": "alquerque", "agents": ["random", "random"]}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    try:
        check_available()
    except Unavailable as exc:
        server_missing(f"no test cluster here: {exc}")
    made = Cluster.create(workers=1, tls=True, api_env={"STALL_SECONDS": "3"})
    try:
        for name in made.workers:
            made.worker_ready(name)
        yield made
    except BaseException:
        print(made.logs())
        raise
    finally:
        made.close()


def test_a_batch_runs_over_tls_links(cluster: Cluster) -> None:
    worker = cluster.workers["w1"].text()
    assert f"Connected to rediss://:**@{cluster.broker.host.address}:6379/0" in worker
    submitted = cluster.submit(**FAST, matches=100, chunk_size=10, seed=8)
    batch = cluster.wait_finished(submitted["id"], timeout=90)
    assert batch["status"] == "done" and batch["progress"]["done"] == 100
    (encrypted,) = cluster.sql(
        "SELECT bool_and(s.ssl), count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a "
        "USING (pid) WHERE a.client_addr IS NOT NULL"
    )
    assert encrypted == (True, encrypted[1]) and encrypted[1] > 0


def test_a_client_without_tls_is_refused(cluster: Cluster) -> None:
    import psycopg
    import redis

    plain = cluster.database.url(tls=False).replace("postgresql+psycopg://", "postgresql://")
    with pytest.raises(psycopg.OperationalError, match="no encryption"):
        psycopg.connect(plain, connect_timeout=5).close()
    with pytest.raises(redis.exceptions.ConnectionError):
        redis.Redis.from_url(cluster.broker.url(tls=False), socket_timeout=5).ping()
    # With TLS but a certificate from another authority, the server is not believed.
    other = cluster.folder / "other-ca.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(cluster.folder / "other-ca.key"), "-out", str(other)),
            *("-subj", "/CN=another CA"),
        ],
        check=True,
        capture_output=True,
    )
    with pytest.raises(psycopg.OperationalError, match="certificate verify failed"):
        psycopg.connect(
            cluster.database.url().replace("postgresql+psycopg://", "postgresql://"),
            sslmode="verify-full",
            sslrootcert=str(other),
            connect_timeout=5,
        ).close()


def cli(cluster: Cluster, *args: str, **env: str) -> str:
    """A ``playtester`` command run on this machine against the cluster; its whole output."""
    playtester = Path(sys.executable).parent / "playtester"
    base = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "BROKER_URL"}}
    done = subprocess.run(
        [str(playtester), *args],
        capture_output=True,
        text=True,
        env={**base, **cluster.connection_env(), "API_KEY": cluster.api_key, **env},
        timeout=120,
    )
    return done.stdout + done.stderr


def test_no_secret_shows_anywhere(cluster: Cluster) -> None:
    secrets = {
        "database password": cluster.database.password,
        "broker password": cluster.broker.password,
        "API key": cluster.api_key,
    }
    submitted = cluster.submit(**FAST, matches=20, chunk_size=10, seed=9)
    batch_id = submitted["id"]
    cluster.wait_finished(batch_id, timeout=90)
    seen: dict[str, str] = {}
    http = cluster.http
    for path in (
        "/healthz",
        "/",
        f"/ui/batches/{batch_id}",
        "/ui/live",
        "/ui/new",
        f"/batches/{batch_id}",
        f"/batches/{batch_id}/report",
        "/batches/nothing-like-this",
        "/ui/batches/nothing-like-this",
        "/games",
    ):
        seen[path] = http.get(path).text
    seen["bad request"] = http.post("/batches", json={"game": "no-such-game"}).text
    seen["CLI db upgrade"] = cli(cluster, "db", "upgrade")
    seen["CLI batches"] = cli(cluster, "batches")
    seen["CLI show"] = cli(cluster, "show", batch_id)
    seen["CLI status"] = cli(cluster, "status", batch_id, "--server", cluster.api.url)
    seen["CLI wrong password"] = cli(
        cluster,
        "batches",
        DATABASE_URL=cluster.database.url("wrong-" + cluster.database.password[:6]),
    )
    assert "password authentication failed" in seen["CLI wrong password"]
    # With the database away, the health check and the API's errors still name no secret.
    cluster.database.stop()
    try:
        health = http.get("/healthz")
        assert health.status_code == 503
        seen["/healthz, database down"] = health.text
        seen["/batches, database down"] = http.get(f"/batches/{batch_id}").text
        seen["dashboard, database down"] = http.get("/").text
        seen["CLI, database down"] = cli(cluster, "batches")
    finally:
        cluster.database.start()
    wait_until(lambda: http.get("/healthz").status_code == 200, 60, "the API to recover")
    seen["logs"] = cluster.all_log_text()
    assert "database down" in " ".join(seen)
    for what, secret in secrets.items():
        for where, text in seen.items():
            assert secret not in text, f"the {what} shows in {where}"
