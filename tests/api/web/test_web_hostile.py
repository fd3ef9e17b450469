"""Hostile values in the dashboard's requests, on SQLite and on PostgreSQL: every query and path
parameter of every ``/ui/*`` route (read from the app's own routes) answers a 4xx, never a 500,
and the pages answer with a page; the storage queries that filter on typed text hold too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from analysis_data import played_batch
from api_support import client_for, make_api
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

import api.web.studies as web_studies
from storage.crud import NotFound, list_batches, resolve_batch_id
from storage.db import get_engine
from storage.queries import count_batches, list_matches_page

HOSTILE = {
    "nul": "\x00",
    "nul-inside": "ab\x00cd",
    "over-long": "9" * 5000,
    "wrong-type": "[]",
}
"""What each parameter is sent in turn: a NUL byte (PostgreSQL text cannot hold one), one
inside otherwise harmless text, a value far past any bound, and a value of no declared type."""


def dashboard_routes(app: Any) -> list[tuple[str, str, APIRoute]]:
    """(method, path, route) of every route of the dashboard: ``/`` and ``/ui/*``."""
    found = []
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        path = context.path or ""
        if isinstance(route, APIRoute) and (path == "/" or path.startswith("/ui/")):
            found.extend((method, path, route) for method in sorted(context.methods or ()))
    return found


def parameters(route: APIRoute, kind: str) -> list[str]:
    """Names (as sent) of the route's ``kind`` parameters, its dependencies' included."""
    names: list[str] = []
    pending = [route.dependant]
    while pending:
        dependant = pending.pop()
        names.extend(p.alias for p in getattr(dependant, f"{kind}_params"))
        pending.extend(dependant.dependencies)
    return names


@pytest.fixture
def site(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[TestClient, Any, dict[str, str]]]:
    """The app on a database holding one really played batch, and one published study page;
    the path values that reach them."""
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "demo.md").write_text("# Demo\n\n![seats](demo-1-seats.svg)\n")
    (pages / "demo.json").write_text(json.dumps({"format": "playtester-study", "title": "Demo"}))
    (pages / "demo-1-seats.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    monkeypatch.setattr(web_studies, "PAGES", pages)
    app, _ = make_api(db_url)
    batch_id = played_batch(db_url, "alquerque", ["random", "random"], 2)
    good = {"batch_id": batch_id, "index": "0", "name": "demo", "file": "demo-1-seats.svg"}
    with client_for(app) as client:
        yield client, app, good


def assert_refused(answer: Any, route: APIRoute, what: str) -> None:
    assert 400 <= answer.status_code < 500, (what, answer.status_code, answer.text[:300])
    kind = answer.headers["content-type"]
    if route.response_class is HTMLResponse:
        assert kind.startswith("text/html"), (what, kind)
        assert "<h1>" in answer.text and "Traceback" not in answer.text
    else:
        body = answer.json()
        assert body["message"] and "field" in body, (what, body)


def test_every_dashboard_parameter_refuses_hostile_values(site: Any) -> None:
    client, app, good = site
    routes = dashboard_routes(app)
    # The walk covers what the app has, and the app has what docs/dashboard.md lists.
    assert {path for _, path, _ in routes} >= {
        "/",
        "/ui/live",
        "/ui/new",
        "/ui/compare",
        "/ui/batches/{batch_id}",
        "/ui/batches/{batch_id}/matches/{index}",
        "/ui/batches/{batch_id}/matches/{index}/positions",
        "/ui/studies",
        "/ui/studies/{name}",
        "/ui/studies/figures/{file}",
    }
    walked = 0
    for method, path, route in routes:
        if method != "GET":
            continue
        url = path.format(**good)
        assert client.get(url).status_code == 200, url  # the walk starts from a good request
        for name in parameters(route, "query"):
            for what, value in HOSTILE.items():
                answer = client.get(url, params={name: value})
                assert_refused(answer, route, f"{path}?{name}= {what}")
                walked += 1
        for name in parameters(route, "path"):
            for what, value in HOSTILE.items():
                bad = path.format(**{**good, name: value.replace("\x00", "%00")})
                assert_refused(client.get(bad), route, f"{path} {name}= {what}")
                walked += 1
    assert walked >= 4 * 14  # every query and path parameter above, four values each
    print(f"/ui walk: {walked} hostile requests over {len(routes)} routes, no 5xx")


def test_the_batch_pages_filter_takes_only_known_endings(site: Any) -> None:
    client, _, good = site
    page = f"/ui/batches/{good['batch_id']}"
    assert client.get(page, params={"ended": "normal"}).status_code == 200
    assert client.get(page, params={"ended": "failed"}).status_code == 200
    refused = client.get(page, params={"ended": "no-such-ending"})
    assert refused.status_code == 422 and refused.headers["content-type"].startswith("text/html")
    assert "ended" in refused.text  # the page names the field at fault


def test_the_new_batch_form_refuses_hostile_fields(site: Any) -> None:
    client, _, _ = site
    form = {
        "game": "alquerque",
        "players": "2",
        "agent.0": "random",
        "agent.1": "random",
        "seat_policy": "fixed",
        "matches": "2",
        "seed": "1",
        "max_plies": "50",
        "chunk_size": "1",
    }
    for field in form:
        for what, value in HOSTILE.items():
            answer = client.post("/ui/new", data={**form, field: value})
            assert 400 <= answer.status_code < 500, (field, what, answer.status_code)
            assert answer.headers["content-type"].startswith("text/html"), (field, what)


def test_storage_filters_on_typed_text_never_reach_the_database_with_a_nul(db_url: str) -> None:
    batch_id = played_batch(db_url, "alquerque", ["random", "random"], 2)
    engine = get_engine(db_url)
    assert list_matches_page(engine, batch_id, ended_by="normal\x00")[1] == 0
    assert list_matches_page(engine, batch_id + "\x00", failed=True) == ([], 0)
    assert list_batches(engine, game="alquerque\x00") == []
    assert list_batches(engine, status="\x00") == []
    assert count_batches(engine, game="\x00", status="done") == 0
    with pytest.raises(NotFound):
        resolve_batch_id(engine, batch_id[:6] + "\x00")
    # The same calls without the NUL find the batch: the filters work.
    assert count_batches(engine, game="alquerque") == 1
    assert resolve_batch_id(engine, batch_id[:6]) == batch_id
