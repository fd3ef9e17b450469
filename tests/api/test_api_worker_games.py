"""The API and the games its workers have (``workers.roster``): a batch's status says why it
waits when no running worker can play it, and a game this server lacks but a worker has is
refused naming the package to install. Against the private redis-server; the roster entries
are written as a worker writes them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from api_support import client_for, make_api, route_cli_to
from fastapi.testclient import TestClient
from service_fixtures import RedisServer, redis_server

from workers import roster

__all__ = ["redis_server"]

BATCH = {"game": "alquerque", "agents": ["random", "random"], "matches": 4}


@pytest.fixture
def broker(redis_server: RedisServer) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    yield client
    client.flushdb()


@pytest.fixture
def api(migrated_sqlite_url: str, redis_server: RedisServer) -> TestClient:
    app, _dispatcher = make_api(migrated_sqlite_url, broker_url=redis_server.url)
    return client_for(app)


def test_the_status_says_which_game_no_running_worker_has(
    api: TestClient, broker: redis.Redis
) -> None:
    created = api.post("/batches", json=BATCH)
    assert created.status_code == 202, created.text
    url = f"/batches/{created.json()['id']}"
    assert api.get(url).json()["waiting"] == "waiting: no worker is running"
    roster.advertise(broker, "other@host", {"abalone": "playtester"})
    assert api.get(url).json()["waiting"] == (
        "waiting: no worker has the game alquerque (install playtester on a worker)"
    )
    roster.advertise(broker, "this@host", {"alquerque": "playtester"})
    assert api.get(url).json()["waiting"] is None
    roster.withdraw(broker, "this@host")
    cancelled = api.post(f"{url}/cancel")
    assert cancelled.json()["status"] == "cancelled"
    assert api.get(url).json()["waiting"] is None  # a finished batch waits for nothing


def test_local_mode_shows_no_note(migrated_sqlite_url: str) -> None:
    app, _dispatcher = make_api(migrated_sqlite_url)
    api = client_for(app)
    created = api.post("/batches", json=BATCH)
    assert api.get(f"/batches/{created.json()['id']}").json()["waiting"] is None


def test_a_game_missing_here_that_a_worker_has_is_refused_naming_its_package(
    api: TestClient, broker: redis.Redis
) -> None:
    body = {**BATCH, "game": "nimble"}
    refused = api.post("/batches", json=body)
    assert refused.status_code == 422
    assert refused.json()["field"] == "game"
    assert "package" not in refused.json()["message"]
    roster.advertise(broker, "w@host", {"nimble": "playtester-nimble"})
    refused = api.post("/batches", json=body)
    assert refused.status_code == 422
    assert refused.json()["field"] == "game"
    message = refused.json()["message"]
    assert message.startswith("unknown game 'nimble'")
    assert message.endswith(
        "a running worker has 'nimble' from the package playtester-nimble: install "
        "playtester-nimble on this server too"
    )


def test_the_cli_status_shows_why_the_batch_waits(
    migrated_sqlite_url: str, redis_server: RedisServer, broker: redis.Redis, monkeypatch
) -> None:
    from typer.testing import CliRunner

    from api.cli import app as cli

    app, _dispatcher = make_api(migrated_sqlite_url, broker_url=redis_server.url)
    route_cli_to(app, monkeypatch)
    batch_id = client_for(app).post("/batches", json=BATCH).json()["id"]
    roster.advertise(broker, "other@host", {"abalone": "playtester"})
    shown = CliRunner().invoke(cli, ["status", batch_id, "--no-follow"])
    assert shown.exit_code == 0, shown.output
    assert " ".join(shown.output.split()) == (
        f"{batch_id} queued 0/4 — waiting: no worker has the game alquerque (install "
        "playtester on a worker)"
    )


def test_the_dashboard_s_batch_page_shows_why_the_batch_waits(
    api: TestClient, broker: redis.Redis
) -> None:
    batch_id = api.post("/batches", json=BATCH).json()["id"]
    roster.advertise(broker, "other@host", {"abalone": "playtester"})
    shown = api.get(f"/ui/batches/{batch_id}")
    assert shown.status_code == 200
    assert (
        '<p class="waiting">waiting: no worker has the game alquerque (install playtester on a '
        "worker)</p>"
    ) in shown.text
    roster.advertise(broker, "this@host", {"alquerque": "playtester"})
    assert 'class="waiting"' not in api.get(f"/ui/batches/{batch_id}").text
