"""HTTP API: validation answers 422 naming the field, keys guard writes, reads shape results."""

from __future__ import annotations

import csv
import io

import pyarrow.parquet as pq
import pytest
import redis.exceptions
import sqlalchemy.exc
from api_support import client_for, forget_settings, make_api, point_settings_at, route_cli_to
from sqlalchemy import text

GOOD = {"game": "alquerque", "agents": ["random", "random"], "matches": 10, "chunk_size": 5}


@pytest.fixture
def api(migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch):
    point_settings_at(monkeypatch, migrated_sqlite_url)
    app, dispatcher = make_api(migrated_sqlite_url)
    with client_for(app) as client:
        yield client, dispatcher, migrated_sqlite_url
    forget_settings()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"game": "chess"}, "game"),
        ({"agents": ["random", "nobody"]}, "agents[1].name"),
        ({"options": {"colour": "red"}}, "options.colour"),
        ({"players": 3}, "players"),
        ({"agents": ["random", {"name": "mcts", "iterations": -4}]}, "agents[1].iterations"),
        ({"agents": ["random", {"name": "mcts", "depth": 2}]}, "agents[1].depth"),
        ({"agents": [{"name": "mcts", "iterations": 1_000_000}]}, "agents[0].iterations"),
        ({"agents": ["random", {"name": "alphabeta", "depth": 17}]}, "agents[1].depth"),
        ({"matches": 10**7 + 1}, "matches"),
        ({"matches": 0}, "matches"),
        ({"seat_policy": "shuffle"}, "seat_policy"),
        ({"seed": -1}, "seed"),
        ({"chunk_size": 0}, "chunk_size"),
        ({"agents": []}, "agents"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_input_is_422_naming_the_field(api, change: dict, field: str) -> None:
    client, dispatcher, _ = api
    response = client.post("/batches", json={**GOOD, **change})
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["field"] == field
    assert body["message"] and "Traceback" not in body["message"]
    assert dispatcher.started == []


def test_missing_fields_and_oversized_bodies(api) -> None:
    client, _, _ = api
    missing = client.post("/batches", json={"game": "alquerque", "agents": ["random"]})
    assert missing.status_code == 422 and missing.json()["field"] == "matches"
    huge = {**GOOD, "options": {"x": "y" * 100_000}}
    response = client.post("/batches", json=huge)
    assert response.status_code == 413 and response.json()["field"] == "body"
    broken = client.post(
        "/batches", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert broken.status_code == 422


def test_submit_stores_the_batch_and_starts_it_once(api) -> None:
    client, dispatcher, _ = api
    response = client.post("/batches", json={**GOOD, "seed": 42})
    assert response.status_code == 202
    batch = response.json()
    assert (
        batch["status"] == "queued"
        and batch["seed"] == 42
        and batch["labels"] == ["random", "random#2"]
    )
    assert batch["links"]["report"].endswith(f"/batches/{batch['id']}/report")
    assert dispatcher.started == [batch["id"]]
    generated = client.post("/batches", json=GOOD).json()
    assert isinstance(generated["seed"], int) and generated["seed"] >= 0


def test_seat_policies_through_the_api(api) -> None:
    client, _, _ = api
    three = {"game": "alveoles", "players": 3, "agents": ["random", "greedy", "random"]}
    default = client.post("/batches", json={**three, "matches": 6})
    assert default.status_code == 202 and default.json()["seat_policy"] == "balanced"
    for policy in ("balanced", "rotate", "fixed"):
        chosen = client.post("/batches", json={**three, "matches": 6, "seat_policy": policy})
        assert chosen.status_code == 202 and chosen.json()["seat_policy"] == policy
    same = client.post("/batches", json=GOOD)
    assert same.json()["seat_policy"] == "fixed"


def test_a_million_match_batch_creates_no_rows_or_tasks_per_match(api) -> None:
    client, dispatcher, url = api
    big = client.post("/batches", json={**GOOD, "matches": 1_000_000, "chunk_size": None})
    assert big.status_code == 202
    from storage.db import get_engine

    with get_engine(url).connect() as conn:
        rows = conn.execute(
            text("SELECT (SELECT count(*) FROM match) + (SELECT count(*) FROM chunk)")
        )
        assert rows.scalar() == 0
    assert dispatcher.started == [big.json()["id"]]
    assert big.json()["chunk_size"] == 0  # sized by the workers, from their own chunks


def test_submitting_plays_no_match_whatever_the_agents(api, monkeypatch) -> None:
    """The most expensive agents the server allows, no chunk_size, no max_plies: the request
    validates and stores, and the match player is never called in the API process."""
    import engines.core
    import workers.play

    client, dispatcher, url = api
    calls: list[int] = []

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        raise AssertionError("the API process played a match")

    monkeypatch.setattr(workers.play, "play_match", refuse)
    monkeypatch.setattr(engines.core, "play_match", refuse)
    expensive = [
        {"name": "mcts", "iterations": 100_000},
        {"name": "alphabeta", "depth": 16, "nodes": 1_000_000},
    ]
    for agents in (expensive, ["random", "random"]):
        response = client.post(
            "/batches", json={"game": "alquerque", "agents": agents, "matches": 2}
        )
        assert response.status_code == 202, response.text
        assert response.json()["chunk_size"] == 0
    assert calls == []
    assert len(dispatcher.started) == 2
    from storage.db import get_engine

    with get_engine(url).connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM chunk")).scalar() == 0
        assert conn.execute(text("SELECT count(*) FROM match")).scalar() == 0


def test_reads_progress_matches_and_exports(api) -> None:
    client, dispatcher, url = api
    batch = client.post("/batches", json=GOOD).json()
    from workers.chunks import run_chunk

    run_chunk(batch["id"], 0, 5, database_url=url)
    read = client.get(f"/batches/{batch['id']}").json()
    assert read["status"] == "running"
    assert read["progress"]["done"] == 5 and read["progress"]["chunks_total"] == 2
    assert dispatcher.started == [batch["id"]]  # reading started nothing more
    assert client.get(f"/batches/{batch['id'][:6]}").json()["id"] == batch["id"]

    page = client.get(f"/batches/{batch['id']}/matches", params={"limit": 3, "offset": 1}).json()
    assert [m["index"] for m in page["items"]] == [1, 2, 3]
    first = page["items"][0]
    assert len(first["seats"]) == 2 and sum(first["returns"]) == pytest.approx(1.0)
    assert first["agents"] == [s["agent"] for s in first["seats"]]

    detail = client.get(f"/batches/{batch['id']}/matches/4").json()
    from engines import load_game, replay

    final = replay(load_game("alquerque"), detail["moves"], detail["seed"])
    assert final.is_terminal() or detail["ended_by"] == "move_limit"
    assert client.get(f"/batches/{batch['id']}/matches/7").status_code == 404

    rows = list(csv.DictReader(io.StringIO(client.get(f"/batches/{batch['id']}/export").text)))
    assert len(rows) == 10 and {r["match_index"] for r in rows} == {str(i) for i in range(5)}
    parquet = client.get(f"/batches/{batch['id']}/export", params={"format": "parquet"})
    table = pq.read_table(io.BytesIO(parquet.content))
    assert table.num_rows == 10 and "win_share" in table.column_names
    assert client.get(f"/batches/{batch['id']}/export", params={"format": "xls"}).status_code == 422

    listed = client.get("/batches", params={"game": "alquerque", "status": "running"}).json()
    assert [b["id"] for b in listed["items"]] == [batch["id"]]
    assert client.get("/batches", params={"status": "done"}).json()["items"] == []


def test_a_report_without_compensation_skips_only_the_komi(api) -> None:
    client, _, url = api
    body = {"game": "alveoles", "agents": ["random", "random"], "matches": 12, "chunk_size": 12}
    batch = client.post("/batches", json=body).json()
    from workers.chunks import run_chunk

    run_chunk(batch["id"], 0, 12, database_url=url)
    whole = client.get(f"/batches/{batch['id']}/report").json()
    assert whole["fair_compensation"]["offsets"], "random play on valued squares varies its points"
    from api.client import ServiceClient

    bare = ServiceClient("http://testserver", http=client).report(batch["id"], compensation=False)
    assert bare["fair_compensation"] is None
    assert {k: v for k, v in bare.items() if k != "fair_compensation"} == {
        k: v for k, v in whole.items() if k != "fair_compensation"
    }
    wrong = client.get(f"/batches/{batch['id']}/report", params={"compensation": "maybe"})
    assert wrong.status_code == 422 and wrong.json()["field"] == "compensation"


def test_cancel_and_unknown_batches(api) -> None:
    client, _, _ = api
    batch = client.post("/batches", json=GOOD).json()
    cancelled = client.post(f"/batches/{batch['id']}/cancel").json()
    assert cancelled["status"] == "cancelled"
    missing = client.get("/batches/ffffffffffff")
    assert missing.status_code == 404 and "no batch" in missing.json()["message"]
    assert client.post("/batches/ffffffffffff/cancel").status_code == 404


def test_games_and_health(api) -> None:
    client, _, _ = api
    games = {g["name"]: g for g in client.get("/games").json()}
    assert "alquerque" in games and any(a["name"] == "mcts" for a in games["alquerque"]["agents"])
    health = client.get("/healthz")
    assert health.status_code == 200 and health.json()["database"] == "ok"


def test_health_names_an_unreachable_database(tmp_path) -> None:
    app, _ = make_api(f"sqlite:///{tmp_path}/missing/nowhere.db")
    with client_for(app) as client:
        health = client.get("/healthz")
    assert health.status_code == 503 and health.json()["database"].startswith("unreachable")


@pytest.mark.parametrize(
    "outage",
    [
        redis.exceptions.TimeoutError("Timeout reading from socket"),
        redis.exceptions.ConnectionError("Connection refused"),
        sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("server closed the connection")),
    ],
    ids=lambda e: f"{type(e).__module__}.{type(e).__name__}",
)
def test_a_service_away_mid_request_is_503_not_500(api, outage: Exception) -> None:
    """Every error the workers wait out is a 503 (try again) when a route meets it."""
    client, dispatcher, _ = api

    def away(_batch: object) -> None:
        raise outage

    dispatcher.start = away  # type: ignore[method-assign]
    response = client.post("/batches", json=GOOD)
    assert response.status_code == 503, response.text
    assert "unreachable" in response.json()["message"]


def test_writes_need_the_key_when_it_is_set(migrated_sqlite_url: str) -> None:
    app, _ = make_api(migrated_sqlite_url, api_key="s3cret")
    with client_for(app) as client:
        assert client.post("/batches", json=GOOD).status_code == 401
        wrong = client.post("/batches", json=GOOD, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "API key" in wrong.json()["message"]
        right = client.post("/batches", json=GOOD, headers={"Authorization": "Bearer s3cret"})
        assert right.status_code == 202
        assert client.post(f"/batches/{right.json()['id']}/cancel").status_code == 401
        assert client.get("/batches").status_code == 200
    app, _ = make_api(migrated_sqlite_url, api_key="s3cret", api_key_reads=True)
    with client_for(app) as client:
        assert client.get("/batches").status_code == 401
        assert client.get("/batches", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_cli_submit_and_status_through_the_api(api, monkeypatch) -> None:
    from typer.testing import CliRunner

    from api.cli import app as cli

    client, dispatcher, url = api
    route_cli_to(client.app, monkeypatch)
    runner = CliRunner()
    submitted = runner.invoke(
        cli,
        [
            "submit",
            "alquerque",
            "--agents",
            "random,mcts:iterations=5",
            "-n",
            "6",
            "--chunk-size",
            "3",
        ],
    )
    assert submitted.exit_code == 0, submitted.output
    batch_id = dispatcher.started[-1]
    assert batch_id in submitted.output
    from workers.chunks import run_chunk

    run_chunk(batch_id, 0, 3, database_url=url)
    run_chunk(batch_id, 3, 6, database_url=url)
    status = runner.invoke(cli, ["status", batch_id, "--interval", "0.05"])
    assert status.exit_code == 0, status.output
    assert "done: 6 played, 0 failed" in status.output
    short = runner.invoke(
        cli, ["submit", "alveoles", "--agents", "random,greedy,random", "-n", "8", "--seed", "1"]
    )
    assert short.exit_code == 0, short.output
    assert "warning: incomplete seating design: 8 matches" in " ".join(short.output.split())
    assert "warning" not in submitted.output
    bad = runner.invoke(cli, ["submit", "alquerque", "--agents", "nobody", "-n", "5"])
    assert bad.exit_code == 2 and "unknown agent" in bad.output
