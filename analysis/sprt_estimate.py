"""The Elo of an SPRT after it stopped: bias-adjusted, median-unbiased, with a 95 % interval
from the stopping distribution.

The mean score of the matches a sequential test played is biased: a test stops when its
log-likelihood ratio has wandered to a bound, so tests that accept H1 stop on a lucky run and
those that accept H0 on an unlucky one (an SPRT with elo0 = 0 on equal agents reports about
−9 to −12 Elo on average, depending on its bounds and chunks). The methods are the classical
ones for sequential trials (Whitehead, "The Design and Analysis of Sequential Clinical Trials",
2nd ed., 1997, ch. 5; Jennison and Turnbull, "Group Sequential Methods", 2000, ch. 8):

- **Interval** (``elo_low``, ``elo_high``) and the **median-unbiased estimate**
  (``elo_median``), the one the verdict quotes: the outcomes of the test are ordered
  stage-wise (Siegmund, "Estimation following sequential tests", Biometrika 65 (1978);
  Tsiatis, Rosner and Mehta, Biometrics 40 (1984)): accepting H1 earlier is better than later,
  which is better than accepting H0 later, then earlier; two tests that stop at the same look
  on the same side are ordered by their mean score. The test is modelled through the sum of its
  unit scores ``S_t``, a Gaussian random walk with drift ``s`` (the true mean score) and the
  observed variance of a unit's score per unit, looked at up to ``MAX_LOOKS`` times evenly
  until the stop; at each look its LLR is ``t·G(S_t/t)``, with ``G(m)`` the generalised LLR
  per unit of the observed outcome frequencies moved to mean ``m`` (the same constrained fit
  the test uses), made non-decreasing. The bound crossed is moved to where the LLR stopped and
  the other outwards by the same distance (the test is checked after each chunk, so it
  overshoots its bound). With the LLR non-decreasing in ``S_t`` and the variance fixed, a
  path with a larger drift dominates the same path with a smaller one, so its outcome is
  never worse: ``P_s(an outcome no better than the observed one)`` falls as ``s`` rises, and
  the set of scores where it lies between 0.025 and 0.975 is one interval, a true 95 %
  confidence set under the model. Each simulated path of a fixed, seeded set of
  ``PATHS`` (common to every score) turns from worse to better at one drift, found in closed
  form; the ends and the median are the 2.5 %, 97.5 % and 50 % points of those drifts. The
  earlier construction put the LLR itself in a Brownian motion whose variance changed with
  the Elo; its tail probability was not monotone, and the interval could exclude its own
  estimate (−178.7 to +558.2 around +484.9).
- **Bias-adjusted estimate** (``elo``, Whitehead, "On the bias of maximum likelihood
  estimation following a sequential test", Biometrika 73 (1986)): the LLR as a Brownian
  motion in the counted units with drift ``μ(elo)`` and variance ``σ²(elo)`` per unit (the mean
  and variance of one unit's LLR increment ``log(p₁ᵢ/p₀ᵢ)`` under the distribution closest to
  the observed frequencies whose mean score is that of ``elo``), absorbed at the bounds
  ``a < 0 < b`` moved as above; the Elo at which the expected LLR per unit at the stop,
  ``b·E[1/τ; upper] + a·E[1/τ; lower]``, equals the observed ``LLR/T``. ``E[1/τ; ·]`` is the
  integral over λ of the Laplace transform of the exit time,
  ``E[e^{−λτ}; upper] = e^{θb}·sinh(κ|a|)/sinh(κ(b − a))``, κ = √(θ² + 2λ/σ²), θ = μ/σ²
  (Cox & Miller, "The Theory of Stochastic Processes", 1965, §5.7). Not bound to lie inside
  the interval; the report shows it beside the median-unbiased one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq

from analysis import stats
from analysis.sprt import EMPTY_CELL, constrained_mle

METHOD = (
    "median-unbiased estimate and 95 % interval from the stopping distribution (stage-wise "
    "ordering, Siegmund 1978; the unit scores' sum as a Gaussian random walk), beside the "
    "bias-adjusted estimate (Whitehead 1986)"
)
SCORE_EDGE = 1e-6
"""Scores searched lie in [SCORE_EDGE, 1 − SCORE_EDGE] (Elo within about ±2,400)."""
PATHS = 10_000
"""Simulated paths of the score sum: the ends' Monte-Carlo error is about ±0.0016 in
probability (√(0.025·0.975/PATHS))."""
MAX_LOOKS = 250
"""Looks at the simulated test, evenly spaced until the stop (every unit below 250 units)."""
MEAN_GRID = 201
"""Means at which ``G`` is computed, across the range of a unit's score."""
BISECTIONS = 100
"""Halvings of the multiplier's interval: past float precision from any starting width."""
PATHS_SEED = 20_260_101
"""The paths are the same for every test, so a report is reproducible."""


