"""Issue 18's reproductions that concern inference: matches that repeat one opening, turn
position where the starting seat is drawn, and a small constant comparison.

Expected values come from the stored rows read with plain SQL, SciPy and statsmodels, never
from the analysis functions under test.
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

import numpy as np
import pytest
from analysis_data import store_batch
from scipy import stats as sps
from sqlalchemy import text
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from analysis.compare import compare, compare_wide
from analysis.compensation import fair_compensation
from analysis.render_html import render_html
from analysis.report import build_report, to_csv
from analysis.seats import balance_interval
from analysis.tidy import Wide, by_turn, turn_order_varies
from api.cli_tables import compare_table, seat_table
from api.web.summaries import batch_rows
from storage import crud
from storage.db import get_engine
from storage.settings import Settings
from workers.batches import plan_batch
from workers.play import play_chunk


def play(url: str, **spec: Any) -> str:
    """Play a batch with the workers' own code and store it; its id."""
    plan = plan_batch(
        **{
            "players": None,
            "options": {},
            "seat_policy": None,
            "chunk_size": None,
            "max_plies": None,
            "settings": Settings(),
            **spec,
        }
    )
    engine = get_engine(url)
    batch = crud.create_batch(engine, plan=plan)
    records = play_chunk(batch, 0, plan.matches)
    crud.write_chunk(
        engine, batch_id=batch.id, start=0, stop=plan.matches, records=records, duration=0.1
    )
    crud.set_status(engine, batch.id, "done")
    return batch.id


@pytest.mark.slow
def test_one_opening_drawn_independently_is_not_one_observation(migrated_sqlite_url: str) -> None:
    """``playtester run alquerque --agents hard --seed 601 --no-variation``: every match opens
    alike, but each plays on with its own seeded search, so its eight games are eight draws:
    eight units (the design's rounds of one match), not one."""
    url = migrated_sqlite_url
    batch_id = play(
        url, game="alquerque", agents=["hard"], matches=8, seed=601, variation={"kind": "none"}
    )
    engine = get_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT moves, opening FROM match WHERE batch_id = :b AND ok"), {"b": batch_id}
        ).all()
    assert len({r.opening for r in rows}) == 1  # the stored rows: one opening key
    games = len({r.moves for r in rows})
    assert games == 8
    report = build_report(engine, batch_id)
    block = report["independence"]
    assert block["matches"] == 8 and block["distinct_openings"] == 1 and block["units"] == 8
    assert block["distinct_games"] == games and block["linked_by"] == "round"
    assert block["warning"] is None
    first = report["seats"][0]
    assert first["units"] == 8 and not first["interval"].startswith("none")


def test_a_batch_of_one_line_is_one_observation(migrated_sqlite_url: str) -> None:
    """Forty matches with one recorded opening and one move list (deterministic players with
    nothing to vary them): no more games than one round holds, so one unit; the report says so,
    warns, and bounds nothing, on every face."""
    win = ((1.0, 0.0), (1.0, 0.0))
    engine, batch_id = store_batch(
        migrated_sqlite_url, game="alveoles", players=2, labels=["a", "b"],
        seat_policy="fixed", outcomes=[win] * 40, openings=lambda i: 7,
    )  # fmt: skip
    report = build_report(engine, batch_id)
    block = report["independence"]
    assert block["matches"] == 40 and block["units"] == 1 and block["distinct_games"] == 1
    assert block["linked_by"] == "one line" and "the play is one line" in block["warning"]
    for seat in report["seats"]:
        # Whatever the truth, [0, 1] covers it: one observation bounds nothing.
        assert (seat["ci_low"], seat["ci_high"]) == (0.0, 1.0)
        assert seat["p_value"] is None and seat["units"] == 1
    fpa = report["first_player_advantage"]
    assert (fpa["ci_low"], fpa["ci_high"]) == (-0.5, 0.5)
    assert report["seat_test"]["p_value"] is None
    # Every face carries the warning.
    csv_rows = list(csv.reader(io.StringIO(to_csv(report))))
    assert ["independence", "warning", block["warning"]] in csv_rows
    assert block["warning"] in render_html(report)
    assert block["warning"] in str(seat_table(report).caption)
    row = batch_rows(engine, [crud.get_batch(engine, batch_id)])[0]
    assert "only 1 unit in 40 matches" in row["headline"]
    assert (row["first_player"]["ci_low"], row["first_player"]["ci_high"]) == (-0.5, 0.5)


