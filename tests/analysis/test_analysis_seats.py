"""Seat balance and first-player advantage on synthetic results with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from analysis_data import seat_frame, two_player_outcomes
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from analysis.seats import first_player_advantage, seat_balance, seat_test
from analysis.tidy import to_wide


def fixed_wins(wins: int, games: int) -> list:
    return [((1.0, 0.0), (1.0, 0.0))] * wins + [((0.0, 1.0), (0.0, 1.0))] * (games - wins)


def test_600_wins_of_1000_give_clopper_pearson_and_the_test_it_inverts() -> None:
    df = seat_frame(fixed_wins(600, 1000), ["a", "b"])
    before = df.copy(deep=True)
    bal = seat_balance(df, 2)
    pd.testing.assert_frame_equal(df, before)  # inputs are never mutated
    row = bal.iloc[0]
    lo, hi = proportion_confint(600, 1000, method="beta")
    assert row["win_share"] == pytest.approx(0.6)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi))
    assert row["interval"] == "clopper-pearson" and row["units"] == 1000
    # The central test Clopper–Pearson inverts: twice the smaller tail.
    central = 2 * min(sps.binom.sf(599, 1000, 0.5), sps.binom.cdf(600, 1000, 0.5))
    assert row["p_value"] == pytest.approx(central, rel=1e-9)
    assert row["expected"] == 0.5
    assert bal.iloc[1]["win_share"] == pytest.approx(0.4)
    fpa = first_player_advantage(bal)
    assert fpa["estimate"] == pytest.approx(0.1)
    assert fpa["ci_low"] == pytest.approx(lo - 0.5) and fpa["ci_high"] == pytest.approx(hi - 0.5)


def test_draws_use_the_t_adjusted_exact_interval_and_the_test_it_inverts() -> None:
    outcomes = fixed_wins(300, 500) + [((0.5, 0.5), (0.5, 0.5))] * 100
    bal = seat_balance(seat_frame(outcomes, ["a", "b"]), 2)
    row = bal.iloc[0]
    x = np.array([1.0] * 300 + [0.0] * 200 + [0.5] * 100)
    m, p = x.size, x.mean()
    # The Bernoulli sample with the same variance of the mean, shrunk by (z / t_599)².
    n_star = p * (1 - p) / (m - 1) * m / (x.var(ddof=1) / m)
    n_star *= (sps.norm.ppf(0.975) / sps.t.ppf(0.975, m - 2)) ** 2
    lo = sps.beta.ppf(0.025, p * n_star, n_star - p * n_star + 1)
    hi = sps.beta.ppf(0.975, p * n_star + 1, n_star - p * n_star)
    assert row["interval"] == "clopper-pearson, t-adjusted"
    assert row["win_share"] == pytest.approx(p)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi))
    # The p-value is the central exact test at the same effective size (tails of the binomial
    # with a fractional count, through the beta distribution), not a sign test on the decisive
    # games, so it agrees with the interval.
    k = p * n_star
    tails = sps.beta.cdf(0.5, k, n_star - k + 1), sps.beta.sf(0.5, k + 1, n_star - k)
    assert row["p_value"] == pytest.approx(2 * min(tails), rel=1e-9)
    assert (row["p_value"] < 0.05) == (not lo <= 0.5 <= hi)


def test_fair_coin_shows_no_advantage_in_most_seeds() -> None:
    found = 0
    for seed in range(40):
        bal = seat_balance(seat_frame(two_player_outcomes(400, 0.5, seed=seed), ["a", "b"]), 2)
        fpa = first_player_advantage(bal)
        found += not (fpa["ci_low"] <= 0 <= fpa["ci_high"])
    assert found <= 6  # 5 % expected: 2 of 40; 6 would be very unusual


def test_three_players_use_exact_tests_per_seat_and_chi_square_overall() -> None:
    rng = np.random.default_rng(5)
    winners = rng.choice(3, size=900, p=[0.4, 0.3, 0.3])
    outcomes = [
        (tuple(float(s == w) for s in range(3)), tuple(float(s == w) for s in range(3)))
        for w in winners
    ]
    df = seat_frame(outcomes, ["a", "b", "c"])
    bal = seat_balance(df, 3)
    counts = np.bincount(winners, minlength=3)
    for s in range(3):
        k = counts[s]
        ref = min(1.0, 2 * min(sps.binom.cdf(k, 900, 1 / 3), sps.binom.sf(k - 1, 900, 1 / 3)))
        assert bal.iloc[s]["p_value"] == pytest.approx(ref)
        assert bal.iloc[s]["expected"] == pytest.approx(1 / 3)
    holm = multipletests(bal["p_value"].to_numpy(), method="holm")[1]
    assert bal["p_holm"].to_numpy() == pytest.approx(holm)
    overall = seat_test(to_wide(df, 3))
    assert overall["p_value"] == pytest.approx(sps.chisquare(counts).pvalue)
    assert overall["df"] == 2
    # The simultaneous intervals: Clopper–Pearson at 1 − 0.05/3 each (Bonferroni), wider than
    # each seat's own 95 % one.
    for s in range(3):
        lo, hi = proportion_confint(counts[s], 900, alpha=0.05 / 3, method="beta")
        row = bal.iloc[s]
        assert (row["joint_ci_low"], row["joint_ci_high"]) == pytest.approx((lo, hi))
        assert row["joint_ci_low"] < row["ci_low"] and row["joint_ci_high"] > row["ci_high"]


def test_two_seats_joint_intervals_are_their_own() -> None:
    bal = seat_balance(seat_frame(fixed_wins(60, 100), ["a", "b"]), 2)
    assert (bal["joint_ci_low"] == bal["ci_low"]).all()
    assert (bal["joint_ci_high"] == bal["ci_high"]).all()


def test_a_p_value_and_its_interval_agree_on_significance() -> None:
    # Draws and whole wins, many small batches near the edge: the sign test on decisive games
    # disagreed with the interval in a few percent of them.
    rng = np.random.default_rng(28)
    for _ in range(200):
        outcomes = [((1.0, 0.0), (1.0, 0.0)) if u < 0.45 else ((0.5, 0.5), (0.5, 0.5)) if u < 0.7
                    else ((0.0, 1.0), (0.0, 1.0)) for u in rng.random(60)]  # fmt: skip
        row = seat_balance(seat_frame(outcomes, ["a", "b"]), 2).iloc[0]
        assert (row["p_value"] < 0.05) == (not row["ci_low"] <= 0.5 <= row["ci_high"])


def test_incomplete_matches_are_dropped_and_order_does_not_matter() -> None:
    df = seat_frame(fixed_wins(6, 10), ["a", "b"])
    shuffled = df.sample(frac=1.0, random_state=1)
    broken = shuffled[~((shuffled["match_index"] == 3) & (shuffled["seat"] == 1))]
    w = to_wide(broken, 2)
    assert w.matches == 9 and 3 not in w.match_index.tolist()
    assert w.match_index.tolist() == sorted(w.match_index.tolist())
