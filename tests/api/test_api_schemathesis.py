"""Generated requests over the whole OpenAPI spec, and hostile ones built around it: the API
never answers with a 5xx, and every 4xx carries ``message`` and ``field``.

Three sources of requests, all sent to the real app, once on SQLite and once on PostgreSQL
(which refuses NUL bytes in text and numbers beyond a column's size):
- schemathesis' positive cases (they fit the schema, NUL bytes allowed in strings);
- schemathesis' negative cases (they break the schema on purpose);
- hostile cases written here: NaN, infinities (``Infinity``, ``1e999``), NUL bytes and huge
  integers put into every part of a nearly valid request (body fields, agent parameters, game
  options, layout cells, stop rule, path parameters, query parameters), so they get past the
  first checks and reach the deep ones.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pytest
import schemathesis
from api_support import client_for, forget_settings, make_api, point_settings_at
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.generation.modes import GenerationMode

EXAMPLES = {GenerationMode.POSITIVE: 110, GenerationMode.NEGATIVE: 40}
NAMED_BATCH_POSITIVE = 20
"""Positive cases of an operation that names batches (a ``{batch_id}`` path, ``/compare``).
They fit the schema, so the batch ids they name are random strings of no stored batch: every
one of 110 was answered 404 (counted on 2026-12-06, on SQLite, in 0.4-0.9 s of CPU an
operation), the same lookup each time, whatever the query. Twenty still vary the query over
the lookup; the hostile requests below are the ones that reach past it, on a stored batch."""
HOSTILE_EXAMPLES = 1000
MIN_REQUESTS = 2000
MIN_PER_KIND = 150
"""Each hostile kind (nan, infinity, nul, huge_int) is in at least this many requests."""

LITERAL_1E999 = "__literal_1e999__"
"""Placeholder replaced by the JSON number ``1e999`` (read as infinity) after encoding."""


@schemathesis.serializer("application/zip")
def zip_bytes(_ctx: Any, value: Any) -> bytes:
    """A generated ``POST /batches/import`` body: whatever bytes were drawn (a binary string
    in the schema), which the route must refuse as no zip with a 422, never a 5xx."""
    return value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogatepass")


@dataclass
class Tally:
    """What was sent and what came back wrong."""

    sent: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def check(self, what: str, response: Any, kinds: set[str]) -> None:
        self.sent += 1
        self.kinds.update(kinds)
        status = response.status_code
        if status >= 500:
            self.failures.append(f"{what}: {status}")
        elif status >= 400:
            try:
                body = response.json()
            except ValueError:
                body = None
            if not (
                isinstance(body, dict)
                and isinstance(body.get("message"), str)
                and body["message"].strip()
                and "field" in body
            ):
                self.failures.append(f"{what}: {status} without message and field: {body!r}")


def nul_in(*parts: Any) -> set[str]:
    return {"nul"} if any("\x00" in repr(p) for p in parts) else set()


# --------------------------------------------------------------------------- hostile values


HUGE_INTS = st.sampled_from([2**31, 2**32, 2**53 + 1, 2**63, 2**64, 10**30, 10**400, -(10**400)])
NUL_TEXT = st.sampled_from(["\x00", "a\x00b", "alquerque\x00", "\x00" * 8, "ab\x00cd"])


def hostile_value(kind: str) -> st.SearchStrategy[Any]:
    """A value of ``kind`` as it may arrive in a JSON body (numbers or text)."""
    if kind == "nan":
        return st.sampled_from([math.nan, "nan", "NaN", "-nan"])
    if kind == "infinity":
        return st.sampled_from([math.inf, -math.inf, LITERAL_1E999, "inf", "-Infinity", "1e999"])
    if kind == "nul":
        return NUL_TEXT
    return HUGE_INTS


def as_text(value: Any) -> str:
    """How a hostile value reads in a path or a query string."""
    if value == LITERAL_1E999:
        return "1e999"
    return value if isinstance(value, str) else str(value)


def encode(body: Any) -> bytes:
    """JSON with NaN, Infinity and 1e999 written as Python's reader accepts them."""
    text = json.dumps(body, allow_nan=True)
    return text.replace(f'"{LITERAL_1E999}"', "1e999").encode()


# --------------------------------------------------------------------------- hostile requests


AGENTS = {
    "alquerque": [
        {"name": "mcts", "iterations": 3, "exploration": 1.2, "rollout": "random"},
        {"name": "alphabeta", "depth": 1, "nodes": 50},
        {"name": "easy", "greedy_share": 0.5},
        {"name": "hard", "depth": 1, "nodes": 100},
    ],
    "alveoles": [
        {"name": "value", "want_high": 1.0, "fear_high": 0.5, "caution": 0.1},
        {"name": "hunter", "caution": 0.2},
        {"name": "mcts", "iterations": 2, "max_rollout_plies": 5},
    ],
}


@st.composite
def nearly_valid_body(draw: st.DrawFn) -> dict[str, Any]:
    game = draw(st.sampled_from(sorted(AGENTS)))
    opponent = draw(st.sampled_from(AGENTS[game]))
    body: dict[str, Any] = {
        "game": game,
        "agents": ["random", dict(opponent)],
        "matches": 4,
        "chunk_size": 2,
        "seed": 7,
        "max_plies": 30,
        "stop_rule": {"agents": ["random", "x"], "elo0": 0, "elo1": 20},
    }
    if game == "alveoles":
        body["options"] = {"layout": [[1] * 8 for _ in range(8)], "square_bonus": "disjoint"}
    else:
        body["options"] = {"no_capture_limit": 20}
    return body