@dataclass(frozen=True)
class Brownian:
    """A Brownian motion from 0 with ``drift`` and ``variance`` per unit, absorbed at
    ``lower < 0 < upper`` (the bias-adjusted estimate's model of the LLR)."""

    drift: float
    variance: float
    lower: float
    upper: float

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
    def cells(self) -> np.ndarray:
        """The counts, an outcome never seen given a pseudo-count (``EMPTY_CELL``)."""
        c = np.asarray(self.counts, dtype=float)
        return np.where(c > 0, c, EMPTY_CELL)

    @cached_property
    def _step(self) -> np.ndarray:
        """One unit's LLR increment for each outcome, ``log(p₁ᵢ/p₀ᵢ)``."""
        p1 = constrained_mle(self.cells, self.values, self.score1)
        return np.asarray(np.log(p1) - np.log(constrained_mle(self.cells, self.values,
                                                               self.score0)))  # fmt: skip

    def increments(self, score: float) -> tuple[float, float]:
        """Mean and variance of one unit's LLR increment when the true mean score is
        ``score`` (outcomes: the distribution closest to the observed one with that mean)."""
        p = constrained_mle(self.cells, self.values, score)
        mean = float(p @ self._step)
        return mean, max(float(p @ self._step**2) - mean * mean, 1e-12)

    @cached_property
    def moved_bounds(self) -> tuple[float, float]:
        """The bounds with the crossed one moved to where the LLR stopped and the other
        outwards by the same distance (the continuous process then stops where the batch did)."""
        lower, upper = self.lower, self.upper
        if self.llr >= upper:
            return lower - (self.llr - upper), self.llr
        if self.llr <= lower:
            return self.llr, upper + (lower - self.llr)
        return lower, upper

    def process(self, score: float) -> Brownian:
        """The Brownian approximation of the LLR if the true mean score is ``score``, with the
        bounds moved by the observed overshoot."""
        drift, variance = self.increments(score)
        return Brownian(drift, variance, *self.moved_bounds)

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


def fits_to_means(freqs: np.ndarray, values: np.ndarray, means: np.ndarray) -> np.ndarray:
    """``analysis.sprt.constrained_mle`` for many rows at once: row ``k`` of ``freqs`` fitted
    to mean ``means[k]``, ``p = f / (1 + λ (x − mean))``, λ found by bisection (the equation's
    left side falls as λ rises) to the precision of a float."""
    f = freqs / freqs.sum(axis=1, keepdims=True)
    d = values[None, :] - means[:, None]
    lo = -1.0 / d.max(axis=1)
    hi = -1.0 / d.min(axis=1)
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        positive = (f * d / (1.0 + mid[:, None] * d)).sum(axis=1) > 0
        lo, hi = np.where(positive, mid, lo), np.where(positive, hi, mid)
    p = f / (1.0 + ((lo + hi) / 2)[:, None] * d)
    return np.asarray(p / p.sum(axis=1, keepdims=True))


