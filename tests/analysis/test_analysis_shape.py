"""Game shape, komi and the Alvéoles and Alquerque sections on hand-built results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from analysis_data import CLASSIC_VALUES, alveoles_outcome, alveoles_stats, seat_frame

from analysis.compensation import fair_compensation, shares_with_offsets
from analysis.games.alquerque import alquerque_section
from analysis.games.alveoles import alveoles_section
from analysis.shape import game_shape, plies_summary
from analysis.tidy import to_wide


def test_plies_summary_matches_numpy_on_the_expanded_lengths() -> None:
    lengths = np.array([12] * 5 + [30] * 3 + [31] * 10 + [80])
    values, counts = np.unique(lengths, return_counts=True)
    got = plies_summary(pd.DataFrame({"plies": values, "count": counts}))
    assert got["mean"] == pytest.approx(lengths.mean())
    assert got["median"] == pytest.approx(np.median(lengths))
    assert got["p10"] == pytest.approx(np.quantile(lengths, 0.1))
    assert got["p90"] == pytest.approx(np.quantile(lengths, 0.9))
    assert sum(got["histogram"]["counts"]) == lengths.size
    edges = got["histogram"]["edges"]
    assert edges[0] <= 12 and edges[-1] > 80


def test_shape_draws_completion_and_balance() -> None:
    outcomes = [((1.0, 0.0), (1.0, 0.0))] * 50 + [((0.0, 1.0), (0.0, 1.0))] * 30
    outcomes += [((0.5, 0.5), (0.5, 0.5))] * 20
    w = to_wide(seat_frame(outcomes, ["a", "b"], policy="fixed"), 2)
    shape = game_shape(
        w,
        pd.DataFrame({"plies": [10], "count": [100]}),
        pd.DataFrame({"ended_by": ["normal", "repetition"], "count": [80, 20]}),
    )
    assert shape["draw_rate"] == pytest.approx(0.2)
    assert shape["completion"] == pytest.approx(0.8)
    # Seat shares 0.6 and 0.4 (draws count half): balance 1 − 0.2.
    assert shape["balance"] == pytest.approx(0.8)
    assert shape["ended_by"] == {"normal": 80, "repetition": 20}


def test_two_player_komi_is_the_median_difference() -> None:
    rng = np.random.default_rng(1)
    outcomes = []
    for _ in range(2000):
        p1 = float(rng.integers(100, 300))
        p0 = p1 + 12 + float(rng.integers(-40, 41))
        win = (1.0, 0.0) if p0 > p1 else (0.0, 1.0) if p1 > p0 else (0.5, 0.5)
        outcomes.append((win, (p0, p1)))
    w = to_wide(seat_frame(outcomes, ["a", "b"], policy="fixed"), 2)
    komi = fair_compensation(w, agent_groups=[0, 0], samples=100)  # self-play
    assert komi is not None
    offset = komi["offsets"][0]
    diffs = w.points[:, 0] - w.points[:, 1]
    assert offset["points"] == pytest.approx(np.median(diffs))
    assert offset["ci_low"] <= 12 <= offset["ci_high"]
    assert komi["win_share_after"][0] == pytest.approx(0.5, abs=0.03)
    assert komi["agent_corrected"] is False


def test_fixed_seats_of_different_agents_give_no_komi() -> None:
    outcomes = [((1.0, 0.0), (300.0, 200.0)), ((0.0, 1.0), (240.0, 260.0))] * 30
    w = to_wide(seat_frame(outcomes, ["greedy", "random"], policy="fixed"), 2)
    komi = fair_compensation(w, agent_groups=[0, 1])
    assert komi is not None
    assert komi["offsets"] is None and "cannot be estimated" in komi["note"]


def test_komi_of_different_agents_measures_the_seat_not_the_agents() -> None:
    # Agent a scores 300 points more than b; seat 0 is worth 6 points; pairs swap the seats.
    rng = np.random.default_rng(11)
    outcomes = []
    for i in range(3000):
        a_first = i % 2 == 0
        noise = rng.normal(0, 40, size=2)
        strength = np.array([300.0, 0.0]) if a_first else np.array([0.0, 300.0])
        pts = np.round(strength + np.array([6.0, 0.0]) + noise + 100)
        win = (1.0, 0.0) if pts[0] > pts[1] else (0.0, 1.0) if pts[1] > pts[0] else (0.5, 0.5)
        outcomes.append((win, tuple(pts)))
    w = to_wide(seat_frame(outcomes, ["a", "b"], policy="rotate"), 2)
    komi = fair_compensation(w, agent_groups=[0, 1], samples=100)
    assert komi is not None and komi["agent_corrected"] is True
    offset = komi["offsets"][0]
    # The pooled median of seat 0 minus seat 1 would sit between the modes at ±306.
    assert offset["ci_low"] <= 6 <= offset["ci_high"]
    assert offset["ci_high"] - offset["ci_low"] < 12


def test_small_samples_get_an_honest_komi_interval_or_none() -> None:
    # Gaps of +20 and −20, three each. Clopper–Pearson at 6 matches: 0 of 6 has upper end
    # 1 − 0.025^(1/6) = 0.459 < ½ and 6 of 6 lower end 0.541 > ½, so komi below −20 or above
    # +20 is rejected, and anything between leaves the second player 3 of 6: [−20, 20].
    outcomes = [((1.0, 0.0), (120.0, 100.0)), ((0.0, 1.0), (90.0, 110.0))] * 3
    w = to_wide(seat_frame(outcomes, ["a", "a"], policy="fixed"), 2)
    komi = fair_compensation(w, agent_groups=[0, 0])
    assert komi is not None
    offset = komi["offsets"][0]
    assert (offset["ci_low"], offset["ci_high"]) == (-20.0, 20.0)
    # At 4 matches 0 of 4 has upper end 1 − 0.025^(1/4) = 0.602 ≥ ½: no bound on either side.
    w4 = to_wide(seat_frame(outcomes[:4], ["a", "a"], policy="fixed"), 2)
    komi4 = fair_compensation(w4, agent_groups=[0, 0])
    assert komi4 is not None
    assert np.isnan(komi4["offsets"][0]["ci_low"]) and np.isnan(komi4["offsets"][0]["ci_high"])
    assert "cannot bound" in komi4["note"]


def test_three_player_offsets_equalise_win_shares() -> None:
    rng = np.random.default_rng(4)
    pts = rng.normal(100, 15, size=(3000, 3)) + np.array([20.0, 8.0, 0.0])
    pts = np.round(pts)
    outcomes = []
    for row in pts:
        top = row.max()
        winners = row == top
        outcomes.append((tuple(winners / winners.sum()), tuple(row)))
    w = to_wide(seat_frame(outcomes, ["a", "b", "c"], policy="fixed"), 3)
    komi = fair_compensation(w, agent_groups=[0, 0, 0], samples=10)
    assert komi is not None
    offsets = np.array([0.0] + [o["points"] for o in komi["offsets"]])
    assert offsets[1] == pytest.approx(12, abs=4) and offsets[2] == pytest.approx(20, abs=4)
    shares = shares_with_offsets(w.points, offsets)
    # Whole points make the shares jump by many matches at once, so exact equality is out of
    # reach; the solve gets within a fraction of a percentage point and says how close.
    assert shares == pytest.approx([1 / 3] * 3, abs=0.003)


def test_alveoles_heat_map_on_hand_built_results() -> None:
    all_zero = [0] * 64
    half = [0] * 32 + [1] * 32  # rows 1-4 seat 0, rows 5-8 seat 1
    stats = [alveoles_stats(all_zero, rows=(8, 0)), alveoles_stats(half, rows=(4, 4))]
    outcomes = [alveoles_outcome(s) for s in stats]
    df = seat_frame(outcomes, ["greedy", "random"])  # rotate: match 1 swaps the seats
    w = to_wide(df, 2)
    match_stats = pd.DataFrame({"match_index": [0, 1], "stats": stats})
    before = match_stats.copy(deep=True)
    sec = alveoles_section(match_stats, w)
    pd.testing.assert_frame_equal(match_stats, before)
    seat0 = np.array(sec["heat_map"]["seat0"])
    assert seat0.shape == (8, 8)
    assert (seat0[:4] == 1.0).all() and (seat0[4:] == 0.5).all()
    greedy = np.array(sec["heat_map"]["by_agent"]["greedy"])
    random_ = np.array(sec["heat_map"]["by_agent"]["random"])
    # Match 0: greedy (seat 0) owns all. Match 1: random is seat 0 and owns rows 1-4.
    assert (greedy[:4] == 0.5).all() and (greedy[4:] == 1.0).all()
    assert (random_[:4] == 0.5).all() and (random_[4:] == 0.0).all()
    assert sec["tiers"] == [50, 30, 20, 15, 10, 5, 1]
    by_agent = {(r["agent"], r["tier"]): r for r in sec["tiers_by_agent"]}
    # The four 50s (d4 e4 d5 e5): greedy takes all in match 0, d5/e5 in match 1.
    assert by_agent[("greedy", 50)]["squares"] == pytest.approx(3.0)
    assert by_agent[("greedy", 50)]["points"] == pytest.approx(150.0)
    assert by_agent[("greedy", 50)]["share"] == pytest.approx(0.75)
    assert by_agent[("random", 50)]["share"] == pytest.approx(0.25)
    bonus = {r["agent"]: r for r in sec["bonus_by_agent"]}
    assert bonus["greedy"]["row_points"] == pytest.approx((800 + 400) / 2)
    assert sum(CLASSIC_VALUES) == 500


def test_deciding_tiers_find_the_tier_winners_take() -> None:
    rng = np.random.default_rng(0)
    stats = []
    for _ in range(300):
        owners = [int(rng.random() < 0.5) for _ in range(64)]
        stats.append(alveoles_stats(owners))
    outcomes = [alveoles_outcome(s) for s in stats]
    w = to_wide(seat_frame(outcomes, ["a", "b"]), 2)
    sec = alveoles_section(pd.DataFrame({"match_index": range(300), "stats": stats}), w)
    tiers = {d["tier"]: d for d in sec["deciding_tiers"]}
    # The 50s are 200 of 500 points: winners hold clearly more of them than losers.
    assert tiers[50]["ci_low"] > 0.1
    assert tiers[50]["difference"] > tiers[1]["difference"]


def test_alquerque_draw_causes() -> None:
    sec = alquerque_section(
        pd.DataFrame(
            {
                "ended_by": ["max_plies", "move_limit", "no_capture", "repetition"],
                "count": [2, 1, 6, 3],
            }
        )
    )
    causes = {c["cause"]: c for c in sec["draw_causes"]}
    assert sec["draws"] == 12
    assert causes["no_capture"]["share"] == pytest.approx(0.5)
    assert causes["max_plies"]["draws"] == 2
    assert causes["max_plies"]["label"] == "batch ply cap (max_plies)"
    # A row stored before the cap had its own ending: Alquerque has no move-limit rule.
    assert causes["move_limit"]["draws"] == 1
    assert causes["move_limit"]["label"] == "batch ply cap (stored as move_limit)"