def body_slots(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Every place a hostile value can go in ``body``: fields, parameters, options, cells."""
    slots: list[tuple[Any, ...]] = [
        ("matches",),
        ("seed",),
        ("players",),
        ("chunk_size",),
        ("max_plies",),
        ("game",),
        ("agents", 0),
        ("agents", 1, "name"),
        ("options", "players"),
        ("options", "name"),
        ("stop_rule", "elo0"),
        ("stop_rule", "elo1"),
        ("stop_rule", "alpha"),
    ]
    slots += [("agents", 1, key) for key in body["agents"][1] if key != "name"]
    slots += [("options", key) for key in body["options"]]
    if body["game"] == "alveoles":
        slots += [("options", "layout", r, c) for r in range(8) for c in range(8)]
    return slots


def put(body: Any, slot: tuple[Any, ...], value: Any) -> None:
    for key in slot[:-1]:
        body = body[key]
    body[slot[-1]] = value


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    params: dict[str, str] | None = None
    content: bytes | None = None
    kinds: frozenset[str] = frozenset()


@st.composite
def hostile_requests(draw: st.DrawFn, batch_id: str) -> Request:
    kind = draw(st.sampled_from(["nan", "infinity", "nul", "huge_int"]))
    value = draw(hostile_value(kind))
    kinds = frozenset({kind})
    where = draw(st.sampled_from(["body", "body", "body", "path", "index", "query"]))
    if where == "body":
        body = draw(nearly_valid_body())
        put(body, draw(st.sampled_from(body_slots(body))), value)
        return Request("POST", "/batches", content=encode(body), kinds=kinds)
    text = as_text(value)
    if where == "path":
        tail = draw(
            st.sampled_from(
                ["", "/matches", "/matches/0", "/export", "/report", "/report.csv", "/cancel"]
            )
        )
        method = "POST" if tail == "/cancel" else "GET"
        return Request(method, f"/batches/{quote(text, safe='')}{tail}", kinds=kinds)
    if where == "index":
        return Request("GET", f"/batches/{batch_id}/matches/{quote(text, safe='')}", kinds=kinds)
    route, name = draw(
        st.sampled_from(
            [
                ("/batches", "limit"),
                ("/batches", "offset"),
                ("/batches", "game"),
                ("/batches", "status"),
                ("/batches", "key"),
                ("/games", "family"),
                (f"/batches/{batch_id}/matches", "limit"),
                (f"/batches/{batch_id}/matches", "offset"),
                (f"/batches/{batch_id}/export", "format"),
                ("/compare", "a"),
                ("/compare", "b"),
            ]
        )
    )
    params = {"a": batch_id, "b": batch_id} if route == "/compare" else {}
    params[name] = text
    return Request("GET", route, params=params, kinds=kinds)


# --------------------------------------------------------------------------- the test


def stored_batch(client: Any, url: str) -> str:
    """A real batch with a few stored matches, for routes that need one."""
    from workers.chunks import run_chunk

    created = client.post(
        "/batches",
        json={"game": "alquerque", "agents": ["random", "easy"], "matches": 4, "chunk_size": 2},
    )
    assert created.status_code == 202, created.text
    batch_id: str = created.json()["id"]
    run_chunk(batch_id, 0, 2, database_url=url)
    return batch_id


HYPOTHESIS = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}


def names_a_batch(path: str) -> bool:
    """Whether every case of the operation names a batch to look up first."""
    return "{batch_id}" in path or path == "/compare"


def generated(operation: Any, mode: GenerationMode, examples: int, tally: Tally) -> Any:
    """A Hypothesis test sending ``examples`` schemathesis cases of ``operation``."""

    @settings(max_examples=examples, **HYPOTHESIS)
    @given(case=operation.as_strategy(generation_mode=mode))
    def probe(case: schemathesis.Case) -> None:
        response = case.call()
        kinds = nul_in(case.path_parameters, case.query, case.body)
        tally.check(f"{mode} {case.method} {case.formatted_path}", response, kinds)

    return probe


@pytest.mark.slow
def test_generated_requests_never_get_a_server_error(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_settings_at(monkeypatch, db_url)
    app, _ = make_api(db_url)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    tally = Tally()
    operations = [result.ok() for result in schema.get_all_operations()]
    # Every operation of the app is in the schema the cases come from (the dashboard's are
    # walked by tests/api/web/test_web_hostile.py).
    documented = {(m.upper(), p) for p, ops in app.openapi()["paths"].items() for m in ops}
    assert {(op.method.upper(), op.path) for op in operations} == documented
    assert len(documented) >= 13
    for operation in operations:
        for mode, examples in EXAMPLES.items():
            if mode == GenerationMode.POSITIVE and names_a_batch(operation.path):
                examples = NAMED_BATCH_POSITIVE
            try:
                generated(operation, mode, examples, tally)()
            except Unsatisfiable:
                # No input of this operation can break its schema (/games, /healthz: none).
                assert mode.is_negative, operation.path

    with client_for(app) as client:
        batch_id = stored_batch(client, db_url)

        @settings(max_examples=HOSTILE_EXAMPLES, **HYPOTHESIS)
        @given(request=hostile_requests(batch_id))
        def attack(request: Request) -> None:
            headers = {"content-type": "application/json"} if request.content else None
            response = client.request(
                request.method,
                request.path,
                params=request.params,
                content=request.content,
                headers=headers,
            )
            what = f"{request.method} {request.path} {request.params} {request.content!r:.200}"
            tally.check(what, response, set(request.kinds))

        attack()
    forget_settings()
    print(
        f"{tally.sent} generated requests over {len(operations)} operations; "
        f"with {dict(tally.kinds)}; {len(tally.failures)} failures"
    )
    assert tally.failures == []
    assert tally.sent >= MIN_REQUESTS
    for kind in ("nan", "infinity", "nul", "huge_int"):
        assert tally.kinds[kind] >= MIN_PER_KIND, tally.kinds
