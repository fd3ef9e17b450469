"""Submitting over HTTP: Idempotency-Key replays, the app's own limits, retries of the client,
and a backend that cannot run refused when the batch is asked for (over HTTP,
``submit``, ``run``)."""

from __future__ import annotations

import httpx
import pytest
from api_support import client_for, forget_settings, make_api, point_settings_at, route_cli_to
from sqlalchemy import func, select, text
from typer.testing import CliRunner

from api.cli import app as cli
from storage.crud import BATCH
from storage.db import get_engine
from storage.submissions import OUTBOX

GOOD = {"game": "alquerque", "agents": ["random", "random"], "matches": 10, "chunk_size": 5}


@pytest.fixture
def api(migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch):
    point_settings_at(monkeypatch, migrated_sqlite_url)
    app, dispatcher = make_api(migrated_sqlite_url)
    with client_for(app) as client:
        yield client, dispatcher, migrated_sqlite_url
    forget_settings()


def batch_count(url: str) -> int:
    with get_engine(url).connect() as conn:
        return int(conn.execute(select(func.count()).select_from(BATCH)).scalar_one())


def test_a_retried_post_with_the_same_key_returns_the_first_batch(api) -> None:
    client, dispatcher, url = api
    key = {"Idempotency-Key": "3f1c2a9e-retry-me"}
    first = client.post("/batches", json=GOOD, headers=key)
    assert first.status_code == 202 and "Idempotent-Replayed" not in first.headers
    # The same request again, its keys in another order: the same batch, not a new one.
    again = client.post("/batches", json=dict(reversed(list(GOOD.items()))), headers=key)
    assert again.status_code == 200, again.text
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["seed"] == first.json()["seed"]  # drawn once, by the first
    assert batch_count(url) == 1
    assert dispatcher.started == [first.json()["id"]]
    other = client.post("/batches", json=GOOD, headers={"Idempotency-Key": "another"})
    assert other.status_code == 202 and other.json()["id"] != first.json()["id"]
    unkeyed = client.post("/batches", json=GOOD)
    assert unkeyed.status_code == 202
    assert batch_count(url) == 3


def test_the_same_key_with_another_body_is_refused_and_stores_nothing(api) -> None:
    client, dispatcher, url = api
    key = {"Idempotency-Key": "k-1"}
    first = client.post("/batches", json=GOOD, headers=key)
    assert first.status_code == 202
    changed = client.post("/batches", json={**GOOD, "matches": 11}, headers=key)
    assert changed.status_code == 422
    body = changed.json()
    assert body["field"] == "Idempotency-Key"
    assert first.json()["id"] in body["message"] and "different request body" in body["message"]
    assert batch_count(url) == 1 and len(dispatcher.started) == 1


def test_a_refused_request_does_not_use_up_its_key(api) -> None:
    client, _, url = api
    key = {"Idempotency-Key": "k-2"}
    bad = client.post("/batches", json={**GOOD, "game": "chess"}, headers=key)
    assert bad.status_code == 422 and bad.json()["field"] == "game"
    assert batch_count(url) == 0
    good = client.post("/batches", json=GOOD, headers=key)
    assert good.status_code == 202


@pytest.mark.parametrize("value", ["", "x" * 256, "has space", "naïve"])
def test_malformed_keys_are_422_naming_the_header(api, value: str) -> None:
    client, _, url = api
    response = client.post("/batches", json=GOOD, headers={"Idempotency-Key": value.encode()})
    assert response.status_code == 422, response.text
    assert response.json()["field"] == "Idempotency-Key"
    assert batch_count(url) == 0


def test_a_submission_stores_its_start_request_with_the_batch(api) -> None:
    client, _, url = api
    batch = client.post("/batches", json=GOOD).json()
    # The recording dispatcher delivers nothing, so the request waits in the outbox.
    with get_engine(url).connect() as conn:
        waiting = conn.execute(select(OUTBOX.c.batch_id)).scalars().all()
    assert waiting == [batch["id"]]


def test_keys_are_scoped_per_api_key(migrated_sqlite_url: str) -> None:
    """One key under two API keys makes two batches: one client cannot replay another's."""
    url = migrated_sqlite_url
    made = []
    for api_key in ("first-key", "second-key"):
        app, _ = make_api(url, api_key=api_key)
        with client_for(app) as client:
            response = client.post(
                "/batches",
                json=GOOD,
                headers={"Authorization": f"Bearer {api_key}", "Idempotency-Key": "shared"},
            )
        assert response.status_code == 202
        made.append(response.json()["id"])
    assert made[0] != made[1]
    with get_engine(url).connect() as conn:
        scopes = conn.execute(text("SELECT scope FROM idempotency_key")).scalars().all()
    assert len(set(scopes)) == 2 and "" not in scopes


