"""Agent table, pairings (W/D/L, Elo, LOS, pentanomial) and Bradley–Terry strengths."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from analysis_data import seat_frame
from scipy import stats as sps

from analysis import stats
from analysis.agents import agent_table, pairings, strengths, swapped_pairs
from analysis.tidy import to_wide

WIN, LOSS, DRAW = ((1.0, 0.0), (1.0, 0.0)), ((0.0, 1.0), (0.0, 1.0)), ((0.5, 0.5), (0.5, 0.5))


def test_pentanomial_from_hand_made_pairs() -> None:
    # Rotate: even matches a is seat 0, odd matches a is seat 1.
    # Pair 0: a wins both (2 pts). Pair 1: a wins as seat 0, loses as seat 1 (1 pt).
    # Pair 2: draw + a loses as seat 0 then wins... (a: 0.5 + 1 = 1.5). Pair 3: a loses both.
    outcomes = [WIN, LOSS, WIN, WIN, DRAW, LOSS, LOSS, WIN]
    df = seat_frame(outcomes, ["a", "b"])
    before = df.copy(deep=True)
    w = to_wide(df, 2)
    pairs = swapped_pairs(w, "rotate")
    assert pairs is not None and pairs.shape == (4, 2)
    table = pairings(w, "rotate")
    pd.testing.assert_frame_equal(df, before)
    row = table.iloc[0]
    assert (row["agent_a"], row["agent_b"]) == ("a", "b")
    assert (row["wins"], row["draws"], row["losses"]) == (4, 1, 3)
    assert row["pentanomial"] == [1, 0, 1, 1, 1]
    mean, var = stats.pentanomial([1, 0, 1, 1, 1])
    assert mean == pytest.approx((0 + 0.5 + 0.75 + 1) / 4)
    assert row["score"] == pytest.approx(mean)
    elo, lo, hi = stats.elo_with_interval(mean, var, 4)
    assert (row["elo"], row["elo_low"], row["elo_high"]) == pytest.approx((elo, lo, hi))
    assert row["los"] == pytest.approx(sps.norm.cdf((4 - 3) / math.sqrt(7)))
    assert row["model"] == "pentanomial"


def test_fixed_seats_use_the_trinomial_and_elo_closed_form() -> None:
    outcomes = [WIN] * 75 + [LOSS] * 25
    w = to_wide(seat_frame(outcomes, ["a", "b"], policy="fixed"), 2)
    assert swapped_pairs(w, "fixed") is None
    row = pairings(w, "fixed").iloc[0]
    assert row["model"] == "trinomial"
    assert row["score"] == pytest.approx(0.75)
    assert row["elo"] == pytest.approx(400 * math.log10(3))
    table = agent_table(w, "fixed").set_index("agent")
    assert table.loc["a", "elo"] == pytest.approx(400 * math.log10(3))
    assert table.loc["b", "elo"] == pytest.approx(-400 * math.log10(3))
    assert table.loc["a", "elo_low"] < table.loc["a", "elo"] < table.loc["a", "elo_high"]
    assert table.loc["a", "interval"] == "wilson"


def test_three_player_pairings_and_strengths_order_the_agents() -> None:
    rng = np.random.default_rng(2)
    outcomes = []
    strength = {0: 3.0, 1: 1.0, 2: 0.3}
    for i in range(900):
        seat_agent = [(s + i) % 3 for s in range(3)]
        weights = np.array([strength[a] for a in seat_agent])
        winner = rng.choice(3, p=weights / weights.sum())
        pts = tuple(float(10 if s == winner else rng.integers(0, 9)) for s in range(3))
        outcomes.append((tuple(float(s == winner) for s in range(3)), pts))
    w = to_wide(seat_frame(outcomes, ["strong", "mid", "weak"]), 3)
    bt = strengths(w, samples=60).set_index("agent")
    assert bt.loc["strong", "strength"] > bt.loc["mid", "strength"] > bt.loc["weak", "strength"]
    assert bt["strength"].sum() == pytest.approx(0.0, abs=1e-6)
    for _, r in bt.iterrows():
        assert r["ci_low"] <= r["strength"] <= r["ci_high"]
    table = pairings(w, "rotate").set_index(["agent_a", "agent_b"])
    assert len(table) == 3
    assert table.loc[("strong", "weak"), "los"] > 0.99
    assert (table["wins"] + table["draws"] + table["losses"] == table["games"]).all()
    agents = agent_table(w, "rotate").set_index("agent")
    assert agents.loc["strong", "field_score"] > 0.5 > agents.loc["weak", "field_score"]
    assert agents.loc["strong", "score"] == pytest.approx(
        np.mean([o[0][s] for i, o in enumerate(outcomes) for s in range(3) if (s + i) % 3 == 0])
    )
