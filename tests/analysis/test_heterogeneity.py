"""The spread of several estimates against their sampling noise and Cochran's Q test of their
equality, checked against statsmodels' meta-analysis and SciPy's chi-square."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.meta_analysis import combine_effects

from analysis.heterogeneity import heterogeneity, standard_error


@pytest.mark.parametrize("seed", range(5))
def test_q_and_its_p_value_are_the_meta_analysis_heterogeneity_test(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 45))
    errors = rng.uniform(0.01, 0.03, size=k)
    estimates = rng.normal(0.03, 0.02, size=k)
    got = heterogeneity(list(estimates), list(errors))
    combined = combine_effects(estimates, errors**2)
    assert got.q == pytest.approx(combined.q, rel=1e-9)
    assert got.df == k - 1
    assert got.p_value == pytest.approx(stats.chi2.sf(combined.q, k - 1), rel=1e-9)
    assert got.spread == pytest.approx(np.std(estimates, ddof=1), rel=1e-12)
    assert got.noise == pytest.approx(math.sqrt(np.mean(errors**2)), rel=1e-12)
    # Two estimates at the noise's standard error differ at 95 % beyond z·√2·noise.
    assert got.least_difference == pytest.approx(
        stats.norm.ppf(0.975) * math.sqrt(2) * got.noise, rel=1e-12
    )


def test_equal_errors_make_q_the_spread_over_the_noise() -> None:
    # With one standard error σ for all, Q = (k − 1) s² / σ².
    estimates = [0.01, 0.04, -0.02, 0.03, 0.00]
    got = heterogeneity(estimates, [0.02] * 5)
    assert got.q == pytest.approx(4 * np.var(estimates, ddof=1) / 0.02**2, rel=1e-12)
    assert not got.distinguished
    far = heterogeneity([0.0, 0.0, 0.2], [0.01] * 3)
    assert far.distinguished and far.p_value < 1e-6


def test_a_wald_intervals_half_width_over_z_gives_back_its_standard_error() -> None:
    z = stats.norm.ppf(0.975)
    assert standard_error(0.03 - z * 0.016, 0.03 + z * 0.016) == pytest.approx(0.016)


@pytest.mark.parametrize(
    ("estimates", "errors", "field"),
    [
        ([0.1], [0.01], "estimates"),
        ([0.1, 0.2], [0.01], "errors"),
        ([0.1, math.nan], [0.01, 0.01], "estimates"),
        ([0.1, 0.2], [0.01, 0.0], "errors"),
    ],
)
def test_bad_input_names_its_field(estimates: list[float], errors: list[float], field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}: "):
        heterogeneity(estimates, errors)


def test_an_interval_that_is_not_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^ci_low, ci_high: "):
        standard_error(0.05, 0.01)
