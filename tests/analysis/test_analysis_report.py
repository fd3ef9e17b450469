"""End-to-end reports over stored batches: JSON keys, strict JSON, CSV, compare, CLI and API."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from analysis_data import alveoles_outcome, alveoles_stats, store_batch, two_player_outcomes
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from analysis.compare import compare
from analysis.report import REPORT_KEYS, build_report, to_csv


@pytest.fixture
def alquerque_batch(migrated_sqlite_url: str) -> tuple[str, str]:
    ends = ["normal", "repetition", "no_capture", "max_plies"]
    outcomes = two_player_outcomes(600, 0.6, draw=0.25, seed=3)
    _, bid = store_batch(
        migrated_sqlite_url,
        game="alquerque",
        players=2,
        labels=["hard", "easy"],
        outcomes=outcomes,
        ended_by=lambda i: "normal" if outcomes[i][0][0] != 0.5 else ends[1 + i % 3],
        failed=[7],
        stop_rule={
            "type": "sprt",
            "agents": ["hard", "easy"],
            "elo0": 0.0,
            "elo1": 5.0,
            "alpha": 0.05,
            "beta": 0.05,
        },
    )
    return migrated_sqlite_url, bid


def test_report_has_the_documented_keys_and_strict_json(alquerque_batch: tuple[str, str]) -> None:
    from storage.db import get_engine

    url, bid = alquerque_batch
    report = build_report(get_engine(url), bid)
    assert tuple(report) == REPORT_KEYS
    json.dumps(report, allow_nan=False)
    assert report["batch"]["id"] == bid
    assert report["batch"]["matches_done"] == 600 and report["batch"]["matches_failed"] == 1
    seat_keys = {
        "seat",
        "games",
        "win_share",
        "ci_low",
        "ci_high",
        "expected",
        "p_value",
        "mean_points",
    }
    assert seat_keys <= set(report["seats"][0])
    assert report["seats"][0]["win_share"] > 0.5
    assert set(report["first_player_advantage"]) >= {"estimate", "ci_low", "ci_high"}
    assert {a["agent"] for a in report["agents"]} == {"hard", "easy"}
    assert report["pairings"][0]["model"] == "pentanomial"
    shape = report["shape"]
    draws = sum(1 for o in two_player_outcomes(600, 0.6, draw=0.25, seed=3) if o[0][0] == 0.5)
    assert shape["matches"] == 600 and shape["failed"] == 1
    causes = {c["cause"]: c["draws"] for c in report["game"]["draw_causes"]}
    assert sum(causes.values()) == draws and "normal" not in causes
    assert set(causes) >= {"no_capture", "repetition", "max_plies"}
    assert report["fair_compensation"] is None  # Alquerque has no points
    assert report["sprt"]["model"] == "pentanomial"
    rows = list(csv.reader(io.StringIO(to_csv(report))))
    assert rows[0] == ["section", "item", "value"]
    found = {(r[0], r[1]): r[2] for r in rows[1:]}
    assert float(found[("agents", "[hard].elo")]) == pytest.approx(report["agents"][0]["elo"])
    assert found[("batch", "id")] == bid


def test_missing_batch_is_a_lookup_error(migrated_sqlite_url: str) -> None:
    from storage.db import get_engine

    with pytest.raises(LookupError):
        build_report(get_engine(migrated_sqlite_url), "nope0000")


def test_alveoles_report_has_komi_heat_map_and_tiers(migrated_sqlite_url: str) -> None:
    from storage.db import get_engine

    rng = np.random.default_rng(8)
    stats = [alveoles_stats([int(rng.random() < 0.45) for _ in range(64)]) for _ in range(120)]
    _, bid = store_batch(migrated_sqlite_url, game="alveoles", players=2,
                         labels=["greedy", "random"],
                         outcomes=[alveoles_outcome(s) for s in stats],
                         stats=lambda i: stats[i])  # fmt: skip
    report = build_report(get_engine(migrated_sqlite_url), bid)
    json.dumps(report, allow_nan=False)
    assert report["fair_compensation"]["offsets"][0]["seat"] == 1
    game = report["game"]
    assert game["name"] == "alveoles" and game["matches"] == 120
    assert np.array(game["heat_map"]["seat0"]).shape == (8, 8)
    assert set(game["heat_map"]["by_agent"]) == {"greedy", "random"}


def test_compare_finds_a_different_first_player_advantage(migrated_sqlite_url: str) -> None:
    from storage.db import get_engine

    _, a = store_batch(migrated_sqlite_url, game="alquerque", players=2, labels=["x", "y"],
                       outcomes=two_player_outcomes(800, 0.65, seed=1))  # fmt: skip
    _, b = store_batch(migrated_sqlite_url, game="alquerque", players=2, labels=["x", "y"],
                       outcomes=two_player_outcomes(800, 0.5, seed=2))  # fmt: skip
    result = compare(get_engine(migrated_sqlite_url), a, b)
    json.dumps(result, allow_nan=False)
    fpa = result["first_player_advantage"]
    assert fpa["difference"] == pytest.approx(fpa["a"] - fpa["b"])
    assert fpa["ci_low"] > 0 and fpa["p_value"] < 0.01
    assert [s["seat"] for s in result["seats"]] == [0, 1]


def test_cli_report_and_compare(alquerque_batch: tuple[str, str], tmp_path) -> None:
    from api.cli import app

    url, bid = alquerque_batch
    runner = CliRunner()
    res = runner.invoke(app, ["report", bid, "--db", url, "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["batch"]["id"] == bid
    res = runner.invoke(app, ["report", bid, "--db", url])
    assert res.exit_code == 0 and "Seat balance" in res.stdout and "Pairings" in res.stdout
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", bid[:5], "--db", url, "-f", "html", "--out", str(out)])
    assert res.exit_code == 0 and out.read_text().startswith("<!DOCTYPE html>")
    res = runner.invoke(app, ["report", bid, "--db", url, "-f", "csv"])
    assert res.exit_code == 0 and res.stdout.startswith("section,item,value")
    res = runner.invoke(app, ["report", "zzzzzzzz", "--db", url])
    assert res.exit_code == 2 and "error" in res.stderr
    res = runner.invoke(app, ["report", bid, "--db", url, "-f", "pdf"])
    assert res.exit_code == 2
    res = runner.invoke(app, ["compare", bid, bid, "--db", url, "-f", "json"])
    assert res.exit_code == 0
    assert json.loads(res.stdout)["first_player_advantage"]["difference"] == 0
    res = runner.invoke(app, ["compare", bid[:4], bid, "--db", url, "-f", "json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["a"]["id"] == bid
    res = runner.invoke(app, ["compare", bid[:3], bid, "--db", url])
    assert res.exit_code == 2 and "at least 4 characters" in res.stderr


def test_api_report_routes(alquerque_batch: tuple[str, str]) -> None:
    from api.app import create_app
    from storage.settings import Settings

    url, bid = alquerque_batch
    # The routes read the app's own database, not whatever the environment points at.
    client = TestClient(create_app(Settings(database_url=url, broker_url=None, api_key=None)))
    res = client.get(f"/batches/{bid}/report")
    assert res.status_code == 200 and res.json()["batch"]["id"] == bid
    res = client.get(f"/batches/{bid}/report.csv")
    assert res.status_code == 200 and res.headers["content-type"].startswith("text/csv")
    res = client.get(f"/batches/{bid}/report.html")
    assert res.status_code == 200 and "<svg" in res.text
    res = client.get("/compare", params={"a": bid, "b": bid})
    assert res.status_code == 200 and res.json()["seats"][0]["difference"] == 0
    # A unique prefix of 4 or more characters names the batch at the edge, as the full id does.
    assert client.get(f"/batches/{bid[:4]}/report").json()["batch"]["id"] == bid
    assert client.get(f"/batches/{bid[:5]}/report.csv").status_code == 200
    assert client.get(f"/batches/{bid[:6]}/report.html").status_code == 200
    res = client.get("/compare", params={"a": bid[:4], "b": bid})
    assert res.status_code == 200 and res.json()["a"]["id"] == bid
    assert client.get(f"/batches/{bid[:3]}/report").status_code == 404  # too short a prefix
    assert client.get("/batches/0ddba11/report").status_code == 404  # no such batch
    assert client.get("/batches/nothere1/report").status_code == 422  # not a batch id
    assert client.get("/compare", params={"a": bid}).status_code == 422


def test_numeric_loader_matches_the_plain_seat_frame(db_url: str) -> None:
    import pandas as pd

    from analysis import frames

    outcomes = two_player_outcomes(50, 0.55, draw=0.2, seed=6)
    engine, bid = store_batch(db_url, game="alquerque", players=2, labels=["p", "q"],
                              outcomes=outcomes, chunk=20)  # fmt: skip
    plain = frames.seat_results(engine, bid)
    fast = frames.seat_results_numeric(engine, bid, ["p", "q"])
    unlabelled = frames.seat_results_numeric(engine, bid)
    for frame in (fast, unlabelled):
        expected = plain.drop(columns="rank")  # the analysis never reads rank
        pd.testing.assert_frame_equal(frame.assign(agent=frame["agent"].astype(object)), expected)


def test_match_frame_lists_played_and_failed_matches(migrated_sqlite_url: str) -> None:
    from analysis import frames

    outcomes = two_player_outcomes(8, 0.5, seed=3)
    engine, bid = store_batch(migrated_sqlite_url, game="alquerque", players=2,
                              labels=["p", "q"], outcomes=outcomes, failed=[2, 5],
                              ended_by=lambda i: "repetition" if i == 0 else "normal")  # fmt: skip
    frame = frames.matches(engine, bid)
    assert list(frame.columns) == [
        "match_index", "seed", "ok", "plies", "ended_by", "duration", "error", "first_seat",
        "opening",
    ]  # fmt: skip
    assert frame["match_index"].tolist() == list(range(10))
    assert frame.loc[~frame["ok"], "match_index"].tolist() == [2, 5]
    assert frame.loc[frame["ok"], "error"].isna().all()
    assert frame.loc[~frame["ok"], "error"].notna().all()
    assert (frame["ended_by"] == "repetition").sum() == 1
    stats_frame = frames.match_stats(engine, bid)  # successful matches only
    assert stats_frame["match_index"].tolist() == [0, 1, 3, 4, 6, 7, 8, 9]


def test_report_of_a_batch_with_nothing_played_yet(migrated_sqlite_url: str) -> None:
    from analysis.render_html import render_html
    from api.cli_tables import report_tables
    from storage.db import get_engine

    _, bid = store_batch(migrated_sqlite_url, game="alveoles", players=3,
                         labels=["a", "b", "c"], outcomes=[], failed=[0, 1])  # fmt: skip
    report = build_report(get_engine(migrated_sqlite_url), bid)
    json.dumps(report, allow_nan=False)
    assert report["seats"][0]["games"] == 0 and report["seats"][0]["win_share"] is None
    assert report["agents"] == [] and report["pairings"] == [] and report["strengths"] == []
    assert report["shape"]["failed"] == 2 and report["game"] is None
    page = render_html(report)
    assert page.startswith("<!DOCTYPE html>") and "fig-seats" not in page
    assert report_tables(report)
