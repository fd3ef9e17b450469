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
from statsmodels.stats.proportion import proportion_confint

from analysis.compare import compare
from analysis.render_html import render_html
from analysis.report import build_report, to_csv
from api.cli_tables import compare_table, seat_table
from api.web.summaries import batch_rows
from storage import crud
from storage.db import get_engine
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
def test_one_repeated_opening_is_one_observation(migrated_sqlite_url: str) -> None:
    """``playtester run alquerque --agents hard --seed 601``: the hard players replay one
    opening, so the batch is one unit; the report says so, warns, and bounds nothing."""
    url = migrated_sqlite_url
    batch_id = play(url, game="alquerque", agents=["hard"], matches=8, seed=601)
    engine = get_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT moves, opening FROM match WHERE batch_id = :b AND ok"), {"b": batch_id}
        ).all()
    assert len({r.opening for r in rows}) == 1  # the stored rows: one opening key
    report = build_report(engine, batch_id)
    block = report["independence"]
    assert block["matches"] == 8 and block["distinct_openings"] == 1 and block["units"] == 1
    assert block["distinct_games"] == len({r.moves for r in rows})
    assert block["effective_n"] == 1.0 and block["variation"] is None
    assert "1 distinct opening" in block["warning"]
    for seat in report["seats"]:
        # Whatever the truth, [0, 1] covers it: one observation bounds nothing.
        assert (seat["ci_low"], seat["ci_high"]) == (0.0, 1.0)
        assert seat["p_value"] is None and seat["units"] == 1
    fpa = report["first_player_advantage"]
    assert (fpa["ci_low"], fpa["ci_high"]) == (-0.5, 0.5)
    assert report["seat_test"]["p_value"] is None
    assert (report["shape"]["balance_ci_low"], report["shape"]["balance_ci_high"]) == (0.0, 1.0)
    # Every face carries the warning.
    csv_rows = list(csv.reader(io.StringIO(to_csv(report))))
    assert ["independence", "warning", block["warning"]] in csv_rows
    assert block["warning"] in render_html(report)
    assert block["warning"] in str(seat_table(report).caption)
    row = batch_rows(engine, [crud.get_batch(engine, batch_id)])[0]
    assert "only 1 distinct opening in 8 matches" in row["headline"]
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
