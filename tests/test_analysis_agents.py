"""Agent table, pairings (W/D/L, Elo, LOS, pentanomial) and Bradley–Terry strengths.

Expected values come from closed forms, statsmodels, SciPy, choix and loops written here, never
from ``analysis``. Conventions: a head-to-head result comes from the win shares (equal win
shares are a draw, whatever the points); an interval is mean ± z·√(s²/n) with the sample
variance (ddof = 1) of the units (games, or seat-swapped pairs); Elo = −400·log10(1/score − 1).
"""

from __future__ import annotations

import math

import choix
import numpy as np
import pandas as pd
import pytest
from analysis_data import seat_frame
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from analysis.agents import agent_table, pairings, strengths, swapped_pairs
from analysis.tidy import to_wide

WIN, LOSS, DRAW = ((1.0, 0.0), (1.0, 0.0)), ((0.0, 1.0), (0.0, 1.0)), ((0.5, 0.5), (0.5, 0.5))
DRAW_SEAT0_AHEAD = ((0.5, 0.5), (3.0, 1.0))
"""A drawn game (equal returns) in which seat 0 has more points: ``rank`` puts seat 0 first."""
DRAW_SEAT1_AHEAD = ((0.5, 0.5), (2.0, 4.0))
Z95 = float(sps.norm.ppf(0.975))


def elo(score: float) -> float:
    return -400.0 * math.log10(1.0 / score - 1.0)


def normal_elo_interval(units: list[float]) -> tuple[float, float]:
    """Elo bounds of the normal interval of the units' mean, sample variance (ddof = 1)."""
    u = np.asarray(units, dtype=float)
    half = Z95 * math.sqrt(float(u.var(ddof=1)) / u.size)
    return (elo(u.mean() - half), elo(u.mean() + half))


def rotate_pairs_table() -> pd.DataFrame:
    # Rotate: a sits in seat 0 in even matches, seat 1 in odd ones. a's points per pair:
    # pair 0 wins both (2), pair 1 wins as seat 0 and loses as seat 1 (1), pair 2 draws as seat 0
    # and wins as seat 1 (1½), pair 3 loses both (0).
    outcomes = [WIN, LOSS, WIN, WIN, DRAW, LOSS, LOSS, WIN]
    df = seat_frame(outcomes, ["a", "b"])
    before = df.copy(deep=True)
    w = to_wide(df, 2)
    pairs = swapped_pairs(w, "rotate")
    assert pairs is not None and pairs.shape == (4, 2)
    table = pairings(w, "rotate")
    pd.testing.assert_frame_equal(df, before)
    return table


def test_pentanomial_counts_score_and_los_from_hand_made_pairs() -> None:
    row = rotate_pairs_table().iloc[0]
    assert (row["agent_a"], row["agent_b"]) == ("a", "b")
    assert (row["wins"], row["draws"], row["losses"]) == (4, 1, 3)
    assert row["pentanomial"] == [1, 0, 1, 1, 1]
    assert (row["model"], row["pairs"], row["games"]) == ("pentanomial", 4, 8)
    assert row["score"] == pytest.approx((0 + 0.5 + 0.75 + 1) / 4)
    assert row["elo"] == pytest.approx(400 * math.log10(9 / 7))  # score 9/16
    assert row["los"] == pytest.approx(sps.norm.cdf((4 - 3) / math.sqrt(7)))


def test_pentanomial_interval_uses_the_sample_variance_of_the_pairs() -> None:
    row = rotate_pairs_table().iloc[0]
    low, high = normal_elo_interval([0.0, 0.5, 0.75, 1.0])
    assert (row["elo_low"], row["elo_high"]) == pytest.approx((low, high), rel=1e-12)


def fixed_table() -> tuple[pd.Series, pd.DataFrame]:
    w = to_wide(seat_frame([WIN] * 75 + [LOSS] * 25, ["a", "b"], policy="fixed"), 2)
    assert swapped_pairs(w, "fixed") is None
    return pairings(w, "fixed").iloc[0], agent_table(w, "fixed").set_index("agent")


def test_fixed_seats_use_the_trinomial_and_elo_closed_form() -> None:
    row, table = fixed_table()
    assert (row["model"], row["games"], row["pairs"], row["pentanomial"]) == (
        "trinomial",
        100,
        0,
        None,
    )
    assert row["score"] == pytest.approx(0.75)
    assert row["elo"] == pytest.approx(400 * math.log10(3))
    assert table.loc["a", "elo"] == pytest.approx(400 * math.log10(3))
    assert table.loc["b", "elo"] == pytest.approx(-400 * math.log10(3))
    assert table.loc["a", "interval"] == "wilson"
    lo, hi = proportion_confint(75, 100, alpha=0.05, method="wilson")
    assert (table.loc["a", "ci_low"], table.loc["a", "ci_high"]) == pytest.approx((lo, hi))
    assert (table.loc["b", "ci_low"], table.loc["b", "ci_high"]) == pytest.approx((1 - hi, 1 - lo))


def test_trinomial_intervals_use_the_sample_variance_of_the_games() -> None:
    row, table = fixed_table()
    low, high = normal_elo_interval([1.0] * 75 + [0.0] * 25)
    assert (row["elo_low"], row["elo_high"]) == pytest.approx((low, high), rel=1e-12)
    assert (table.loc["a", "elo_low"], table.loc["a", "elo_high"]) == pytest.approx(
        (low, high), rel=1e-12
    )
    assert (table.loc["b", "elo_low"], table.loc["b", "elo_high"]) == pytest.approx(
        (-high, -low), rel=1e-12
    )


