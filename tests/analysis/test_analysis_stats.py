"""Statistics building blocks against SciPy, statsmodels and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.proportion import (
    proportion_confint,
)

from analysis import stats


def test_wilson_matches_statsmodels_for_600_of_1000() -> None:
    lo, hi = stats.wilson_interval(600, 1000)
    ref = proportion_confint(600, 1000, alpha=0.05, method="wilson")
    assert lo == pytest.approx(ref[0], abs=1e-12)
    assert hi == pytest.approx(ref[1], abs=1e-12)
    assert 0.569 < lo < 0.570 and 0.629 < hi < 0.630


@given(st.integers(0, 500), st.integers(1, 500))
@settings(max_examples=60, deadline=None)
def test_wilson_contains_the_estimate_and_matches_statsmodels(k: int, extra: int) -> None:
    n = k + extra
    lo, hi = stats.wilson_interval(k, n)
    ref = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert lo == pytest.approx(ref[0], abs=1e-9) and hi == pytest.approx(ref[1], abs=1e-9)
    assert lo <= k / n <= hi


def test_sign_test_is_the_exact_binomial() -> None:
    assert stats.sign_test(600, 1000) == pytest.approx(sps.binomtest(600, 1000, 0.5).pvalue)
    # 600 of 1000 is 6.3 standard errors from a fair coin: the two-sided p is about 3e-10.
    assert 1e-10 < stats.sign_test(600, 1000) < 1e-9
    assert stats.sign_test(5, 10) == pytest.approx(1.0)
    assert math.isnan(stats.sign_test(0, 0))


def test_chisquare_matches_scipy_with_fractional_counts() -> None:
    obs = [410.5, 300.0, 289.5]
    stat, df, p = stats.chisquare_gof(obs, [1, 1, 1])
    ref = sps.chisquare(obs)
    assert stat == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue) and df == 2


def test_normal_interval_by_hand() -> None:
    lo, hi = stats.normal_interval(0.5, 0.25, 100)
    assert lo == pytest.approx(0.5 - 1.959963984540054 * 0.05)
    assert hi == pytest.approx(0.5 + 1.959963984540054 * 0.05)


def test_elo_closed_forms() -> None:
    assert stats.elo_from_score(0.5) == 0.0
    assert stats.elo_from_score(0.75) == pytest.approx(400 * math.log10(3))
    assert stats.elo_from_score(0.0) == -math.inf and stats.elo_from_score(1.0) == math.inf
    assert stats.score_from_elo(400) == pytest.approx(10 / 11)


@given(st.floats(-1500, 1500))
def test_elo_and_score_are_inverse(elo: float) -> None:
    assert stats.elo_from_score(stats.score_from_elo(elo)) == pytest.approx(elo, abs=1e-6)


@pytest.mark.parametrize(("wins", "losses"), [(60, 40), (10, 10), (3, 9), (1000, 950)])
def test_los_closed_form(wins: int, losses: int) -> None:
    ref = sps.norm.cdf((wins - losses) / math.sqrt(wins + losses))
    assert stats.los(wins, losses) == pytest.approx(ref)


def test_pentanomial_variance_on_a_hand_made_pair_table() -> None:
    # 10 pairs scoring 0, ½, ½, 1, 1, 1, 1½, 1½, 2, 2 points out of 2.
    mean, var = stats.pentanomial([1, 2, 3, 2, 2])
    pair_scores = [0, 0.25, 0.25, 0.5, 0.5, 0.5, 0.75, 0.75, 1, 1]
    assert mean == pytest.approx(0.55)
    assert var == pytest.approx(0.0975 * 10 / 9)  # sample variance, ddof=1
    assert var == pytest.approx(float(np.var(pair_scores, ddof=1)))
    with pytest.raises(ValueError, match="five"):
        stats.pentanomial([1, 2, 3])


def test_trinomial_by_hand() -> None:
    mean, var = stats.trinomial(wins=5, draws=2, losses=3)
    assert mean == pytest.approx(0.6)
    assert var == pytest.approx((5 * 0.16 + 2 * 0.01 + 3 * 0.36) / 9)  # ddof=1
    assert math.isnan(stats.trinomial(wins=1, draws=0, losses=0)[1])  # one game: no variance


def test_elo_interval_maps_the_score_interval() -> None:
    elo, lo, hi = stats.elo_with_interval(0.6, 0.24, 1000)
    s_lo, s_hi = stats.normal_interval(0.6, 0.24, 1000)
    assert elo == pytest.approx(-400 * math.log10(1 / 0.6 - 1))
    assert lo == pytest.approx(stats.elo_from_score(s_lo))
    assert hi == pytest.approx(stats.elo_from_score(s_hi))


@given(st.lists(st.integers(0, 40), min_size=1, max_size=60))
@settings(max_examples=60, deadline=None)
def test_weighted_quantiles_match_numpy(data: list[int]) -> None:
    values, counts = np.unique(data, return_counts=True)
    got = stats.weighted_quantiles(values, counts, [0.1, 0.5, 0.9])
    assert got == pytest.approx(np.quantile(np.array(data, float), [0.1, 0.5, 0.9]).tolist())


def test_elo_interval_of_a_clean_sweep_is_wilson_not_a_point() -> None:
    # 20 of 20 won: the score's Wilson interval is [0.839, 1], so Elo is at least ~+286.
    elo, lo, hi = stats.elo_with_interval(1.0, 0.0, 20)
    low_score, _ = stats.wilson_interval(20, 20)
    assert elo == math.inf and hi == math.inf
    assert lo == pytest.approx(-400 * math.log10(1 / low_score - 1))
    assert 250 < lo < 320
    assert stats.score_interval(1.0, 0.0, 20) == pytest.approx((low_score, 1.0))
    assert stats.score_interval(0.6, 0.24, 100) == pytest.approx(
        stats.normal_interval(0.6, 0.24, 100)
    )


@pytest.mark.parametrize("n", [1, 3, 7, 40, 1000])
def test_a_clean_sweep_bound_is_exactly_zero_or_one(n: int) -> None:
    assert stats.wilson_interval(n, n)[1] == 1.0
    assert stats.wilson_interval(0, n)[0] == 0.0
    # Mapped to Elo, the open end is infinite, never a finite number from float residue.
    assert stats.elo_with_interval(0.0, 0.0, n)[1] == -math.inf
    assert stats.elo_with_interval(1.0, 0.0, n)[2] == math.inf


def _brute_force_multinomial_p(counts: list[int]) -> float:
    """P-value by enumerating every sequence of trials (independent of the enumeration used)."""
    import itertools

    k, total = len(counts), sum(counts)
    probs: dict[tuple[int, ...], float] = {}
    for seq in itertools.product(range(k), repeat=total):
        table = tuple(seq.count(c) for c in range(k))
        probs[table] = probs.get(table, 0.0) + k**-total
    observed = probs[tuple(counts)]
    return sum(p for p in probs.values() if p <= observed * (1 + 1e-9))


@pytest.mark.parametrize("counts", [[1, 0, 0], [3, 1, 0], [2, 2, 2], [5, 0, 1], [1, 1, 2, 3]])
def test_small_samples_use_the_exact_multinomial_test(counts: list[int]) -> None:
    p, test = stats.small_sample_gof(counts, [1.0] * len(counts))
    assert test.startswith("exact multinomial")
    assert p == pytest.approx(_brute_force_multinomial_p(counts), rel=1e-9)


def test_one_game_gets_an_exact_test_not_chi_square() -> None:
    # One match won by seat 0 of three: chi-square would say p = 0.157 from 1/3 expected wins;
    # exactly, a seat wins one game in three, so the p-value is 1/3.
    p, test = stats.small_sample_gof([1.0, 0.0], [1.0, 2.0])
    assert test.startswith("exact binomial")
    assert p == pytest.approx(1 / 3)


def test_shared_wins_in_a_small_sample_get_no_test() -> None:
    p, test = stats.small_sample_gof([1.5, 0.5, 1.0], [1.0, 1.0, 1.0])
    assert math.isnan(p) and test.startswith("none")


def test_large_samples_keep_chi_square() -> None:
    p, test = stats.small_sample_gof([40, 30, 50], [1.0, 1.0, 1.0])
    assert test == "chi-square goodness of fit"
    assert p == pytest.approx(sps.chisquare([40, 30, 50]).pvalue)
