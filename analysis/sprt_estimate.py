"""The Elo of an SPRT after it stopped: bias-adjusted, with an interval from the stopping
distribution.

The mean score of the matches a sequential test played is biased: a test stops when its
log-likelihood ratio has wandered to a bound, so tests that accept H1 stop on a lucky run and
those that accept H0 on an unlucky one (an SPRT with elo0 = 0 on equal agents reports about
−9 to −12 Elo on average, depending on its bounds and chunks). The method is the classical one
for sequential trials (Whitehead, "The Design and Analysis of Sequential Clinical Trials", 2nd
ed., 1997, ch. 5), as fishtest applies it to engine tests:

- The LLR is approximated by a Brownian motion in the counted units t (pairs or games) with
  drift ``μ(elo)`` and variance ``σ²(elo)`` per unit: ``μ`` and ``σ²`` are the mean and
  variance of one unit's LLR increment ``log(p₁ᵢ/p₀ᵢ)`` when the outcomes follow the
  distribution closest to the observed frequencies whose mean score is that of ``elo`` (the
  same constrained fit the generalised LLR uses), absorbed at the bounds ``a < 0 < b``.
- **Estimate** (``elo``): bias-adjusted (Whitehead, "On the bias of maximum likelihood
  estimation following a sequential test", Biometrika 73 (1986)): the Elo at which the
  expected LLR per unit at the stop, ``b·E[1/τ; upper] + a·E[1/τ; lower]``, equals the observed
  ``LLR/T`` (the fixed-sample estimate is a monotone function of that ratio). ``E[1/τ; ·]``
  is the integral over λ of the Laplace transform of the exit time,
  ``E[e^{−λτ}; upper] = e^{θb}·sinh(κ|a|)/sinh(κ(b − a))``, κ = √(θ² + 2λ/σ²), θ = μ/σ²
  (Cox & Miller, "The Theory of Stochastic Processes", 1965, §5.7).
- **Interval** (``elo_low``, ``elo_high``) and the median-unbiased estimate (``elo_median``):
  outcomes are ordered stage-wise (Siegmund, "Estimation following sequential tests",
  Biometrika 65 (1978)): accepting H1 earlier is better than later, which is better than still
  running, which is better than accepting H0 later, then earlier. For the observed outcome
  (stopped at ``T`` units with LLR ``y``), ``P_elo(an outcome no better)`` is
  ``P(absorbed at a by T) + P(alive at T with LLR ≤ y)``, in closed form from the method of
  images for a Brownian motion killed at two bounds, with Girsanov's factor for the drift.
  The Elo values at which it is 0.975, ½ and 0.025 are the lower end, the median-unbiased
  estimate and the upper end.
- Overshoot: the test is checked after each chunk, not after each unit, so it stops beyond its
  bound. The crossed bound is moved to where the LLR stopped and the other bound outwards by
  the same distance (the continuous process then stops exactly where the batch did).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import log_ndtr

from analysis import stats
from analysis.sprt import EMPTY_CELL, constrained_mle

METHOD = (
    "bias-adjusted estimate (Whitehead 1986) and 95 % interval with the median-unbiased "
    "estimate from the stopping distribution (Brownian approximation of the LLR, stage-wise "
    "ordering; Siegmund 1978)"
)
SCORE_EDGE = 1e-6
"""Scores searched lie in [SCORE_EDGE, 1 − SCORE_EDGE] (Elo within about ±2,400)."""
MAX_IMAGES = 5_000
"""Images on each side; beyond, a path has long left the strip (its terms are below 1e-300)."""


@dataclass(frozen=True)
class Brownian:
    """A Brownian motion from 0 with ``drift`` and ``variance`` per unit, absorbed at
    ``lower < 0 < upper``."""

    drift: float
    variance: float
    lower: float
    upper: float

    def _images(self, rate: float, time: float, lo: float, hi: float) -> float:
        """``∫_lo^hi p(x) e^{(rate − θ) x} dx`` for the killed density ``p`` at ``time``,
        θ = drift/variance and ``rate`` = ±θ (the two integrals the ordering needs)."""
        s = math.sqrt(self.variance * time)
        width = self.upper - self.lower
        shift = rate * s * s
        reach = min(math.ceil((abs(shift) + 10 * s) / (2 * width)) + 2, MAX_IMAGES)
        k = np.arange(-reach, reach + 1)
        centres = np.concatenate([2 * k * width, 2 * self.upper - 2 * k * width])
        signs = np.concatenate([np.ones(k.size), -np.ones(k.size)])
        u_hi = (hi - centres - shift) / s
        u_lo = (lo - centres - shift) / s
        logs = rate * centres + _log_normal_mass(u_hi, u_lo)
        top = float(logs.max())
        if not math.isfinite(top):
            return 0.0
        return float(np.dot(signs, np.exp(logs - top))) * math.exp(top)

    def _hit_lower_from(self, theta: float) -> tuple[float, float, float]:
        """``h(x) = P(reach lower before upper | start x) = (e^{−2θx}·c₁ − c₂)/c₀``: the
        constants (c₀, c₁, c₂) scaled so that no exponent is positive."""
        a, b = self.lower, self.upper
        if theta == 0:
            return (b - a, math.nan, math.nan)
        if theta > 0:
            return (-math.expm1(-2 * theta * (b - a)), math.exp(2 * theta * a), math.exp(
                -2 * theta * (b - a)))  # fmt: skip
        return (math.expm1(-2 * theta * (a - b)), math.exp(2 * theta * b), 1.0)

    def worse_or_equal(self, time: float, position: float) -> float:
        """P(absorbed at the lower bound by ``time``, or alive then at or below ``position``)."""
        a, b = self.lower, self.upper
        y = min(max(position, a), b)
        theta = self.drift / self.variance
        if abs(theta) < 1e-9:
            theta = 0.0
        alive_below = self._images(theta, time, a, y)
        alive = self._images(theta, time, a, b)
        c0, c1, c2 = self._hit_lower_from(theta)
        if theta == 0:
            # h(x) = (b − x)/(b − a): the mean position of the living paths is needed.
            mean_alive = self._first_moment(time)
            lower_by_t = b / c0 - (b * alive - mean_alive) / c0
        else:
            tilted = self._images(-theta, time, a, b)  # ∫ p(x) e^{−2θx} dx
            lower_by_t = (c1 - c2) / c0 - (c1 * tilted - c2 * alive) / c0
        return float(min(1.0, max(0.0, lower_by_t + alive_below)))

    def mean_inverse_time(self) -> tuple[float, float]:
        """(E[1/τ; exit at upper], E[1/τ; exit at lower]) for the exit time τ from 0."""
        a, b = self.lower, self.upper
        width = b - a
        theta = self.drift / self.variance

        start = abs(theta)

        def side(near: float, far: float, tilt: float) -> float:
            # ∫_{|θ|}^∞ κ·e^{θ·tilt}·sinh(κ·near)/sinh(κ·width) dκ, with κ = |θ| + v and the
            # factor e^{θ·tilt − |θ|·far} (at most 1) taken out, so the integrand is of order 1.
            def integrand(v: float) -> float:
                kappa = start + v
                if kappa == 0:
                    return 0.0
                ratio = math.expm1(-2 * kappa * near) / math.expm1(-2 * kappa * width)
                return kappa * math.exp(-v * far) * ratio

            return math.exp(theta * tilt - start * far) * quad(integrand, 0, math.inf)[0]

        upper = side(-a, b, b)
        lower = side(b, -a, a)
        return (self.variance * upper, self.variance * lower)

    def _first_moment(self, time: float) -> float:
        """``∫ x p(x) dx`` for the driftless killed density (used only when the drift is 0)."""
        step = 1e-4 * (self.upper - self.lower)
        # d/dr of ∫ p(x) e^{r x} dx at r = 0, by a central difference.
        return (self._images(step, time, self.lower, self.upper)
                - self._images(-step, time, self.lower, self.upper)) / (2 * step)  # fmt: skip


def _log_normal_mass(u_hi: np.ndarray, u_lo: np.ndarray) -> np.ndarray:
    """log(Φ(u_hi) − Φ(u_lo)) for u_hi ≥ u_lo, accurate in both tails."""
    upper_tail = u_lo > 0
    a = np.where(upper_tail, -u_lo, u_hi)
    b = np.where(upper_tail, -u_hi, u_lo)
    la, lb = log_ndtr(a), log_ndtr(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = la + np.log1p(-np.exp(lb - la))
    return np.where(u_hi > u_lo, out, -np.inf)


@dataclass(frozen=True)
class StoppedTest:
    """What the estimate needs of a decided SPRT."""

    counts: Sequence[float]
    values: np.ndarray
    score0: float
    score1: float
    lower: float
    upper: float
    llr: float

    @cached_property
    def _cells(self) -> np.ndarray:
        c = np.asarray(self.counts, dtype=float)
        return np.where(c > 0, c, EMPTY_CELL)

    @cached_property
    def _step(self) -> np.ndarray:
        """One unit's LLR increment for each outcome, ``log(p₁ᵢ/p₀ᵢ)``."""
        p1 = constrained_mle(self._cells, self.values, self.score1)
        return np.asarray(np.log(p1) - np.log(constrained_mle(self._cells, self.values,
                                                               self.score0)))  # fmt: skip

    def increments(self, score: float) -> tuple[float, float]:
        """Mean and variance of one unit's LLR increment when the true mean score is
        ``score`` (outcomes: the distribution closest to the observed one with that mean)."""
        p = constrained_mle(self._cells, self.values, score)
        mean = float(p @ self._step)
        return mean, max(float(p @ self._step**2) - mean * mean, 1e-12)

    def process(self, score: float) -> Brownian:
        """The Brownian approximation of the LLR if the true mean score is ``score``, with the
        bounds moved by the observed overshoot."""
        lower, upper = self.lower, self.upper
        if self.llr >= upper:
            lower, upper = lower - (self.llr - upper), self.llr
        elif self.llr <= lower:
            lower, upper = self.llr, upper + (lower - self.llr)
        drift, variance = self.increments(score)
        return Brownian(drift, variance, lower, upper)

    def worse_or_equal(self, score: float) -> float:
        """P(an outcome no better than the observed one) if the true mean score is ``score``."""
        return self.process(score).worse_or_equal(float(sum(self.counts)), self.llr)

    def rate_gap(self, score: float) -> float:
        """Expected LLR per unit at the stop if the true score is ``score``, minus the observed."""
        process = self.process(score)
        upper, lower = process.mean_inverse_time()
        return process.upper * upper + process.lower * lower - self.llr / float(sum(self.counts))


