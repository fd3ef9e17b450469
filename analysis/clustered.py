"""Means, shares and differences whose observations come in dependent groups (units).

A batch's matches are not independent draws when they share an opening or a round of the
seating design (``analysis.units``); the seats of one match are not independent either. Every
function here takes the per-unit totals of the figure (``y_g``: the sum of the unit's values,
``n_g``: how many values it holds) and treats the units, not the values, as the independent
draws:

- the mean is the ratio ``Σ y_g / Σ n_g`` (each value weighs the same);
- its variance is the cluster-robust (CR1) one, ``G/(G−1) · Σ (y_g − mean·n_g)² / (Σ n_g)²``
  over ``G`` units — the sandwich variance of a regression on a constant with the usual
  small-sample factor (Stata's and statsmodels' ``cov_type="cluster"``). When every unit holds
  one value it is the sample variance (ddof = 1) over ``n``; when every unit is a seat-swapped
  pair of two games it is the pentanomial variance;
- intervals and tests use Student's t with ``G − 1`` degrees of freedom (Cameron & Miller,
  "A Practitioner's Guide to Cluster-Robust Inference", J. Human Resources 50 (2015), §VI).

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

CONFIDENCE = 0.95
MIN_UNITS = 3
"""Fewest units of sampling that give an interval."""
NO_VARIANCE_BETWEEN_UNITS = "one unit of sampling: no variance between units, so no interval"
NO_UNITS = "no games"


def too_few_units(units: int, needed: int = MIN_UNITS) -> str | None:
    """Why ``units`` units give no interval (None when they are enough)."""
    if units >= needed:
        return None
    if units == 1:
        return NO_VARIANCE_BETWEEN_UNITS
    return (
        f"{units} units of sampling: too few to estimate the variance between units "
        f"(at least {needed}), so no interval"
    )


def t_quantile(units: int, confidence: float = CONFIDENCE) -> float:
    """Two-sided t quantile with ``units − 1`` degrees of freedom (nan below two units)."""
    if units < 2:
        return math.nan
    return float(sps.t.ppf(0.5 + confidence / 2, units - 1))


def unit_sums(values: np.ndarray, unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-unit totals ``(y_g, n_g)`` of ``values`` labelled by ``unit`` (units without a value
    are left out), in order of unit label."""
    labels, inverse = np.unique(np.asarray(unit), return_inverse=True)
    y = np.bincount(inverse, weights=np.asarray(values, dtype=float), minlength=labels.size)
    n = np.bincount(inverse, minlength=labels.size).astype(float)
    return y, n


def ratio_variance(y: np.ndarray, n: np.ndarray) -> float:
    """CR1 variance of the ratio mean ``Σy / Σn`` over units (nan below two units)."""
    g = int(y.size)
    total = float(n.sum())
    if g < 2 or total <= 0:
        return math.nan
    mean = float(y.sum()) / total
    return g / (g - 1) * float(((y - mean * n) ** 2).sum()) / total**2


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
    keep = n > 0
    y, n = np.asarray(y, float)[keep], np.asarray(n, float)[keep]
    g, total = int(y.size), float(n.sum())
    nan = math.nan
    if g == 0:
        return ShareEstimate(nan, nan, nan, nan, 0, 0, nan, nan, nan, NO_UNITS)
    mean = float(y.sum()) / total
    variance = ratio_variance(y, n)
    short = too_few_units(g)
    if short is not None:
        return ShareEstimate(mean, nan, nan, variance, g, int(total), nan, nan, nan, short)
    alike = not variance > 1e-15 or not 0 < mean < 1
    n_eff = float(g) if alike else mean * (1 - mean) / variance
    q = t_quantile(g)
    lo, hi = wilson_effective(mean, n_eff, q)
    # The test of ½ that this interval inverts: the score statistic with the same n_eff.
    stat = (mean - 0.5) / math.sqrt(0.25 / n_eff)
    p = float(2 * sps.t.sf(abs(stat), g - 1))
    superiority = float(sps.t.cdf(stat, g - 1))
    return ShareEstimate(mean, lo, hi, variance, g, int(total), n_eff, p, superiority, None)


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
    ``cov_type="cluster"``: factor ``G/(G−1)·(N−1)/(N−2)``), t with ``G − 1`` degrees of freedom.
    Values of one unit on both sides (winners and losers of one match) count together, so
    their dependence enters the variance.
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
    q = t_quantile(g)
    if se == 0:
        return Difference(estimate, 0.0, nan, nan, nan, g, "no variance between units")
    p = float(2 * sps.t.sf(abs(estimate) / se, g - 1))
    return Difference(estimate, se, estimate - q * se, estimate + q * se, p, g)