@pytest.mark.parametrize("policy", ["fixed", "rotate"])
def test_drawn_games_are_draws_whatever_the_points(policy: str) -> None:
    outcomes = [WIN] * 6 + [LOSS] * 2 + [DRAW_SEAT0_AHEAD] * 4 + [DRAW_SEAT1_AHEAD] * 2
    w = to_wide(seat_frame(outcomes, ["a", "b"], policy=policy), 2)
    # a's result in each match, read off the win shares (a sits in seat 0 unless rotated).
    seat_of_a = [0 if policy == "fixed" or i % 2 == 0 else 1 for i in range(len(outcomes))]
    results = []
    for (win, _), s in zip(outcomes, seat_of_a, strict=True):
        results.append(1.0 if win[s] > win[1 - s] else 0.5 if win[s] == win[1 - s] else 0.0)
    wdl = (results.count(1.0), results.count(0.5), results.count(0.0))
    assert sum(wdl) == len(outcomes) and wdl[1] == 6
    row = pairings(w, policy).iloc[0]
    assert (row["wins"], row["draws"], row["losses"]) == wdl
    assert row["los"] == pytest.approx(sps.norm.cdf((wdl[0] - wdl[2]) / math.sqrt(wdl[0] + wdl[2])))
    assert row["score"] == pytest.approx(float(np.mean(results)))
    table = agent_table(w, policy).set_index("agent")
    assert table.loc["a", "field_score"] == pytest.approx(float(np.mean(results)))
    assert table.loc["b", "field_score"] == pytest.approx(1 - float(np.mean(results)))
    if policy == "fixed":
        low, high = normal_elo_interval(results)
        assert (row["elo_low"], row["elo_high"]) == pytest.approx((low, high), rel=1e-12)


def three_player_batch() -> tuple[list, pd.DataFrame]:
    """900 matches of strong/mid/weak; the winner takes 1.0, the two losers 0 with any points."""
    rng = np.random.default_rng(2)
    outcomes = []
    strength = {0: 3.0, 1: 1.0, 2: 0.3}
    for i in range(900):
        seat_agent = [(s + i) % 3 for s in range(3)]
        weights = np.array([strength[a] for a in seat_agent])
        winner = rng.choice(3, p=weights / weights.sum())
        pts = tuple(float(10 if s == winner else rng.integers(0, 9)) for s in range(3))
        outcomes.append((tuple(float(s == winner) for s in range(3)), pts))
    return outcomes, seat_frame(outcomes, ["strong", "mid", "weak"])


def three_player_results(outcomes: list) -> tuple[np.ndarray, np.ndarray, dict[int, list]]:
    """From the win shares: C[a, b] = a's summed results against b; R[a, b, r] = how often a's
    result against b was r (0 loss, 1 draw, 2 win); each agent's per-game field score."""
    comp, record = np.zeros((3, 3)), np.zeros((3, 3, 3), dtype=np.int64)
    field: dict[int, list[float]] = {0: [], 1: [], 2: []}
    for i, (win, _) in enumerate(outcomes):
        agent = [(s + i) % 3 for s in range(3)]
        for s in range(3):
            mine = []
            for t in (t for t in range(3) if t != s):
                r = 1.0 if win[s] > win[t] else 0.5 if win[s] == win[t] else 0.0
                comp[agent[s], agent[t]] += r
                record[agent[s], agent[t], int(2 * r)] += 1
                mine.append(r)
            field[agent[s]].append(sum(mine) / 2)
    return comp, record, field


def test_three_player_pairings_count_two_losers_as_a_draw() -> None:
    outcomes, df = three_player_batch()
    comp, record, _ = three_player_results(outcomes)
    table = pairings(to_wide(df, 3), "rotate").set_index(["agent_a", "agent_b"])
    names = ["strong", "mid", "weak"]
    for a in range(3):
        for b in range(a + 1, 3):
            row = table.loc[(names[a], names[b])]
            losses, draws, wins = record[a, b]
            assert draws > 0  # both lost to the third agent
            assert (row["wins"], row["draws"], row["losses"], row["games"]) == (
                wins,
                draws,
                losses,
                900,
            )
            assert row["score"] == pytest.approx(comp[a, b] / 900)
            expected_los = sps.norm.cdf((wins - losses) / math.sqrt(wins + losses))
            assert row["los"] == pytest.approx(expected_los)


def test_three_player_field_scores_and_strengths_from_results() -> None:
    outcomes, df = three_player_batch()
    comp, _, field = three_player_results(outcomes)
    w = to_wide(df, 3)
    agents = agent_table(w, "rotate").set_index("agent")
    for a, name in enumerate(["strong", "mid", "weak"]):
        assert agents.loc[name, "field_score"] == pytest.approx(float(np.mean(field[a])))
        assert agents.loc[name, "elo"] == pytest.approx(elo(float(np.mean(field[a]))))
        low, high = normal_elo_interval(field[a])
        assert (agents.loc[name, "elo_low"], agents.loc[name, "elo_high"]) == pytest.approx(
            (low, high), rel=1e-12
        )
        wins_a = [o[0][s] for i, o in enumerate(outcomes) for s in range(3) if (s + i) % 3 == a]
        assert agents.loc[name, "score"] == pytest.approx(float(np.mean(wins_a)))
    theta = choix.ilsr_pairwise_dense(comp, alpha=0.01)
    expected = (theta - theta.mean()) * 400 / math.log(10)
    bt = strengths(w, samples=60).set_index("agent")
    assert bt.loc[["strong", "mid", "weak"], "strength"].to_numpy() == pytest.approx(
        expected, abs=1e-6
    )
    assert expected[0] > expected[1] > expected[2]
    for _, r in bt.iterrows():
        assert r["ci_low"] <= r["strength"] <= r["ci_high"]