def _root(gap: Callable[[float], float]) -> float:
    """The score in [SCORE_EDGE, 1 − SCORE_EDGE] where a decreasing ``gap`` crosses 0 (0 or 1
    when it stays on one side)."""
    lo, hi = SCORE_EDGE, 1 - SCORE_EDGE
    if gap(lo) <= 0:
        return 0.0
    if gap(hi) >= 0:
        return 1.0
    return float(brentq(gap, lo, hi, xtol=1e-9, maxiter=200))


@dataclass(frozen=True)
class StoppedEstimate:
    """Elo after a decided SPRT: bias-adjusted, median-unbiased, and the 95 % interval."""

    elo: float
    elo_median: float
    elo_low: float
    elo_high: float


def stopping_aware_elo(
    counts: Sequence[float], values: np.ndarray, elo0: float, elo1: float,
    bounds: tuple[float, float], llr: float,
) -> StoppedEstimate:  # fmt: skip
    """The Elo of a decided SPRT (see the module docstring); an end that reaches a score of 0
    or 1 is infinite."""
    test = StoppedTest(counts, np.asarray(values, dtype=float), stats.score_from_elo(elo0),
                       stats.score_from_elo(elo1), bounds[0], bounds[1], llr)  # fmt: skip

    def at_level(level: float) -> float:
        return stats.elo_from_score(_root(lambda s: test.worse_or_equal(s) - level))

    # The expected rate rises with the score; the gap is negated to decrease like the others.
    adjusted = stats.elo_from_score(_root(lambda s: -test.rate_gap(s)))
    return StoppedEstimate(adjusted, at_level(0.5), at_level(0.975), at_level(0.025))
