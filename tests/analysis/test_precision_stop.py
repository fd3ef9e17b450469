"""The precision stop: a batch ends at the first round boundary where one figure's interval is
no wider than asked, after a least number of units; refused, naming the field, when the figure
or the half-width is not one it can take."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from api_support import client_for, forget_settings, make_api, point_settings_at
from fastapi.testclient import TestClient
from sqlalchemy import text
from statsmodels.stats.proportion import proportion_confint
from typer.testing import CliRunner

from analysis.precision import precision_state
from analysis.render_html import render_html
from analysis.report_tables import precision_table
from analysis.stopping import PrecisionRule, from_json, parse
from api.cli import app as cli
from engines.core import OptionError
from storage.db import get_engine

runner = CliRunner()
LABELS = ["random", "random#2"]


def test_the_short_form_reads_as_the_json_rule() -> None:
    rule = parse("precision:first_player_advantage,half_width=0.02,min_units=50")
    assert rule.request_json() == {
        "type": "precision",
        "figure": "first_player_advantage",
        "half_width": 0.02,
        "min_units": 50.0,
    }
    checked = rule.validate(LABELS).to_json()
    assert checked["min_units"] == 50 and checked["half_width"] == 0.02
    score = parse("precision:score:random,half_width=0.1").validate(LABELS).to_json()
    assert score == {"type": "precision", "figure": "score:random", "half_width": 0.1,
                     "min_units": 30}  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "field"),
    [
        ({"figure": "elo"}, "stop_rule.figure"),
        ({"figure": "score:nobody"}, "stop_rule.figure"),
        ({"half_width": 0}, "stop_rule.half_width"),
        ({"half_width": 0.5}, "stop_rule.half_width"),
        ({"half_width": -0.1}, "stop_rule.half_width"),
        ({"half_width": "0.1"}, "stop_rule.half_width"),
        ({"min_units": 1}, "stop_rule.min_units"),
        ({"min_units": 2.5}, "stop_rule.min_units"),
        ({"alpha": 0.05}, "stop_rule.alpha"),
    ],
)
def test_bad_rules_name_their_field(rule: dict[str, Any], field: str) -> None:
    good = {"type": "precision", "figure": "first_player_advantage", "half_width": 0.05}
    with pytest.raises(OptionError) as caught:
        from_json({**good, **rule}).validate(LABELS)
    assert caught.value.field == field


def test_the_state_stops_only_when_narrow_enough_after_enough_units() -> None:
    rule = PrecisionRule("first_player_advantage", 0.05, 30)
    lo, hi = proportion_confint(220, 400, method="beta")  # an interval from elsewhere
    half = (hi - lo) / 2
    assert half < 0.05
    state = precision_state(0.55 - 0.5, lo - 0.5, hi - 0.5, 400, rule)
    assert state["result"] == "reached" and state["achieved_half_width"] == pytest.approx(half)
    assert "within" in state["verdict"]
    assert precision_state(0.05, lo - 0.5, hi - 0.5, 29, rule)["result"] is None
    lo, hi = proportion_confint(22, 40, method="beta")
    assert precision_state(0.05, lo - 0.5, hi - 0.5, 40, rule)["result"] is None
    assert precision_state(math.nan, math.nan, math.nan, 400, rule)["result"] is None


def test_the_cli_refuses_an_unknown_figure_in_one_line(sqlite_url: str) -> None:
    for stop, field in (
        ("precision:elo,half_width=0.1", "stop_rule.figure"),
        ("precision:first_player_advantage,half_width=0.7", "stop_rule.half_width"),
    ):
        args = ["run", "alquerque", "--agents", "random", "--matches", "10", "--stop", stop]
        result = runner.invoke(cli, [*args, "--db", sqlite_url])
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.exit_code == 2 and len(lines) == 1, result.stderr
        assert lines[0].startswith("error:") and field in lines[0]


@pytest.fixture
def api(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TestClient, Any, str]]:
    point_settings_at(monkeypatch, db_url)
    app, dispatcher = make_api(db_url)
    with client_for(app) as client:
        yield client, dispatcher, db_url
    forget_settings()


def test_http_takes_the_rule_as_json_and_refuses_bad_ones(api: Any) -> None:
    client, _, url = api
    body = {"game": "alquerque", "agents": ["random"], "matches": 40, "chunk_size": 5}
    for rule, field in (
        ({"type": "precision", "figure": "elo", "half_width": 0.1}, "stop_rule.figure"),
        ({"type": "precision", "figure": "first_player_advantage", "half_width": 0.5},
         "stop_rule.half_width"),
        ({"type": "precision", "figure": "first_player_advantage", "half_width": 0},
         "stop_rule.half_width"),
    ):  # fmt: skip
        answer = client.post("/batches", json={**body, "stop_rule": rule})
        assert answer.status_code == 422 and answer.json()["field"] == field, answer.text
    with get_engine(url).connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM batch")).scalar_one() == 0
    rule = {"type": "precision", "figure": "first_player_advantage", "half_width": 0.2}
    answer = client.post("/batches", json={**body, "stop_rule": rule})
    assert answer.status_code in (200, 201, 202), answer.text
    stored = client.get(f"/batches/{answer.json()['id']}").json()
    assert stored["stop_rule"] == {**rule, "min_units": 30}


@pytest.mark.slow
def test_a_cli_batch_stops_at_the_precision_asked(sqlite_url: str) -> None:
    stop = "precision:first_player_advantage,half_width=0.15,min_units=20"
    args = ["run", "alquerque", "--agents", "random", "--matches", "2000", "--seed", "5"]
    result = runner.invoke(cli, [*args, "--stop", stop, "--workers", "1", "--db", sqlite_url])
    assert result.exit_code == 0, result.stderr
    with get_engine(sqlite_url).connect() as conn:
        row = conn.execute(text("SELECT id, decision, stopped_early FROM batch")).one()
    decision = row.decision if isinstance(row.decision, dict) else json.loads(row.decision)
    assert row.stopped_early and decision["result"] == "reached"
    at = decision["decided_at_matches"]
    assert 20 <= at < 2000 and decision["units"] >= 20
    assert decision["achieved_half_width"] <= 0.15
    # Read back: the report carries the rule's state over every written match.
    shown = runner.invoke(cli, ["report", row.id, "--format", "json", "--db", sqlite_url])
    report = json.loads(shown.stdout)
    assert report["precision"]["figure"] == "first_player_advantage"
    assert report["batch"]["matches_done"] >= at
    # The terminal and the HTML page show the state too.
    text_report = runner.invoke(cli, ["report", row.id, "--db", sqlite_url]).stdout
    # The terminal wraps long cells (the figure's name, the verdict): the numbers stay whole.
    precision = report["precision"]
    assert "Precision stop" in text_report and f"{precision['half_width']:.4f}" in text_report
    assert f"{precision['achieved_half_width']:.4f}" in text_report
    page = render_html(report)
    assert 'id="precision"' in page and "first_player_advantage" in page


def test_the_precision_table_shows_the_state() -> None:
    rule = PrecisionRule("first_player_advantage", 0.05, 30)
    report = {"precision": precision_state(0.05, 0.01, 0.09, 40, rule)}
    table = precision_table(report)
    assert table is not None and table.title == "Precision stop"
    assert table.rows == [["first_player_advantage", "0.0500", "0.0100–0.0900", "0.0400",
                           "0.0500", "40", "30", report["precision"]["verdict"]]]  # fmt: skip
    assert report["precision"]["verdict"].startswith("stop:")
    assert precision_table({"precision": None}) is None
