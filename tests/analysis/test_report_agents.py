"""Agent figures of stored batches: units of sampling, copies of one agent in fixed seats."""

from __future__ import annotations

import json
import math

import pytest
from analysis_data import clustered_score, played_batch, store_batch

from analysis.render_html import render_html
from analysis.report import build_report
from api.cli_tables import report_tables
from storage.db import get_engine

WIN, LOSS, DRAW = ((1.0, 0.0), (1.0, 0.0)), ((0.0, 1.0), (0.0, 1.0)), ((0.5, 0.5), (0.5, 0.5))


def elo(score: float) -> float:
    return -400.0 * math.log10(1.0 / score - 1.0)


def test_pairs_replaying_three_openings_are_three_units(migrated_sqlite_url: str) -> None:
    # Twenty seat-swapped pairs, each playing one of three openings with both seatings.
    by_opening = {0: (WIN, LOSS), 1: (WIN, WIN), 2: (WIN, DRAW)}
    outcomes = [g for k in range(20) for g in by_opening[k % 3]]
    engine, bid = store_batch(
        migrated_sqlite_url, game="alquerque", players=2, labels=["hard", "medium"],
        outcomes=outcomes, openings=lambda i: (i // 2) % 3, moves=lambda i: (f"m{i}",),
    )  # fmt: skip
    report = build_report(engine, bid)
    json.dumps(report, allow_nan=False)
    row = report["pairings"][0]
    assert (row["units"], row["model"], row["pairs"], row["games"]) == (3, "clustered", 20, 40)
    # rotate: hard sits in seat 0 in even matches.
    hard = [win[i % 2] for i, (win, _) in enumerate(outcomes)]
    est = clustered_score(hard, [(i // 2) % 3 for i in range(40)])
    assert (row["elo_low"], row["elo_high"]) == pytest.approx(
        (elo(est["lo"]), elo(est["hi"])), rel=1e-12
    )
    assert row["p_value"] == pytest.approx(est["p"], rel=1e-12)
    agents = {a["agent"]: a for a in report["agents"]}
    assert agents["hard"]["units"] == 3


def test_one_opening_gives_an_infinite_elo_no_finite_interval(migrated_sqlite_url: str) -> None:
    engine, bid = store_batch(
        migrated_sqlite_url, game="alquerque", players=2, labels=["hard", "medium"],
        outcomes=[WIN, LOSS] * 20, openings=lambda i: 42,
    )  # fmt: skip
    row = build_report(engine, bid)["pairings"][0]
    assert row["score"] == 1.0 and row["units"] == 1
    assert row["elo"] is None and row["elo_low"] is None and row["elo_high"] is None
    assert "one unit of sampling" in row["note"]


@pytest.mark.slow
def test_self_play_in_fixed_seats_shows_no_strength_gap(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    bid = played_batch(url, "alquerque", ["easy", "easy"], 16)
    report = build_report(get_engine(url), bid)
    assert report["batch"]["seat_policy"] == "fixed"
    assert report["batch"]["labels"] == ["easy", "easy#2"]
    (agent,) = report["agents"]
    assert agent["labels"] == ["easy", "easy#2"] and agent["elo"] is None
    assert agent["note"].startswith("no other agent to compare with")
    assert "1/n by construction" in agent["note"] and agent["ci_low"] is None
    (pair,) = report["pairings"]
    assert pair["comparison"] == "seat effect"
    assert all(pair[k] is None for k in ("elo", "elo_low", "elo_high", "los", "p_value"))
    assert "easy vs easy#2 (seat effect)" in render_html(report)
    tables = {str(t.title): t for t in report_tables(report)}
    shown = [list(c.cells) for c in tables["Pairings"].columns]
    assert shown[0] == ["easy vs easy#2 (seat effect)"]