@pytest.mark.slow
def test_alhambra_reports_the_starting_player_not_seat_0(migrated_sqlite_url: str) -> None:
    """Alhambra draws the starting seat (issue 18, seed 402, all greedy, three players): the
    first-player advantage is the share of whichever seat moved first."""
    url = migrated_sqlite_url
    batch_id = play(url, game="alhambra", players=3, agents=["greedy"], matches=15, seed=402)
    engine = get_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT s.match_index, s.seat, s.win_share, m.first_seat FROM seat_result s "
                "JOIN match m ON m.batch_id = s.batch_id AND m.match_index = s.match_index "
                "WHERE s.batch_id = :b ORDER BY s.match_index, s.seat"
            ),
            {"b": batch_id},
        ).all()
    first = {r.match_index: r.first_seat for r in rows}
    assert set(first.values()) != {0}, "seed 402 should not start with seat 0 every time"
    starter = np.array([r.win_share for r in rows if r.seat == r.first_seat])
    seat0 = np.array([r.win_share for r in rows if r.seat == 0])
    assert starter.size == seat0.size == 15
    report = build_report(engine, batch_id)
    fpa = report["first_player_advantage"]
    assert fpa["estimate"] == pytest.approx(starter.mean() - 1 / 3, abs=1e-12)
    assert fpa["by"].startswith("turn position 0")
    position0 = report["turn_positions"][0]
    assert position0["position"] == 0 and position0["win_share"] == pytest.approx(starter.mean())
    assert report["seats"][0]["win_share"] == pytest.approx(seat0.mean())
    assert (fpa["ci_low"], fpa["ci_high"]) == (
        pytest.approx(position0["ci_low"] - 1 / 3),
        pytest.approx(position0["ci_high"] - 1 / 3),
    )
    # The dashboard's headline is the same figure: every opening differs, so its units (by
    # opening) are the report's (by opening and round; fixed seats: rounds of one match).
    assert report["independence"]["units"] == 15
    row = batch_rows(engine, [crud.get_batch(engine, batch_id)])[0]
    for key in ("estimate", "ci_low", "ci_high"):
        assert row["first_player"][key] == pytest.approx(fpa[key], abs=1e-12)
    # The komi is by turn position too: its offsets are the later positions 1 and 2.
    komi = report["fair_compensation"]
    assert [o["seat"] for o in komi["offsets"]] == [1, 2]


def test_six_against_six_constant_batches_compare_exactly(migrated_sqlite_url: str) -> None:
    """Seeds 701/702's shape: seat 0 wins all six matches of one batch and none of the other.
    The difference is 100 % with a real interval and Fisher's exact p = 2 / C(12, 6)."""
    url = migrated_sqlite_url
    win, loss = ((1.0, 0.0), (1.0, 0.0)), ((0.0, 1.0), (0.0, 1.0))
    common = {"game": "alveoles", "players": 2, "labels": ["a", "b"], "seat_policy": "fixed"}
    engine, a = store_batch(url, outcomes=[win] * 6, **common)
    _, b = store_batch(url, outcomes=[loss] * 6, **common)
    result = compare(engine, a, b)
    fpa = result["first_player_advantage"]
    assert fpa["difference"] == 1.0
    fisher = float(sps.fisher_exact([[6, 0], [0, 6]]).pvalue)
    assert fpa["p_value"] == pytest.approx(fisher) and fpa["p_value"] == pytest.approx(
        2 / math.comb(12, 6)
    )
    assert round(fpa["p_value"], 4) == 0.0022
    # Newcombe: 1 − √((1 − l_a)² + u_b²) from each batch's exact (Clopper–Pearson) interval.
    lo_a = proportion_confint(6, 6, method="beta")[0]
    hi_b = proportion_confint(0, 6, method="beta")[1]
    assert fpa["ci_low"] == pytest.approx(1 - math.hypot(1 - lo_a, hi_b))
    assert fpa["ci_high"] == 1.0 and fpa["ci_low"] < 0.6
    seats = result["seats"]
    assert seats[1]["difference"] == -1.0 and seats[1]["p_value"] == pytest.approx(fisher)
    assert seats[0]["p_holm"] == seats[0]["p_value"]  # two seats: one hypothesis
    assert result["turn_positions"] is None
    caption = str(compare_table(result).caption)
    assert "Fisher's exact" in caption


