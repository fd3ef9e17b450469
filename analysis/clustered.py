"""Means, shares and differences whose observations come in dependent groups (units).

A batch's matches are not independent draws within a unit of sampling (``analysis.units``: a
round of the seating design, or matches sharing an opening where a batch declares its book a
sample of openings); the seats of one match are not independent either. Every
function here takes the per-unit totals of the figure (``y_g``: the sum of the unit's values,
``n_g``: how many values it holds) and treats the units, not the values, as the independent
draws:

- the mean is the ratio ``Σ y_g / Σ n_g`` (each value weighs the same);
- its variance is the cluster-robust (CR1) one of ``analysis.stats`` (``cluster_variance``:
  the sandwich variance of a regression on a constant with the usual small-sample factor,
  Stata's and statsmodels' ``cov_type="cluster"``). When every unit holds one value it is the
  sample variance (ddof = 1) over ``n``; when every unit is a seat-swapped pair of two games it
  is the pentanomial variance;
- intervals and tests use Student's t on the one small-sample rule of ``analysis.stats``
  (``unit_df``: Kish's effective number of units minus two, G − 2 for units of one size,
  never below one).

Shares and scores in [0, 1] get a Wilson-type interval with an effective sample size,
``n_eff = mean·(1 − mean) / variance``, and the t quantile in place of the normal one (the
interval for proportions from clustered samples of Korn & Graubard, Survey Methodology 24
(1998), in its Wilson form, which Dean & Pagano, J. Survey Statistics and Methodology 3 (2015),
found to cover best): it stays inside [0, 1], and its test of ½ (``p_value``) rejects exactly
when the interval leaves ½ out. When all units scored alike the variance is zero and ``n_eff``
is the number of units (each unit one observation). Fewer than ``MIN_UNITS`` units give no
interval at all: with two, the variance between units rests on a single difference, and the
coverage of a t interval on two unequal units falls well below its level (measured by
``bench.coverage_agents``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from analysis import stats

MIN_UNITS = 3
"""Fewest units of sampling that give an interval."""


def too_few_units(units: int, needed: int = MIN_UNITS) -> str | None:
    """Why ``units`` units give no interval (None when they are enough)."""
    if units >= needed:
        return None
    if units == 0:
        return stats.NO_MATCHES
    if units == 1:
        return stats.ONE_UNIT
    return (
        f"{units} units of sampling: too few to estimate the variance between units "
        f"(at least {needed}), so no interval"
    )


def wilson_effective(share: float, n_eff: float, q: float) -> tuple[float, float]:
    """Wilson interval of ``share`` with effective sample size ``n_eff`` and quantile ``q``.

    An end at 0 or 1 is exact (a share of 0 or 1 gives the bound 0 or 1, never float residue).
    """
    k = q * q / n_eff
    centre = (share + k / 2) / (1 + k)
    half = q * math.sqrt(share * (1 - share) / n_eff + k / (4 * n_eff)) / (1 + k)
    lo = 0.0 if share <= 0 else max(0.0, centre - half)
    hi = 1.0 if share >= 1 else min(1.0, centre + half)
    return (lo, hi)


@dataclass(frozen=True)
class ShareEstimate:
    """A mean score or share in [0, 1] over units, with its interval and its test of ½.

    ``units``: independent units used; ``values``: the values they hold; ``effective_n``: the
    independent games with the same precision (``mean·(1 − mean)/variance``, or ``units`` when
    all units scored alike); ``p_value``: two-sided test of a mean of ½; ``superiority``: the
    one-sided confidence that the mean exceeds ½ (1 − the one-sided p-value); ``note`` says
    why an interval is missing.
    """

    mean: float
    ci_low: float
    ci_high: float
    variance: float
    units: int
    values: int
    effective_n: float
    p_value: float
    superiority: float
    note: str | None


def share_estimate(y: np.ndarray, n: np.ndarray) -> ShareEstimate:
    """The mean of values in [0, 1] from unit totals ``y`` over unit sizes ``n`` (see module)."""
    sums = stats.totals_sums(y, n)
    g, total = sums.units, sums.matches
    nan = math.nan
    if g == 0:
        return ShareEstimate(nan, nan, nan, nan, 0, 0, nan, nan, nan, stats.NO_MATCHES)
    mean = sums.mean
    variance = stats.cluster_variance(sums)
    short = too_few_units(g)
    if short is not None:
        return ShareEstimate(mean, nan, nan, variance, g, total, nan, nan, nan, short)
    alike = not variance > 1e-15 or not 0 < mean < 1
    n_eff = float(g) if alike else mean * (1 - mean) / variance
    df = stats.unit_df(sums)
    lo, hi = wilson_effective(mean, n_eff, stats.t_quantile(df))
    # The test of ½ that this interval inverts: the score statistic with the same n_eff.
    stat = (mean - 0.5) / math.sqrt(0.25 / n_eff)
    p = float(2 * sps.t.sf(abs(stat), df))
    superiority = float(sps.t.cdf(stat, df))
    return ShareEstimate(mean, lo, hi, variance, g, total, n_eff, p, superiority, None)


@dataclass(frozen=True)
class Difference:
    """Difference of two means over the same units, with its cluster-robust interval (none
    below ``MIN_UNITS`` units: ``note`` says why)."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p_value: float
    units: int
    note: str | None = None


def clustered_difference(
    a: np.ndarray, a_unit: np.ndarray, b: np.ndarray, b_unit: np.ndarray
) -> Difference:
    """Mean of ``a`` minus mean of ``b``, values labelled by unit, units shared by both sides.

    The cluster-robust (CR1) standard error of the difference coefficient in the regression of
    the pooled values on a constant and an indicator of side ``a`` (statsmodels ``OLS`` with
    ``cov_type="cluster"``: factor ``G/(G−1)·(N−1)/(N−2)``), t on ``stats.unit_df`` of the
    pooled values' units. Values of one unit on both sides (winners and losers of one match)
    count together, so their dependence enters the variance.
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    nan = math.nan
    labels = np.unique(np.concatenate([a_unit, b_unit]))
    g = int(labels.size)
    if a.size < 1 or b.size < 1:
        return Difference(nan, nan, nan, nan, nan, g)
    mean_a, mean_b = float(a.mean()), float(b.mean())
    estimate = mean_a - mean_b
    short = too_few_units(g)
    if short is not None or a.size + b.size < 3:
        return Difference(estimate, nan, nan, nan, nan, g, short)
    ia = np.searchsorted(labels, a_unit)
    ib = np.searchsorted(labels, b_unit)
    score = np.bincount(ia, weights=(a - mean_a) / a.size, minlength=g) - np.bincount(
        ib, weights=(b - mean_b) / b.size, minlength=g
    )
    total = a.size + b.size
    factor = g / (g - 1) * (total - 1) / (total - 2)
    se = math.sqrt(factor * float((score**2).sum()))
    if se == 0:
        return Difference(estimate, 0.0, nan, nan, nan, g, "no variance between units")
    sizes = np.bincount(np.concatenate([ia, ib]), minlength=g).astype(float)
    df = stats.unit_df(stats.totals_sums(np.zeros(g), sizes))
    q = stats.t_quantile(df)
    p = float(2 * sps.t.sf(abs(estimate) / se, df))
    return Difference(estimate, se, estimate - q * se, estimate + q * se, p, g)