def test_the_app_settings_bound_the_batch_size(
    migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """create_app(Settings(...)) limits apply, whatever the environment allows."""
    from storage.settings import get_settings

    point_settings_at(monkeypatch, migrated_sqlite_url)
    monkeypatch.setenv("MAX_MATCHES_PER_BATCH", "1000")
    get_settings.cache_clear()
    try:
        assert get_settings().max_matches_per_batch == 1000
        app, _ = make_api(migrated_sqlite_url, max_matches_per_batch=10)
        with client_for(app) as client:
            over = client.post("/batches", json={**GOOD, "matches": 11})
            assert over.status_code == 422, over.text
            assert over.json()["field"] == "matches" and "10" in over.json()["message"]
            assert client.post("/batches", json={**GOOD, "matches": 10}).status_code == 202
    finally:
        forget_settings()


class LostAnswers(httpx.BaseTransport):
    """Passes requests to the app, but loses the answers of the first ``lose`` of them, as a
    network that drops a connection after the server did its work."""

    def __init__(self, inner: httpx.BaseTransport, lose: int) -> None:
        self.inner = inner
        self.lose = lose
        self.keys: list[str | None] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.keys.append(request.headers.get("Idempotency-Key"))
        response = self.inner.handle_request(request)
        if self.lose > 0:
            self.lose -= 1
            response.read()
            raise httpx.ReadError("connection reset by peer", request=request)
        return response


def test_the_client_retries_with_its_key_and_makes_one_batch(api) -> None:
    from api.client import ServiceClient

    client, dispatcher, url = api
    transport = LostAnswers(client._transport, lose=2)
    http = httpx.Client(transport=transport, base_url="http://testserver")
    service = ServiceClient("http://testserver", http=http, retry_delays=(0.0, 0.0, 0.0))
    batch = service.submit(dict(GOOD))
    assert len(transport.keys) == 3
    assert transport.keys[0] is not None and len(set(transport.keys)) == 1
    assert batch_count(url) == 1 and dispatcher.started == [batch["id"]]
    # Out of retries: the failure is reported, and still only one batch per key exists.
    transport.lose = 5
    from api.client import ServiceError

    with pytest.raises(ServiceError, match="cannot reach"):
        service.submit(dict(GOOD))
    assert len(set(transport.keys[3:])) == 1 and len(transport.keys) == 7
    assert batch_count(url) == 2


def test_the_client_does_not_retry_a_refusal(api) -> None:
    from api.client import ServiceClient, ServiceError

    client, _, _ = api
    transport = LostAnswers(client._transport, lose=0)
    http = httpx.Client(transport=transport, base_url="http://testserver")
    service = ServiceClient("http://testserver", http=http, retry_delays=(0.0, 0.0))
    with pytest.raises(ServiceError) as refused:
        service.submit({**GOOD, "game": "chess"})
    assert refused.value.status == 422 and len(transport.keys) == 1


def test_cli_submit_with_a_key_twice_makes_one_batch(api, monkeypatch) -> None:
    from typer.testing import CliRunner

    from api.cli import app as cli

    client, dispatcher, url = api
    route_cli_to(client.app, monkeypatch)
    runner = CliRunner()
    command = ["submit", "alquerque", "--agents", "random", "-n", "4", "--chunk-size", "2"]
    first = runner.invoke(cli, [*command, "--idempotency-key", "nightly-run-7"])
    again = runner.invoke(cli, [*command, "--idempotency-key", "nightly-run-7"])
    assert first.exit_code == 0 and again.exit_code == 0, first.output + again.output
    assert dispatcher.started[0] in first.stdout and dispatcher.started[0] in again.stdout
    assert batch_count(url) == 1
    fresh = runner.invoke(cli, command)
    assert fresh.exit_code == 0 and batch_count(url) == 2


COMPILED_ON_ABALONE = {
    "game": "abalone",
    "agents": [{"name": "mcts", "backend": "compiled", "iterations": 10}, "random"],
    "matches": 2,
}
"""With Abalone's kernel left out of the declaration, every match of this batch would fail."""


def _without_abalone_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every registered game with the generic ``mcts`` has a kernel: narrow the declaration
    so that Abalone stands for a game without one."""
    monkeypatch.setattr("engines.compiled.kernels.KERNEL_GAMES", ("alveoles", "alquerque"))


def test_post_batches_refuses_a_compiled_backend_on_a_game_without_kernel(api, monkeypatch) -> None:
    client, dispatcher, url = api
    _without_abalone_kernel(monkeypatch)
    refused = client.post("/batches", json=COMPILED_ON_ABALONE)
    assert refused.status_code == 422, refused.text
    assert refused.json()["field"] == "agents[0].backend"
    assert "abalone" in refused.json()["message"]
    assert batch_count(url) == 0 and dispatcher.started == []
    # The same request on a game with a kernel, and with the Python search, is accepted.
    for body in (
        {**COMPILED_ON_ABALONE, "game": "alquerque"},
        {**COMPILED_ON_ABALONE, "agents": [{"name": "mcts", "backend": "python"}, "random"]},
    ):
        assert client.post("/batches", json=body).status_code == 202
    assert batch_count(url) == 2


def test_playtester_submit_refuses_it_naming_the_field(api, monkeypatch) -> None:
    client, dispatcher, url = api
    _without_abalone_kernel(monkeypatch)
    route_cli_to(client.app, monkeypatch)
    result = CliRunner().invoke(
        cli, ["submit", "abalone", "-a", "mcts:backend=compiled,iterations=10,random", "-n", "2"]
    )
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert lines[0].endswith("(agents[0].backend)")
    assert batch_count(url) == 0 and dispatcher.started == []


def test_playtester_run_refuses_it_before_storing_anything(
    migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _without_abalone_kernel(monkeypatch)
    args = ["run", "abalone", "-a", "mcts:backend=compiled,iterations=10,random", "-n", "2"]
    result = CliRunner().invoke(cli, [*args, "--db", migrated_sqlite_url])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: agents[0].backend 'compiled'"), result.stderr
    assert "abalone" in lines[0]
    assert batch_count(migrated_sqlite_url) == 0


class BusyFirst(httpx.BaseTransport):
    """Answers the first ``busy`` requests 429 with ``Retry-After`` itself, as a server at its
    limit of imports or OpenSpiel checks does, then hands requests to ``inner``."""

    def __init__(self, inner: httpx.BaseTransport, busy: int, retry_after: str = "0") -> None:
        self.inner = inner
        self.busy = busy
        self.retry_after = retry_after
        self.paths: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        if self.busy > 0:
            self.busy -= 1
            body = {"message": "as many as allowed are running; retry later", "field": None}
            return httpx.Response(429, json=body, headers={"Retry-After": self.retry_after})
        return self.inner.handle_request(request)


def test_the_client_waits_out_a_busy_server_and_then_submits_once(api) -> None:
    from api.client import ServiceClient, ServiceError

    client, dispatcher, url = api
    transport = BusyFirst(client._transport, busy=2)
    http = httpx.Client(transport=transport, base_url="http://testserver")
    service = ServiceClient("http://testserver", http=http, retry_delays=(0.0, 0.0, 0.0))
    batch = service.submit(dict(GOOD))
    assert transport.paths == ["/batches"] * 3
    assert batch_count(url) == 1 and dispatcher.started == [batch["id"]]
    # Busy for longer than the retries last: the server's own message, its status and its wait.
    transport.busy = 4
    with pytest.raises(ServiceError, match="retry later") as busy:
        service.submit(dict(GOOD))
    assert busy.value.status == 429 and busy.value.retry_after == 0.0
    assert batch_count(url) == 1


def test_an_import_is_sent_again_whole_after_a_busy_answer(api, tmp_path) -> None:
    from api.client import ServiceClient
    from storage.archive import export_batch
    from storage.db import get_engine

    client, _, url = api
    made = client.post("/batches", json=GOOD).json()["id"]
    client.post(f"/batches/{made}/cancel")
    folder = tmp_path / made
    export_batch(get_engine(url), made, folder)
    client.delete(f"/batches/{made}")
    assert batch_count(url) == 0
    transport = BusyFirst(client._transport, busy=1)
    http = httpx.Client(transport=transport, base_url="http://testserver")
    service = ServiceClient("http://testserver", http=http, retry_delays=(0.0,))
    answer = service.import_archive(folder)
    # The second attempt read the zip from its start: the whole archive arrived and was taken.
    assert transport.paths == ["/batches/import"] * 2
    assert answer["id"] == made and answer["created"] is True
    assert batch_count(url) == 1