def _wide(win: list[list[float]], points: list[list[float]], first: list[int]) -> Wide:
    m = len(win)
    n = len(win[0])
    return Wide(
        match_index=np.arange(m, dtype=np.int64),
        win=np.array(win, dtype=float),
        points=np.array(points, dtype=float),
        agent=np.zeros((m, n), np.int64),
        labels=("a",),
        first_seat=np.array(first, dtype=np.int64),
    )


def test_turn_order_reads_each_match_from_its_starting_seat() -> None:
    w = _wide([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], [[1, 2, 3], [4, 5, 6]], [1, 2])
    t = by_turn(w)
    # Match 0 started with seat 1 (then 2, 0); match 1 with seat 2 (then 0, 1).
    assert t.win.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert t.points.tolist() == [[2, 3, 1], [6, 4, 5]]
    assert turn_order_varies(w) and not turn_order_varies(t)


def test_the_komi_is_the_starting_players_not_seat_0s() -> None:
    # The starting player scores 10 more; who starts alternates, so seat 0 alone shows nothing.
    rng = np.random.default_rng(2)
    base = rng.integers(20, 40, size=(200, 2)).astype(float)
    first = np.arange(200) % 2
    points = base.copy()
    points[np.arange(200), first] += 10
    win = (points == points.max(axis=1, keepdims=True)).astype(float)
    win /= win.sum(axis=1, keepdims=True)
    w = _wide(win.tolist(), points.tolist(), first.tolist())
    komi = fair_compensation(w)
    assert komi is not None
    starter_gap = points[np.arange(200), first] - points[np.arange(200), 1 - first]
    assert komi["offsets"][0]["points"] == float(np.median(starter_gap))
    assert abs(float(np.median(points[:, 0] - points[:, 1]))) < 5 < komi["offsets"][0]["points"]


def test_balance_interval_from_simultaneous_seat_intervals() -> None:
    # Two seats: seat 0 took 30 of 50; its exact interval maps straight onto the gap.
    w2 = _wide([[1.0, 0.0]] * 30 + [[0.0, 1.0]] * 20, [[0, 0]] * 50, [0] * 50)
    lo, hi = proportion_confint(30, 50, method="beta")
    low, high = balance_interval(w2)
    assert high == pytest.approx(1.0)  # ½ lies inside seat 0's interval: a fair game fits
    assert low == pytest.approx(1 - max(abs(2 * lo - 1), abs(2 * hi - 1)))
    # Three seats: Bonferroni intervals at 1 − 0.05/3.
    wins = [0] * 20 + [1] * 12 + [2] * 8
    w3 = _wide([[float(s == k) for s in range(3)] for k in wins], [[0, 0, 0]] * 40, [0] * 40)
    bounds = [proportion_confint(c, 40, alpha=0.05 / 3, method="beta") for c in (20, 12, 8)]
    lows, highs = [b[0] for b in bounds], [b[1] for b in bounds]
    low3, high3 = balance_interval(w3)
    assert low3 == pytest.approx(1 - (max(highs) - min(lows)))
    assert high3 == pytest.approx(1 - max(0.0, max(lows) - min(highs)))


def test_compare_adjusts_three_seats_with_holm() -> None:
    def batch(wins: list[int]) -> Wide:
        return _wide([[float(s == k) for s in range(3)] for k in wins], [[0] * 3] * 60, [0] * 60)

    a = batch([0] * 30 + [1] * 18 + [2] * 12)
    b = batch([0] * 15 + [1] * 25 + [2] * 20)
    rows = compare_wide(a, b)["seats"]
    raw = [r["p_value"] for r in rows]
    assert [r["p_holm"] for r in rows] == pytest.approx(multipletests(raw, method="holm")[1])
    assert rows[0]["p_value"] == pytest.approx(sps.fisher_exact([[30, 30], [15, 45]]).pvalue)


def test_the_warning_suggests_what_the_declared_variation_lacks() -> None:
    from analysis.independence import remedy

    assert "Declare variation" in remedy(None)
    assert "Declare variation" in remedy({"kind": "none"})
    assert "more noise plies" in remedy({"kind": "noise", "plies": 10, "margin": 0.05})
    assert "Longer openings" in remedy({"kind": "openings", "plies": 4})
