"""Clustered means, exact shares, Holm and share differences against statsmodels and SciPy."""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from analysis import stats


def _cluster_ols(values: np.ndarray, unit: np.ndarray) -> tuple[float, float, float, float]:
    """Intercept-only OLS with cluster-robust (CR1) errors, and t on G − 2 df (the project's
    rule for units of one size; statsmodels' own interval uses G − 1): mean, se, ci."""
    fit = sm.OLS(values, np.ones((values.size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": unit}, use_t=True
    )
    mean, se = float(fit.params[0]), float(fit.bse[0])
    half = float(sps.t.ppf(0.975, np.unique(unit).size - 2)) * se
    return mean, se, mean - half, mean + half


def test_cluster_variance_is_statsmodels_cr1() -> None:
    rng = np.random.default_rng(3)
    unit = rng.integers(0, 9, 120)
    values = rng.normal(size=120) + unit * 0.3
    s = stats.unit_sums(values, unit)
    mean, se, _, _ = _cluster_ols(values, unit)
    assert s.mean == pytest.approx(mean)
    assert math.sqrt(stats.cluster_variance(s)) == pytest.approx(se, rel=1e-10)


def test_one_match_per_unit_gives_the_sample_variance() -> None:
    values = np.array([0.0, 1.0, 0.5, 1.0, 1.0, 0.0, 0.5])
    s = stats.unit_sums(values)
    assert stats.cluster_variance(s) == pytest.approx(values.var(ddof=1) / values.size)


def test_clustered_mean_is_the_cluster_robust_t_interval() -> None:
    rng = np.random.default_rng(5)
    unit = np.repeat(np.arange(12), 10)
    values = rng.normal(size=120) + rng.normal(size=12)[unit]
    u = stats.clustered_mean(values, unit)
    mean, _, lo, hi = _cluster_ols(values, unit)
    assert u.estimate == pytest.approx(mean)
    assert (u.ci_low, u.ci_high) == (pytest.approx(lo), pytest.approx(hi))
    assert u.df == 10 and u.units == 12 and u.design_effect > 1


def test_clustered_mean_of_one_unit_or_no_spread_has_no_interval() -> None:
    one = stats.clustered_mean(np.array([3.0, 5.0, 4.0]), np.zeros(3))
    assert one.estimate == 4.0 and math.isnan(one.ci_low) and math.isnan(one.ci_high)
    flat = stats.clustered_mean(np.full(6, 2.0))
    assert math.isnan(flat.ci_low) and flat.interval.startswith("none")


@given(st.integers(0, 60), st.integers(1, 60))
@settings(max_examples=60, deadline=None)
def test_exact_interval_is_clopper_pearson(k: int, extra: int) -> None:
    n = k + extra
    ref = proportion_confint(k, n, alpha=0.05, method="beta")
    lo, hi = stats.exact_interval(k, n)
    assert lo == pytest.approx(ref[0], abs=1e-9) and hi == pytest.approx(ref[1], abs=1e-9)


@pytest.mark.parametrize(
    ("k", "n", "p0"), [(3, 10, 0.5), (9, 10, 1 / 3), (0, 12, 0.25), (40, 40, 0.5)]
)
def test_exact_test_is_the_central_binomial_test(k: int, n: int, p0: float) -> None:
    ref = min(1.0, 2 * min(sps.binom.cdf(k, n, p0), sps.binom.sf(k - 1, n, p0)))
    assert stats.exact_test(k, n, p0) == pytest.approx(ref, rel=1e-9)


def test_independent_whole_wins_get_clopper_pearson() -> None:
    values = np.array([1.0] * 7 + [0.0] * 13)
    u = stats.clustered_share(values)
    ref = proportion_confint(7, 20, alpha=0.05, method="beta")
    assert u.interval == "clopper-pearson" and u.design_effect == 1.0 and u.effective_n == 20
    assert (u.ci_low, u.ci_high) == (pytest.approx(ref[0]), pytest.approx(ref[1]))


def test_forty_matches_of_one_opening_bound_nothing() -> None:
    # Seed 601's shape: 40 wins in 40 matches that all replay one opening.
    u = stats.clustered_share(np.ones(40), np.zeros(40, np.int64))
    assert (u.ci_low, u.ci_high) == (0.0, 1.0)
    assert u.units == 1 and u.effective_n == 1.0 and u.interval.startswith("none: one unit")
    assert math.isnan(stats.share_test(u, 0.5))


def test_a_clean_sweep_over_few_units_counts_each_unit_once() -> None:
    # 6 units of 5 matches, every match won: the data are worth 6 observations, and t on 5 df
    # shrinks that to 6 · (z / t_5)² before the exact interval.
    unit = np.repeat(np.arange(6), 5)
    u = stats.clustered_share(np.ones(30), unit)
    n_star = 6 * (sps.norm.ppf(0.975) / sps.t.ppf(0.975, 4)) ** 2
    assert u.binomial_n == pytest.approx(n_star)
    assert u.ci_low == pytest.approx(0.025 ** (1 / n_star)) and u.ci_high == 1.0
    assert u.effective_n == pytest.approx(6.0) and u.design_effect == pytest.approx(5.0)


def test_design_adjusted_share_uses_the_cluster_variance() -> None:
    unit = np.repeat(np.arange(10), 8)
    wins = np.array([1, 1, 0, 1, 0, 0, 1, 1, 1, 0])  # each unit all won or all lost
    values = wins[unit].astype(float)
    u = stats.clustered_share(values, unit)
    _, se, _, _ = _cluster_ols(values, unit)
    p = 0.6
    n_eff = 80 * p * (1 - p) / 79 / se**2
    n_star = n_eff * (sps.norm.ppf(0.975) / sps.t.ppf(0.975, 8)) ** 2
    assert u.variance == pytest.approx(se**2) and u.binomial_n == pytest.approx(n_star)
    lo = sps.beta.ppf(0.025, p * n_star, n_star - p * n_star + 1)
    hi = sps.beta.ppf(0.975, p * n_star + 1, n_star - p * n_star)
    assert (u.ci_low, u.ci_high) == (pytest.approx(lo), pytest.approx(hi))
    assert u.effective_n == pytest.approx(80 / (se**2 / (values.var(ddof=1) / 80)))


def test_share_test_agrees_with_its_interval() -> None:
    unit = np.repeat(np.arange(15), 4)
    rng = np.random.default_rng(11)
    values = rng.choice([0.0, 0.5, 1.0], size=60)
    u = stats.clustered_share(values, unit)
    assert stats.share_test(u, u.ci_low - 1e-6) < 0.05 < stats.share_test(u, u.ci_low + 1e-6)
    assert stats.share_test(u, u.ci_high + 1e-6) < 0.05 < stats.share_test(u, u.ci_high - 1e-6)


@given(st.lists(st.one_of(st.floats(0, 1), st.just(math.nan)), min_size=1, max_size=8))
@settings(max_examples=80, deadline=None)
def test_holm_matches_statsmodels(pvalues: list[float]) -> None:
    got = stats.holm(pvalues)
    finite = [p for p in pvalues if not math.isnan(p)]
    if finite:
        # statsmodels' Holm ends with a full garbage collection: 0.2 s each in a test process's
        # heap, 80 times over.
        with mock.patch("gc.collect", return_value=0):
            ref = iter(multipletests(finite, method="holm")[1])
        expected = [math.nan if math.isnan(p) else next(ref) for p in pvalues]
    else:
        expected = [math.nan] * len(pvalues)
    assert got == pytest.approx(expected, nan_ok=True, abs=1e-12)


def test_six_against_six_constant_batches() -> None:
    # Seeds 701/702's shape: seat 0 wins all 6 in one batch and none in the other.
    d = stats.share_difference(stats.unit_sums(np.ones(6)), stats.unit_sums(np.zeros(6)))
    assert d.difference == 1.0
    assert d.p_value == pytest.approx(sps.fisher_exact([[6, 0], [0, 6]]).pvalue)
    assert d.p_value == pytest.approx(2 / math.comb(12, 6))  # 0.0022
    # Newcombe: 1 − √((1 − l_a)² + u_b²) with each side's Clopper–Pearson bound.
    lo_a = proportion_confint(6, 6, method="beta")[0]
    hi_b = proportion_confint(0, 6, method="beta")[1]
    assert d.ci_low == pytest.approx(1 - math.hypot(1 - lo_a, hi_b)) and d.ci_high == 1.0
    assert 0 < d.ci_low < 1


def test_a_difference_with_a_one_unit_side_spans_that_side_and_has_no_test() -> None:
    a = stats.unit_sums(np.ones(40), np.zeros(40))
    b = stats.unit_sums(np.r_[np.ones(10), np.zeros(10)])
    d = stats.share_difference(a, b)
    assert d.ci_high - d.ci_low > 1.0 and math.isnan(d.p_value)


def test_few_dominant_units_take_t_on_kish_effective_units_less_two() -> None:
    # Units of 8, 4, 2, 2, 1 and 1 matches: Kish's effective number is 18² / 90 = 3.6, so the
    # rule's degrees of freedom are 1.6 (not G − 1 = 5, nor 3.6 − 1).
    unit = np.repeat(np.arange(6), [8, 4, 2, 2, 1, 1])
    values = np.array([3.0, 5, 4, 6, 2, 5, 4, 3, 9, 7, 8, 6, 1, 2, 5, 4, 10, 0])
    u = stats.clustered_mean(values, unit)
    mean, se, _, _ = _cluster_ols(values, unit)
    half = float(sps.t.ppf(0.975, 18**2 / 90 - 2)) * se
    assert u.df == pytest.approx(1.6)
    assert (u.ci_low, u.ci_high) == pytest.approx((mean - half, mean + half), rel=1e-10)


def test_the_degrees_of_freedom_never_fall_below_one() -> None:
    # Three units of 10, 1 and 1: Kish's number 144 / 102 ≈ 1.41, less two is negative.
    s = stats.unit_sums(np.arange(12.0), np.repeat(np.arange(3), [10, 1, 1]))
    assert stats.unit_df(s) == 1.0
    assert stats.t_quantile(stats.unit_df(s)) == pytest.approx(float(sps.t.ppf(0.975, 1)))


def test_seat_shares_over_twelve_unequal_openings_cover_all_at_once() -> None:
    """Three seats, 300 matches over twelve openings of frequency 0.6^k, each with one fixed
    winner (about four effective units): the seats' simultaneous intervals (each at
    1 − 0.05/3) hold all three truths together. Effective units − 1 covered about 87 % here."""
    replicates, players = 400, 3
    truth = np.array([0.4, 0.33, 0.27])
    frequency = 0.6 ** np.arange(12)
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(replicates):
        winner = rng.choice(players, size=12, p=truth)
        opening = rng.choice(12, size=300, p=frequency / frequency.sum())
        win = winner[opening][:, None] == np.arange(players)[None, :]
        ends = [
            stats.share_from_sums(stats.unit_sums(win[:, s], opening), 1 - 0.05 / players)
            for s in range(players)
        ]
        hits += all(u.ci_low <= t <= u.ci_high for u, t in zip(ends, truth, strict=True))
    bound = 0.93 - 3 * math.sqrt(0.93 * 0.07 / replicates)
    assert hits / replicates >= bound, hits / replicates