@dataclass(frozen=True)
class ScoreWalk:
    """The test as a walk of its unit scores' sum (the interval's model, module docstring)."""

    test: StoppedTest

    @cached_property
    def rate_curve(self) -> tuple[np.ndarray, np.ndarray]:
        """(means, G): the LLR per unit of the observed frequencies moved to each mean,
        made non-decreasing so that the LLR never falls as the score sum rises."""
        x = self.test.values
        lo, hi = float(x.min()), float(x.max())
        edge = 1e-6 * (hi - lo)
        means = np.linspace(lo + edge, hi - edge, MEAN_GRID)
        q = fits_to_means(np.tile(self.test.cells, (MEAN_GRID, 1)), x, means)
        p0 = fits_to_means(q, x, np.full(MEAN_GRID, self.test.score0))
        p1 = fits_to_means(q, x, np.full(MEAN_GRID, self.test.score1))
        rates = (q * (np.log(p1) - np.log(p0))).sum(axis=1)
        return means, np.maximum.accumulate(rates)

    def first_mean_reaching(self, rate: np.ndarray) -> np.ndarray:
        """The least mean whose LLR per unit is at least ``rate`` (−inf when every mean's is,
        +inf when none is)."""
        means, rates = self.rate_curve
        k = np.searchsorted(rates, rate, side="left")
        return _between(means, rates, rate, k)

    def last_mean_below(self, rate: np.ndarray) -> np.ndarray:
        """The greatest mean whose LLR per unit is at most ``rate`` (−inf when none is, +inf
        when every mean's is)."""
        means, rates = self.rate_curve
        k = np.searchsorted(rates, rate, side="right")
        return _between(means, rates, rate, k)

    @cached_property
    def score_variance(self) -> float:
        """The variance of a unit's score, with half a unit added at each end of the range so
        that units which all scored alike still leave some (as a Jeffreys prior would)."""
        x = self.test.values
        weights = np.asarray(self.test.counts, dtype=float).copy()
        weights[int(np.argmin(x))] += 0.5
        weights[int(np.argmax(x))] += 0.5
        mean = float(weights @ x) / weights.sum()
        return float(weights @ (x - mean) ** 2) / weights.sum()

    def turning_drifts(self) -> np.ndarray:
        """For each simulated path, the drift (true mean score) below which its outcome is no
        better than the observed one and above which it is better (stage-wise ordering)."""
        units = float(sum(self.test.counts))
        looks = int(min(max(units, 1), MAX_LOOKS))
        times = units * np.arange(1, looks + 1) / looks
        walk = walk_paths(looks) * math.sqrt(self.score_variance * units / looks)
        noise = walk / times  # the mean score at each look is s + noise
        lower, upper = self.test.moved_bounds
        observed = float(np.dot(self.test.counts, self.test.values)) / units
        # Drifts at or above ``up`` cross the upper bound at that look, at or below ``down``
        # the lower one; at the last look the paths are ordered by their mean score.
        up = self.first_mean_reaching(upper / times) - noise
        down = self.last_mean_below(lower / times) - noise
        if self.test.llr >= self.test.upper:
            up[:, -1] = observed - noise[:, -1]
            earlier = np.maximum.accumulate(down, axis=1)
            earlier = np.concatenate([np.full((PATHS, 1), -np.inf), earlier[:, :-1]], axis=1)
            return np.asarray(np.maximum(up, earlier).min(axis=1))
        down[:, -1] = observed - noise[:, -1]
        earlier = np.minimum.accumulate(up, axis=1)
        earlier = np.concatenate([np.full((PATHS, 1), np.inf), earlier[:, :-1]], axis=1)
        return np.asarray(np.minimum(down, earlier).max(axis=1))


def _between(means: np.ndarray, rates: np.ndarray, rate: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The mean at ``rate`` by linear interpolation between grid points ``k − 1`` and ``k``;
    −inf before the grid, +inf past it."""
    inside = (k > 0) & (k < len(means))
    j = np.clip(k, 1, len(means) - 1)
    g0, g1, m0, m1 = rates[j - 1], rates[j], means[j - 1], means[j]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(g1 > g0, (rate - g0) / (g1 - g0), 1.0)
    found = m0 + np.clip(frac, 0.0, 1.0) * (m1 - m0)
    return np.where(inside, found, np.where(k == 0, -np.inf, np.inf))


@lru_cache(maxsize=4)
def walk_paths(looks: int) -> np.ndarray:
    """``PATHS`` standard random walks at ``looks`` evenly spaced looks (unit steps), the same
    for every test so that a report is reproducible (read-only: shared between calls)."""
    rng = np.random.default_rng(PATHS_SEED)
    walks = np.cumsum(rng.standard_normal((PATHS, looks)), axis=1)
    walks.flags.writeable = False
    return walks


def _elo(score: float) -> float:
    if score <= SCORE_EDGE:
        return -math.inf
    if score >= 1 - SCORE_EDGE:
        return math.inf
    return stats.elo_from_score(score)


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
    turns = ScoreWalk(test).turning_drifts()
    # P(no better) at drift s is the share of paths turning above s: its 0.975, ½ and 0.025
    # points are the turning drifts' 2.5 %, 50 % and 97.5 % points.
    low, median, high = (float(q) for q in np.quantile(turns, [0.025, 0.5, 0.975],
                                                       method="inverted_cdf"))  # fmt: skip
    return StoppedEstimate(bias_adjusted_elo(test), _elo(median), _elo(low), _elo(high))


def bias_adjusted_elo(test: StoppedTest) -> float:
    """Whitehead's bias-adjusted Elo of a stopped test (module docstring)."""
    # The expected rate rises with the score; the gap is negated to decrease like the others.
    return stats.elo_from_score(_root(lambda s: -test.rate_gap(s)))
