"""Hostile and careless requests against the real app, on SQLite and on PostgreSQL: every one
gets a 4xx with ``{"message", "field"}``, never a 500, and nothing is stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from api_support import RecordingDispatcher, client_for, forget_settings, make_api
from api_support import point_settings_at as point_settings
from fastapi.testclient import TestClient
from sqlalchemy import text

GOOD = {"game": "alquerque", "agents": ["random", "random"], "matches": 10, "chunk_size": 5}
JSON = {"content-type": "application/json"}


@pytest.fixture
def api(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TestClient, Any, str]]:
    point_settings(monkeypatch, db_url)
    app, dispatcher = make_api(db_url)
    with client_for(app) as client:
        yield client, dispatcher, db_url
    forget_settings()


def stored_batches(url: str) -> int:
    from storage.db import get_engine

    with get_engine(url).connect() as conn:
        return int(conn.execute(text("SELECT count(*) FROM batch")).scalar_one())


def assert_error_shape(response: Any, status: int | None = None) -> dict[str, Any]:
    """A 4xx whose JSON body has a non-empty ``message`` and a ``field`` key."""
    if status is None:
        assert 400 <= response.status_code < 500, (response.status_code, response.text)
    else:
        assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert isinstance(body, dict) and set(body) >= {"message", "field"}, body
    assert isinstance(body["message"], str) and body["message"].strip(), body
    assert "Traceback" not in body["message"]
    return body


def refused(api: tuple[TestClient, RecordingDispatcher, str], **post: Any) -> dict[str, Any]:
    """POST /batches, expect a 422, check nothing was stored or started; return the body."""
    client, dispatcher, url = api
    body = assert_error_shape(client.post("/batches", **post), 422)
    assert stored_batches(url) == 0
    assert dispatcher.started == []
    return body


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("agent", "field", "problem"),
    [
        ({"name": "mcts", "exploration": "nan"}, "agents[1].exploration", "finite"),
        ({"name": "mcts", "exploration": "NaN"}, "agents[1].exploration", "finite"),
        ({"name": "mcts", "exploration": "inf"}, "agents[1].exploration", "finite"),
        ({"name": "mcts", "exploration": "-Infinity"}, "agents[1].exploration", "finite"),
        ({"name": "mcts", "exploration": 10**400}, "agents[1].exploration", "too large"),
        ({"name": "mcts", "exploration": 1e300}, "agents[1].exploration", "at most 100"),
        ({"name": "mcts", "iterations": 1e300}, "agents[1].iterations", "at most"),
        ({"name": "easy", "greedy_share": "nan"}, "agents[1].greedy_share", "finite"),
    ],
)
def test_agent_parameters_must_be_finite_and_bounded(
    api, agent: dict, field: str, problem: str
) -> None:
    body = refused(api, json={**GOOD, "agents": ["random", agent]})
    assert body["field"] == field and problem in body["message"]
    assert len(body["message"]) < 300  # a huge value is not echoed whole


@pytest.mark.parametrize(
    "raw", [b"1e999", b"-1e999", b"1" + b"0" * 400, b"NaN", b"Infinity", b"-Infinity"]
)
def test_json_numbers_beyond_floats_are_refused(api, raw: bytes) -> None:
    body = b'{"game":"alquerque","agents":["random",{"name":"mcts","exploration":%s}],"matches":3}'
    assert refused(api, content=body % raw, headers=JSON)["field"] == "agents[1].exploration"
    layout = b"[" + b",".join([raw] * 64) + b"]"
    body = b'{"game":"alveoles","agents":["greedy"],"matches":3,"options":{"layout":%s}}'
    assert refused(api, content=body % layout, headers=JSON)["field"] == "options.layout"


def test_alveoles_weights_must_be_finite(api) -> None:
    agents = [{"name": "value", "want_high": "nan"}]
    body = refused(api, json={**GOOD, "game": "alveoles", "agents": agents})
    assert body["field"] == "agents[0].want_high"


@pytest.mark.parametrize(
    ("layout", "problem"),
    [
        ([[10**400] * 8] * 8, "at most 1000000"),
        ([[1_000_001] * 8] * 8, "at most 1000000"),
        ([1.5] * 64, "whole number"),
    ],
)
def test_layout_values_are_bounded(api, layout: list, problem: str) -> None:
    options = {"layout": layout}
    body = refused(api, json={**GOOD, "game": "alveoles", "agents": ["greedy"], "options": options})
    assert body["field"] == "options.layout" and problem in body["message"]


def test_the_largest_layout_value_plays(api) -> None:
    client, _, _ = api
    layout = [[1_000_000] * 8] * 8
    response = client.post(
        "/batches",
        json={**GOOD, "game": "alveoles", "agents": ["greedy"], "options": {"layout": layout}},
    )
    assert response.status_code == 202, response.text
    from engines import load_game, make_agent, play_match

    game = load_game("alveoles", **response.json()["options"])
    result = play_match(game, [make_agent(game, "greedy")] * 2, seed=3)
    # Every square is taken by the end: 64 squares worth 10^6 each, counted exactly.
    assert sum(p["square_points"] for p in result.stats["per_seat"]) == 64 * 1_000_000
    assert result.ended_by == "normal"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"matches": True}, "matches"),
        ({"matches": 5.0}, "matches"),
        ({"matches": "5"}, "matches"),
        ({"players": True}, "players"),
        ({"seed": False}, "seed"),
        ({"chunk_size": True}, "chunk_size"),
        ({"max_plies": True}, "max_plies"),
        ({"matches": 2**31}, "matches"),
        ({"max_plies": 2**31}, "max_plies"),
        ({"seed": 2**63}, "seed"),
    ],
)
def test_batch_numbers_are_strict_whole_numbers(api, change: dict, field: str) -> None:
    body = refused(api, json={**GOOD, **change})
    assert body["field"] == field


def test_stop_rule_numbers_must_be_finite(api) -> None:
    rule = {"agents": ["random", "mcts"], "elo0": 0}
    for elo1 in ("nan", 10**400):
        body = refused(
            api, json={**GOOD, "agents": ["random", "mcts"], "stop_rule": {**rule, "elo1": elo1}}
        )
        assert body["field"] == "stop_rule.elo1"


# --------------------------------------------------------------------------- option names


@pytest.mark.parametrize("key", ["players", "name", "game", "matches", "seed"])
def test_option_names_that_are_arguments_are_refused(api, key: str) -> None:
    body = refused(api, json={**GOOD, "options": {key: 3}})
    assert body["field"] == f"options.{key}"


def test_options_and_parameters_are_stored_normalised(api) -> None:
    client, _, url = api
    response = client.post(
        "/batches",
        json={
            **GOOD,
            "game": "alveoles",
            "agents": [{"name": "mcts", "rollout": " RANDOM ", "iterations": 5}],
            "options": {"layout": "  CLASSIC ", "square_bonus": " Disjoint"},
        },
    )
    assert response.status_code == 202, response.text
    batch = response.json()
    assert batch["options"] == {"layout": "classic", "square_bonus": "disjoint"}
    assert {a["rollout"] for a in batch["agents"]} == {"random"}
    from storage.crud import get_batch
    from storage.db import get_engine

    stored = get_batch(get_engine(url), batch["id"])
    assert stored is not None and stored.options == batch["options"]
    grid = [list(range(8 * r + 1, 8 * r + 9)) for r in range(8)]
    flat = [float(v) for row in grid for v in row]
    again = client.post(
        "/batches",
        json={**GOOD, "game": "alveoles", "agents": ["greedy"], "options": {"layout": flat}},
    )
    assert again.status_code == 202 and again.json()["options"]["layout"] == grid


# --------------------------------------------------------------------------- NUL bytes


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/batches/ab%00cd"),
        ("GET", "/batches/%00"),
        ("GET", "/batches/ab%00cd/matches"),
        ("GET", "/batches/ab%00cd/matches/0"),
        ("GET", "/batches/ab%00cd/export"),
        ("GET", "/batches/ab%00cd/report"),
        ("GET", "/batches/ab%00cd/report.csv"),
        ("GET", "/batches/ab%00cd/report.html"),
        ("POST", "/batches/ab%00cd/cancel"),
        ("GET", "/batches?game=%00"),
        ("GET", "/batches?game=alq%00uerque"),
        ("GET", "/compare?a=%00abc&b=abcd"),
        ("GET", "/compare?a=abcd&b=ab%00cd"),
        ("GET", "/batches?key=%00"),
        ("GET", "/batches?key=ab%00cd"),
        ("GET", "/batches?key=a%20b"),
    ],
)
def test_nul_bytes_in_paths_and_queries_are_4xx(api, method: str, path: str) -> None:
    client, _, _ = api
    body = assert_error_shape(client.request(method, path))
    assert body["field"] in {"batch_id", "game", "a", "b", "key"}


def test_a_key_lookup_finds_only_what_a_key_can_be(api) -> None:
    client, _, _ = api
    made = client.post("/batches", json=GOOD, headers={"Idempotency-Key": "k-1"}).json()["id"]
    found = client.get("/batches", params={"key": "k-1"}).json()["items"]
    assert [b["id"] for b in found] == [made]
    assert client.get("/batches", params={"key": "k-2"}).json()["items"] == []
    # What no header could have stored is refused by name, as the header refuses it.
    nul = client.get("/batches", params={"key": "k\x00-1"})
    assert assert_error_shape(nul, 422)["field"] == "key"


LONE_SURROGATE = "\\ud800"
"""A JSON escape Python reads as a lone surrogate: text no database can store (no UTF-8)."""


@pytest.mark.parametrize(
    "raw",
    [
        '"game": "alq{s}uerque"',
        '"agents": ["random", "ran{s}dom"]',
        '"agents": ["random", {{"name": "mcts", "rollout": "game{s}"}}]',
        '"options": {{"no_capture{s}": 5}}',
        '"agents": ["random", "mcts"], "stop_rule": {{"agents": ["random", "mcts{s}"]}}',
        '"variation": {{"kind": "openings", "source": "book", "book": [["b2-c3{s}"]]}}',
    ],
)
def test_lone_surrogates_in_the_body_are_refused(api, raw: str) -> None:
    fields = {**GOOD}
    for key in ("game", "agents", "options", "stop_rule", "variation"):
        if f'"{key}"' in raw:
            fields.pop(key, None)
    body = json.dumps(fields)[:-1] + ", " + raw.format(s=LONE_SURROGATE) + "}"
    refused(api, content=body.encode(), headers=JSON)


@pytest.mark.parametrize(
    "change",
    [
        {"game": "alq\x00uerque"},
        {"agents": ["random", "ran\x00dom"]},
        {"agents": ["random", {"name": "mcts", "rollout": "game\x00"}]},
        {"options": {"no_capture\x00": 5}},
        {"game": "alveoles", "agents": ["greedy"], "options": {"layout": "classic\x00"}},
        {"agents": ["random", "mcts"], "stop_rule": {"agents": ["random", "mcts\x00"]}},
    ],
)
def test_nul_bytes_in_the_body_are_refused(api, change: dict) -> None:
    refused(api, json={**GOOD, **change})


# --------------------------------------------------------------------------- indices


def test_match_indices_are_bounded(api) -> None:
    client, _, _ = api
    batch = client.post("/batches", json=GOOD).json()["id"]
    body = assert_error_shape(client.get(f"/batches/{batch}/matches/2147483648"), 422)
    assert body["field"] == "index"
    assert_error_shape(client.get(f"/batches/{batch}/matches/{10**30}"), 422)
    assert_error_shape(client.get(f"/batches/{batch}/matches/-1"), 422)
    assert_error_shape(client.get(f"/batches/{batch}/matches/2147483647"), 404)
    assert_error_shape(client.get(f"/batches/{batch}/matches?offset={2**63}"), 422)
    assert_error_shape(client.get(f"/batches?limit={10**30}"), 422)


# --------------------------------------------------------------------------- error shape


def test_router_and_body_errors_have_the_error_shape(api) -> None:
    client, _, url = api
    assert assert_error_shape(client.get("/nowhere"), 404)["field"] is None
    not_allowed = client.delete("/batches")
    assert assert_error_shape(not_allowed, 405)["field"] is None
    assert "DELETE" in not_allowed.json()["message"] and not_allowed.headers["allow"]
    bodies = [
        b'{"game":"\xff\xfe","agents":["random"],"matches":1}',  # not UTF-8
        b"[" * 5000 + b"]" * 5000,  # nested deeper than any request needs
        b'{"game":"alquerque","agents":["random"],"matches":' + b"9" * 4300 + b"}",
        b'{"game":"alquerque","agents":["random"],"matches":' + b"9" * 4301 + b"}",
        b"{not json",
        b"",
    ]
    for raw in bodies:
        body = assert_error_shape(client.post("/batches", content=raw, headers=JSON), 422)
        assert body["field"] in {"body", "matches"}, body
        assert len(body["message"]) < 300, body
    big = client.post("/batches", json={**GOOD, "options": {"x": "y" * 100_000}})
    assert assert_error_shape(big, 413)["field"] == "body"
    chunked = client.post(
        "/batches", content=iter([b'{"game":"', b"y" * 70_000, b'"}']), headers=JSON
    )
    assert assert_error_shape(chunked, 413)["field"] == "body"
    assert stored_batches(url) == 0


@pytest.mark.parametrize(
    "change",
    [
        {"agents": ["random", "x" * 10_000]},
        {"agents": ["random", {"name": "mcts", "rollout": "r" * 10_000}]},
        {"options": {"k" * 10_000: 1}},
        {"agents": ["random", {"name": "mcts", "iterations": "9" * 4000}]},
    ],
)
def test_long_values_are_not_echoed_whole(api, change: dict) -> None:
    body = refused(api, json={**GOOD, **change})
    assert len(body["message"]) < 300
