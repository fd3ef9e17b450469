"""The real server (uvicorn over TCP) in keyless local mode: redirects never lead to the host a
client names, and writes a browser sends from another site are refused, while the server's own
pages and clients that are no browser keep working."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from analysis_data import random_plan
from api_support import client_for, make_api
from service_fixtures import ROOT, Api

from storage import crud
from storage.db import get_engine, upgrade
from storage.models import BatchStatus
from storage.settings import Settings

pytestmark = pytest.mark.timeout(120)

EVIL = "evil.example"


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One SQLite file for the module's server (each test stores its own batches)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('origin') / 'playtester.db'}"
    upgrade(url)
    return url


@pytest.fixture(scope="module")
def api(database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """``uvicorn api.app:app`` with ``API_KEY`` unset (the default outside compose)."""
    unset = {"BROKER_URL", "API_KEY", "API_KEY_READS", "PUBLIC_URL", "TRUSTED_PROXIES"}
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(DATABASE_URL=database, PYTHONPATH=str(ROOT))
    server = Api(env, tmp_path_factory.mktemp("api"))
    yield server
    server.stop()


def stored_batch(url: str) -> str:
    """A queued batch stored directly: no one plays it, so its status stays put."""
    return crud.create_batch(get_engine(url), plan=random_plan(Settings())).id


def status(url: str, batch_id: str) -> str:
    batch = crud.get_batch(get_engine(url), batch_id)
    assert batch is not None
    return str(batch.status)


def batch_count(url: str) -> int:
    return len(crud.list_batches(get_engine(url), limit=1000))


# --------------------------------------------------------------------------- redirects


@pytest.mark.parametrize(
    ("method", "path", "target"),
    [
        ("GET", "/batches/", "/batches"),
        ("GET", "/batches/?limit=1&offset=0", "/batches?limit=1&offset=0"),
        ("GET", "/games/", "/games"),
        ("GET", "/ui/new/", "/ui/new"),
        ("GET", "/docs/", "/docs"),
        ("POST", "/batches/", "/batches"),
    ],
)
def test_trailing_slash_redirects_never_name_the_clients_host(
    api: Api, method: str, path: str, target: str
) -> None:
    alias = f"app.localhost:{api.port}"  # a name served here, but not the one connected to
    answer = api.client.request(method, path, headers={"Host": alias}, json={})
    assert answer.status_code == 307, answer.text
    location = answer.headers["location"]
    assert location == target  # relative: the client stays on the host it asked
    assert "app.localhost" not in answer.text


def test_a_redirect_never_names_another_host_by_a_double_slash(api: Api) -> None:
    for path in (f"//{EVIL}/", f"/\\{EVIL}/", f"//{EVIL}//"):
        answer = api.client.get(httpx.URL(api.url).copy_with(raw_path=path.encode()))
        location = answer.headers.get("location", "")
        assert not location.startswith("//") and EVIL not in location, (path, location)


def test_a_client_following_the_redirect_gets_the_page(api: Api) -> None:
    alias = f"app.localhost:{api.port}"
    answer = api.client.get("/batches/", headers={"Host": alias}, follow_redirects=True)
    assert answer.status_code == 200 and answer.url.path == "/batches"


# --------------------------------------------------------------------------- cross-site writes


def test_a_form_from_another_site_cancels_nothing(api: Api, database: str) -> None:
    batch_id = stored_batch(database)
    form = {"content-type": "application/x-www-form-urlencoded"}
    for headers in (
        {"Origin": f"http://{EVIL}", "Sec-Fetch-Site": "cross-site"},
        {"Origin": f"http://{EVIL}"},  # a browser that sends no Sec-Fetch-* headers
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},  # a sibling site is another origin too
        {"Origin": "null"},  # a sandboxed frame or a privacy-minded redirect
        {"Origin": f"http://127.0.0.1.{EVIL}:{api.port}"},
    ):
        answer = api.client.post(f"/batches/{batch_id}/cancel", headers={**form, **headers})
        assert answer.status_code == 403, (headers, answer.text)
        assert "refused" in answer.json()["message"]
        assert status(database, batch_id) == BatchStatus.QUEUED


def test_a_form_from_another_site_creates_no_batch(api: Api, database: str) -> None:
    form = {"game": "alquerque", "agent.0": "random", "agent.1": "random", "matches": "2"}
    before = batch_count(database)
    answer = api.client.post(
        "/ui/new", data=form, headers={"Origin": f"http://{EVIL}", "Sec-Fetch-Site": "cross-site"}
    )
    assert answer.status_code == 403
    assert batch_count(database) == before


def test_the_servers_own_pages_and_plain_clients_still_write(api: Api, database: str) -> None:
    own = {"Origin": api.url, "Sec-Fetch-Site": "same-origin"}
    form = {"game": "alquerque", "agent.0": "random", "agent.1": "random", "matches": "2"}
    made = api.client.post("/ui/new", data=form, headers=own)
    assert made.status_code == 303, made.text
    assert made.headers["location"].startswith("/ui/batches/")
    # A browser that sends Origin but no Sec-Fetch-Site (older ones) from this server's page.
    batch_id = stored_batch(database)
    cancelled = api.client.post(f"/batches/{batch_id}/cancel", headers={"Origin": api.url})
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    # The command line, scripts and curl send no Origin: they pass.
    batch_id = stored_batch(database)
    assert api.client.post(f"/batches/{batch_id}/cancel").status_code == 200
    body = {"game": "alquerque", "agents": ["random"], "matches": 2}
    assert api.client.post("/batches", json=body).status_code == 202
    # A navigation the user typed (Sec-Fetch-Site: none) is no other site's doing.
    batch_id = stored_batch(database)
    typed = api.client.post(f"/batches/{batch_id}/cancel", headers={"Sec-Fetch-Site": "none"})
    assert typed.status_code == 200


# --------------------------------------------------------------------------- served names


def test_a_rebound_name_is_refused_though_host_and_origin_agree(api: Api, database: str) -> None:
    """DNS rebinding: the attacker's name now resolves to this server, so its page is
    same-origin with itself and Origin matches Host; only the name gives it away."""
    before = batch_count(database)
    rebound = f"{EVIL}:{api.port}"
    browser = {"Host": rebound, "Origin": f"http://{rebound}", "Sec-Fetch-Site": "same-origin"}
    body = {"game": "alquerque", "agents": ["random"], "matches": 2}
    answer = api.client.post("/batches", json=body, headers=browser)
    assert answer.status_code == 403, answer.text
    assert "host" in answer.json()["message"]
    assert batch_count(database) == before
    # Reading through the rebound name is refused as well: the page would read the answers.
    for path in ("/batches", "/"):
        read = api.client.get(path, headers={"Host": rebound, "Sec-Fetch-Site": "same-origin"})
        assert read.status_code == 403, (path, read.status_code)


def test_a_foreign_host_is_refused_without_any_browser_header(api: Api, database: str) -> None:
    """An older browser sends neither Origin nor Sec-Fetch-* on a read: the Host alone is what
    a rebinding page cannot hide, so it is checked on every request."""
    rebound = f"{EVIL}:{api.port}"
    for path in ("/batches", "/", "/healthz", "/batches/", "/openapi.json"):
        read = api.client.get(path, headers={"Host": rebound})
        assert read.status_code == 403, (path, read.status_code)
        assert EVIL in read.json()["message"]
    batch_id = stored_batch(database)
    assert (
        api.client.post(f"/batches/{batch_id}/cancel", headers={"Host": rebound}).status_code == 403
    )
    assert status(database, batch_id) == BatchStatus.QUEUED
    # The names it is served at still answer, browser or not.
    for host in (f"127.0.0.1:{api.port}", f"localhost:{api.port}", f"[::1]:{api.port}"):
        assert api.client.get("/batches", headers={"Host": host}).status_code == 200, host


def test_the_in_process_test_clients_host_is_the_servers_own(migrated_sqlite_url: str) -> None:
    """The test client connects as ``testserver``, which is the server's own name there."""
    app, _ = make_api(migrated_sqlite_url)
    with client_for(app) as client:
        assert client.get("/batches").status_code == 200
        assert client.get("/batches", headers={"Host": EVIL}).status_code == 403


