"""Blitz clocks in batches: ``options.time_control`` refused when wrong (HTTP 422 and the
command line, nothing stored), a clocked batch played and stored with its move times, the
export and the report carrying them, the chunk limits a clocked batch gets, and a batch
without clocks unchanged."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from api_support import RecordingDispatcher, client_for, forget_settings, make_api
from api_support import point_settings_at as point_settings
from fastapi.testclient import TestClient
from service_fixtures import pg_cluster, redis_server, service_factory
from sqlalchemy import text
from typer.testing import CliRunner

from analysis.clock import clock_figures
from analysis.render_html import render_html
from analysis.report import build_report
from analysis.report_tables import report_tables
from api.cli import app as cli
from api.exports import csv_stream, parquet_stream
from storage import crud
from storage.db import get_engine
from storage.settings import Settings
from workers.sizing import CLOCK_MARGIN, CLOCK_SLACK, chunk_time_limits, next_chunk_size

runner = CliRunner()

__all__ = ["pg_cluster", "redis_server", "service_factory"]
GOOD = {"game": "alquerque", "agents": ["random", "random"], "matches": 4}


@pytest.fixture
def api(
    migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[TestClient, Any, str]]:
    point_settings(monkeypatch, migrated_sqlite_url)
    app, dispatcher = make_api(migrated_sqlite_url)
    with client_for(app) as client:
        yield client, dispatcher, migrated_sqlite_url
    forget_settings()


def stored_batches(url: str) -> int:
    with get_engine(url).connect() as conn:
        return int(conn.execute(text("SELECT count(*) FROM batch")).scalar_one())


@pytest.mark.parametrize(
    "value",
    ["0+0", "-60+1", "60+-1", "sixty", "inf", "nan", "1e999", "60+1\x00", "99999999+0", True, []],
    ids=repr,
)
def test_http_refuses_a_bad_time_control_naming_it_and_stores_nothing(
    api: tuple[TestClient, RecordingDispatcher, str], value: Any
) -> None:
    client, dispatcher, url = api
    answer = client.post("/batches", json={**GOOD, "options": {"time_control": value}})
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["field"] == "options.time_control"
    assert "Traceback" not in body["message"] and "\x00" not in body["message"]
    assert stored_batches(url) == 0
    assert dispatcher.started == []


def test_http_stores_the_time_control_apart_from_the_game_options(
    api: tuple[TestClient, RecordingDispatcher, str],
) -> None:
    client, dispatcher, _url = api
    options = {"time_control": " 90+0.50 ", "no_capture_limit": 30}
    answer = client.post("/batches", json={**GOOD, "options": options})
    assert answer.status_code == 202, answer.text
    batch = answer.json()
    assert batch["time_control"] == "90+0.5"
    assert batch["options"] == {"no_capture_limit": 30}
    untimed = client.post("/batches", json=GOOD).json()
    assert untimed["time_control"] is None
    assert len(dispatcher.started) == 2


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--time-control", "0+0"], "options.time_control must give each player some time"),
        (["--time-control", "-5+1"], "options.time_control must be text like '60+1'"),
        (["--time-control", "inf"], "options.time_control must be text like '60+1'"),
        (["--time-control", "60+61"], "options.time_control may add at most 60 seconds"),
        (
            ["--time-control", "60+1", "-o", "time_control=30"],
            "give the time control once",
        ),
        (["-o", "time_control=nan"], "options.time_control must be text like '60+1'"),
    ],
)
def test_the_command_line_refuses_a_bad_time_control_in_one_line(
    extra: list[str], expected: str, migrated_sqlite_url: str
) -> None:
    sqlite_url = migrated_sqlite_url
    args = ["run", "alquerque", "--agents", "random", "--matches", "2", *extra]
    result = runner.invoke(cli, [*args, "--db", sqlite_url])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert expected in lines[0]
    assert "Traceback" not in result.stderr
    assert stored_batches(sqlite_url) == 0


def run_batch(url: str, *extra: str) -> str:
    result = runner.invoke(
        cli,
        [
            *("run", "alquerque", "--agents", "mcts:iterations=30,backend=python,random"),
            *("--matches", "2", "--seed", "5", "--max-plies", "40", "--workers", "1"),
            *("--db", url, *extra),
        ],
    )
    assert result.exit_code == 0, result.output
    found = re.search(r"batch (\w{12}): done, 2 played, 0 failed", result.stdout)
    assert found, result.stdout
    return found.group(1)


def test_a_clocked_batch_stores_every_move_time_and_exports_and_reports_them(
    sqlite_url: str,
) -> None:
    engine = get_engine(sqlite_url)
    clocked = run_batch(sqlite_url, "--time-control", "30+0.5")
    batch = crud.get_batch(engine, clocked)
    assert batch is not None and batch.time_control == "30+0.5"
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT m.match_index, m.plies, m.ended_by, s.seat, s.agent, s.move_ms "
                "FROM match m JOIN seat_result s ON s.batch_id = m.batch_id "
                "AND s.match_index = m.match_index WHERE m.batch_id = :b "
                "ORDER BY m.match_index, s.seat"
            ),
            {"b": clocked},
        ).all()
    times: dict[int, list[list[float]]] = {}
    for index, plies, ended_by, _seat, _agent, ms in rows:
        ms = json.loads(ms) if isinstance(ms, str) else ms
        assert all(isinstance(v, float | int) and v >= 0 for v in ms)
        times.setdefault(index, []).append(ms)
        # Every ply played was timed; a match lost on time also has the move that ran out.
        if len(times[index]) == 2:
            assert sum(map(len, times[index])) == plies + (ended_by == "time")

    exported = list(csv.DictReader(io.StringIO(b"".join(csv_stream(engine, clocked)).decode())))
    assert [json.loads(r["move_ms"]) for r in exported] == [ms for m in times.values() for ms in m]
    table = pq.read_table(io.BytesIO(b"".join(parquet_stream(engine, clocked))))
    assert table.column("move_ms").to_pylist() == [ms for m in times.values() for ms in m]

    report = build_report(engine, clocked)
    assert report["batch"]["time_control"] == "30+0.5"
    clock = report["clock"]
    assert clock["time_control"] == "30+0.5"
    assert "not reproducible from their seed" in clock["note"]
    moves = {a["agent"]: a["moves"] for a in clock["agents"]}
    by_agent: dict[str, int] = {}
    for _i, _p, _e, _seat, agent, ms in rows:
        ms = json.loads(ms) if isinstance(ms, str) else ms
        by_agent[agent] = by_agent.get(agent, 0) + len(ms)
    assert moves == by_agent
    page = render_html(report)
    assert "Clocks (30+0.5)" in page and "not reproducible from their seed" in page
    assert "Clocks (30+0.5)" in [t.title for t in report_tables(report)]

    plain = run_batch(sqlite_url)
    with engine.connect() as conn:
        kept = conn.execute(
            text("SELECT count(*) FROM seat_result WHERE batch_id = :b AND move_ms IS NOT NULL"),
            {"b": plain},
        ).scalar_one()
    assert kept == 0
    untimed = build_report(engine, plain)
    assert untimed["clock"] is None and untimed["batch"]["time_control"] is None
    assert "Clocks" not in render_html(untimed)
    exported = list(csv.DictReader(io.StringIO(b"".join(csv_stream(engine, plain)).decode())))
    assert {r["move_ms"] for r in exported} == {""}


def test_the_clock_figures_count_moves_by_agent_and_losses_on_time() -> None:
    times = pd.DataFrame(
        [
            (0, 0, "a", 1.0, "normal", [10.0, 30.0]),
            (0, 1, "b", 0.0, "normal", [5.0]),
            (1, 0, "b", 1.0, "time", [1.0, 2.0, 3.0]),
            (1, 1, "a", 0.0, "time", [20.0, 900.0]),
        ],
        columns=["match_index", "seat", "agent", "win_share", "ended_by", "move_ms"],
    )
    figures = clock_figures(times, "1+0", ["a", "b"])
    a, b = figures["agents"]
    # a: 10, 30, 20, 900 ms: mean 240, median (20 + 30) / 2, 0.04 s and 0.92 s a match.
    assert (a["agent"], a["moves"], a["mean_ms"], a["median_ms"], a["max_ms"]) == (
        "a",
        4,
        240.0,
        25.0,
        900.0,
    )
    assert a["seconds_per_match"] == pytest.approx((0.04 + 0.92) / 2)
    assert (a["losses_on_time"], b["losses_on_time"]) == (1, 0)
    assert (b["moves"], b["median_ms"]) == (4, 2.5)
    assert figures["matches_lost_on_time"] == 1


@dataclass
class Clocked:
    matches: int = 100
    players: int = 2
    seat_policy: str = "rotate"
    chunk_size: int = 0
    stop_rule: dict[str, Any] | None = None
    max_plies: int = 100
    time_control: str | None = "10+0.5"


def test_clocked_chunks_fit_the_soft_time_limit_or_get_limits_of_their_own() -> None:
    settings = Settings(task_time_limit=300.0, task_soft_time_limit=270.0, chunk_seconds=2.0)
    batch = Clocked()
    # A match may last 2 × 10 s + 100 plies × 0.5 s = 70 s on its clocks, 1.5 × that with the
    # margin: 105 s. Fast matches measured would make big chunks; the soft limit (270 s, less
    # the 10 s slack) holds two.
    assert CLOCK_MARGIN == 1.5 and CLOCK_SLACK == 10.0
    assert next_chunk_size(batch, matches=50, seconds=1.0, settings=settings) == 2
    assert chunk_time_limits(batch, 2, settings) is None
    # A fixed chunk of five needs 5 × 105 + 10 s soft, and the hard limit 30 s above it.
    assert chunk_time_limits(batch, 5, settings) == (535.0, 565.0)
    # One match longer than the soft limit: chunks of one, with limits of their own.
    long = Clocked(time_control="300+1")
    assert next_chunk_size(long, matches=50, seconds=1.0, settings=settings) == 1
    assert chunk_time_limits(long, 1, settings) == (1.5 * 700 + 10, 1.5 * 700 + 40)
    unclocked = Clocked(time_control=None)
    assert next_chunk_size(unclocked, matches=50, seconds=1.0, settings=settings) == 100
    assert chunk_time_limits(unclocked, 5000, settings) is None


# --------------------------------------------------------------------------- the service


SOFT, HARD = 2, 4
CLOCKED = {
    "game": "alquerque",
    # The Python search in both seats spends its clocks move by move: a match runs longer than
    # the workers' soft time limit (3.5 s measured here), which would end it were its chunk
    # not given limits of its own.
    "agents": [{"name": "mcts", "iterations": 1_000_000, "backend": "python"}],
    "options": {"time_control": "1.5+0.01"},
    "max_plies": 60,
    "variation": {"kind": "none"},
    "seed": 11,
}


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.timeout(240)
def test_a_clocked_batch_runs_through_the_service_past_the_soft_time_limit(
    service_factory: Any,
) -> None:
    service = service_factory(
        workers=1,
        pool="prefork",
        TASK_SOFT_TIME_LIMIT=str(SOFT),
        TASK_TIME_LIMIT=str(HARD),
        MAX_AGENT_ITERATIONS="1000000",
    )
    submitted = service.submit(**CLOCKED, matches=1)
    assert submitted["time_control"] == "1.5+0.01"
    batch = service.wait_finished(submitted["id"], timeout=180)
    assert batch["status"] == "done", batch
    assert (batch["progress"]["done"], batch["progress"]["failed"]) == (1, 0)
    page = service.api.client.get(f"/batches/{batch['id']}/matches").json()
    for match in page["items"]:
        timed = [len(seat["move_ms"]) for seat in match["seats"]]
        assert sum(timed) == match["plies"] + (match["ended_by"] == "time")
    report = service.api.client.get(f"/batches/{batch['id']}/report").json()
    assert report["clock"]["time_control"] == "1.5+0.01"
    assert sum(a["moves"] for a in report["clock"]["agents"]) >= sum(
        m["plies"] for m in page["items"]
    )


def test_the_new_batch_form_sends_the_clocks_among_the_options() -> None:
    from api.web.forms import error_slot, error_slots, form_to_body, game_info

    info = game_info("alquerque")
    form = {"game": "alquerque", "agent.0": "random", "agent.1": "random", "time_control": "60+1"}
    body = form_to_body(form, info)
    assert body["options"] == {"time_control": "60+1"}
    assert "time_control" not in form_to_body({**form, "time_control": " "}, info)
    slots = error_slots(info, 2)
    assert error_slot("options.time_control", form, slots) == "options.time_control"


def test_get_games_lists_the_clocks_for_every_game(
    api: tuple[TestClient, RecordingDispatcher, str],
) -> None:
    client, _dispatcher, _url = api
    for game in client.get("/games").json():
        (option,) = game["match_options"]
        assert (option["name"], option["example"], option["default"]) == (
            "time_control",
            "60+1",
            None,
        )
        assert option["max_seconds"] == 3600 and option["max_increment"] == 60