def test_the_origins_scheme_must_be_the_servers(api: Api, database: str) -> None:
    batch_id = stored_batch(database)
    https = {"Origin": api.url.replace("http://", "https://"), "Sec-Fetch-Site": "same-origin"}
    answer = api.client.post(f"/batches/{batch_id}/cancel", headers=https)
    assert answer.status_code == 403, answer.text
    assert status(database, batch_id) == BatchStatus.QUEUED


def test_loopback_names_and_the_bind_address_are_served(api: Api, database: str) -> None:
    for host in (f"127.0.0.1:{api.port}", f"localhost:{api.port}", f"app.localhost:{api.port}"):
        browser = {"Host": host, "Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"}
        batch_id = stored_batch(database)
        answer = api.client.post(f"/batches/{batch_id}/cancel", headers=browser)
        assert answer.status_code == 200, (host, answer.text)
        assert api.client.get("/", headers=browser).status_code == 200, host


def test_public_urls_name_and_scheme_are_served(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    upgrade(url)
    app, _ = make_api(url, public_url="https://play.example.org")
    public = {"Host": "play.example.org", "Sec-Fetch-Site": "same-origin"}
    body = {"game": "alquerque", "agents": ["random"], "matches": 2}
    with client_for(app) as client:
        made = client.post(
            "/batches", json=body, headers={**public, "Origin": "https://play.example.org"}
        )
        assert made.status_code == 202, made.text
        plain = client.post(
            "/batches", json=body, headers={**public, "Origin": "http://play.example.org"}
        )
        assert plain.status_code == 403, plain.text
        other = {"Host": "other.example.org", "Origin": "https://other.example.org"}
        assert client.post("/batches", json=body, headers=other).status_code == 403
