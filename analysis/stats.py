"""Small statistical building blocks: intervals, tests, Elo, LOS and game-pair variances.

Every function works on plain numbers (or NumPy arrays where noted) and returns plain floats,
so the section modules can combine them freely. Undefined values are ``nan``; the report turns
them into JSON ``null``.

One variance convention everywhere: the sample variance (``ddof=1``) of the per-unit values
(games, meetings or seat-swapped pairs); it is undefined for a single unit.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
from scipy import stats as sps

CONFIDENCE = 0.95
Z95 = float(sps.norm.ppf(0.5 + CONFIDENCE / 2))
"""The two-sided 95 % normal quantile (1.959964...)."""

PENTANOMIAL_VALUES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
"""Mean score of one seat-swapped pair of games: 0, ½, 1, 1½ or 2 points out of 2."""
TRINOMIAL_VALUES = np.array([0.0, 0.5, 1.0])
"""Score of one game: loss, draw, win."""


def wilson_interval(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes out of ``n`` 0/1 trials."""
    if n <= 0:
        return (math.nan, math.nan)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At p = 0 or 1 the bound is exactly 0 or 1 in exact arithmetic; the floating-point
    # difference would leave residue like 2.8e-17, which maps to a finite, absurd Elo.
    lo = 0.0 if k <= 0 else max(0.0, centre - half)
    hi = 1.0 if k >= n else min(1.0, centre + half)
    return (lo, hi)


def share_interval(values: np.ndarray, binary: bool) -> tuple[float, float, str]:
    """95 % interval of the mean of per-game shares in [0, 1], and the interval's name.

    ``binary`` (every share in the batch is 0 or 1): Wilson. Otherwise normal from the sample
    variance, or Wilson when that variance is zero or undefined (see ``score_interval``), so an
    all-draw batch does not look certain.
    """
    n = int(values.size)
    if n == 0:
        return (math.nan, math.nan, "none")
    if binary:
        return (*wilson_interval(float(values.sum()), n), "wilson")
    variance = float(values.var(ddof=1)) if n > 1 else math.nan
    name = "normal" if n > 1 and variance > 0 else "wilson"
    return (*score_interval(float(values.mean()), variance, n), name)


def normal_interval(mean: float, variance: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Normal interval ``mean ± z·sqrt(variance / n)`` from a per-observation variance."""
    if n <= 0 or not math.isfinite(mean):
        return (math.nan, math.nan)
    half = z * math.sqrt(max(variance, 0.0) / n)
    return (mean - half, mean + half)


def mean_interval(values: np.ndarray, z: float = Z95) -> tuple[float, float, float]:
    """Mean of ``values`` with its normal 95 % interval (sample variance, ddof=1).

    One value has no variance, so its interval is undefined (nan), not a point.
    """
    n = int(values.size)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(values.mean())
    if n < 2:
        return (mean, math.nan, math.nan)
    lo, hi = normal_interval(mean, float(values.var(ddof=1)), n, z)
    return (mean, lo, hi)


def sign_test(k: int, n: int) -> float:
    """Two-sided exact binomial test of ``k`` wins in ``n`` decisive games against p = ½."""
    if n <= 0:
        return math.nan
    return float(sps.binomtest(int(k), int(n), 0.5).pvalue)


MIN_EXPECTED = 5.0
"""Smallest expected count per cell for which the chi-square approximation is used."""


def exact_multinomial_test(counts: Sequence[int], probs: Sequence[float]) -> float:
    """Exact goodness-of-fit p-value of whole ``counts`` against cell probabilities ``probs``.

    Sums the probability of every table with the same total that is no more likely than the
    observed one (the usual definition; ties within a relative 1e-9 count as equally likely).
    Enumerates all tables, so it is meant for the small totals where chi-square fails.
    """
    obs = [int(c) for c in counts]
    total = sum(obs)
    p = np.asarray(probs, dtype=float) / float(np.sum(probs))
    dist = sps.multinomial(total, p)
    observed = float(dist.pmf(obs))
    tables = np.array(list(_compositions(total, len(obs))), dtype=np.int64)
    pmf = dist.pmf(tables)
    return float(min(1.0, pmf[pmf <= observed * (1 + 1e-9)].sum()))


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


CHI_SQUARE_GOF = "chi-square goodness of fit"
"""The name ``small_sample_gof`` gives its chi-square test (the others are exact or none)."""


def small_sample_gof(
    observed: Sequence[float], expected_share: Sequence[float]
) -> tuple[float, str]:
    """Goodness of fit of ``observed`` counts to shares, chosen by sample size: (p, test).

    Chi-square when every expected count is at least ``MIN_EXPECTED``; otherwise the exact
    multinomial (binomial for two cells) test when the counts are whole; otherwise no test
    (nan), since shared wins give fractional counts that no exact test takes.
    """
    obs = np.asarray(observed, dtype=float)
    share = np.asarray(expected_share, dtype=float) / float(np.sum(expected_share))
    total = float(obs.sum())
    if total <= 0 or obs.size < 2:
        return (math.nan, "none: no games")
    if float((share * total).min()) >= MIN_EXPECTED:
        return (chisquare_gof(obs.tolist(), share.tolist())[2], CHI_SQUARE_GOF)
    if np.allclose(obs, np.rint(obs)):
        whole = np.rint(obs).astype(np.int64)
        if obs.size == 2:
            p = float(sps.binomtest(int(whole[0]), int(whole.sum()), float(share[0])).pvalue)
            return (p, "exact binomial test (fewer than 5 expected)")
        return (exact_multinomial_test(whole.tolist(), share.tolist()), "exact multinomial test")
    return (math.nan, "none: fewer than 5 expected per cell and shared wins (no exact test)")


def chisquare_gof(observed: Sequence[float], expected: Sequence[float]) -> tuple[float, int, float]:
    """Chi-square goodness of fit: (statistic, degrees of freedom, p-value).

    Observed counts may be fractional (a shared win counts ½ to each winner).
    """
    obs = np.asarray(observed, dtype=float)
    exp = np.asarray(expected, dtype=float)
    if obs.size < 2 or exp.sum() <= 0 or obs.sum() <= 0:
        return (math.nan, 0, math.nan)
    res = sps.chisquare(obs, exp * obs.sum() / exp.sum())
    return (float(res.statistic), int(obs.size - 1), float(res.pvalue))


def elo_from_score(score: float) -> float:
    """Logistic Elo difference giving an expected score ``score`` (±inf at 0 and 1)."""
    if not math.isfinite(score) or score < 0 or score > 1:
        return math.nan
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """Expected score of a player ``elo`` points stronger than the opponent."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def score_interval(score: float, variance: float, n: float) -> tuple[float, float]:
    """95 % interval of a mean score in [0, 1] from its per-unit ``variance`` over ``n`` units.

    Normal, except when every unit scored the same (zero variance) or there is a single unit
    (no variance): the normal interval would then claim certainty, so the Wilson interval of
    the score is used instead.
    """
    if n > 0 and math.isfinite(score) and (n < 2 or not variance > 0):
        return wilson_interval(score * n, n)
    return normal_interval(score, variance, n)


def elo_with_interval(score: float, variance: float, n: float) -> tuple[float, float, float]:
    """Elo from a mean score with per-unit ``variance`` over ``n`` units, and its 95 % interval.

    The interval is the normal interval of the score mapped through the logistic curve, clipped
    to [0, 1] first (so an interval touching 0 or 1 has an infinite end); see ``score_interval``.
    """
    lo, hi = score_interval(score, variance, n)
    if not math.isfinite(lo):
        return (elo_from_score(score), math.nan, math.nan)
    return (
        elo_from_score(score),
        elo_from_score(min(max(lo, 0.0), 1.0)),
        elo_from_score(min(max(hi, 0.0), 1.0)),
    )


def los(wins: float, losses: float) -> float:
    """Likelihood of superiority: P(true strength of A > B) given W and L (draws ignored)."""
    if wins + losses <= 0:
        return math.nan
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def trinomial(wins: int, draws: int, losses: int) -> tuple[float, float]:
    """Mean score and per-game score variance (ddof=1) of a W/D/L record."""
    n = wins + draws + losses
    if n == 0:
        return (math.nan, math.nan)
    counts = np.array([losses, draws, wins], dtype=float)
    return _moments(counts, TRINOMIAL_VALUES)


def pentanomial(counts: Sequence[int]) -> tuple[float, float]:
    """Mean score and per-pair variance (ddof=1) of the pair score from the five counts.

    ``counts[i]`` is the number of seat-swapped pairs in which the agent scored ``i / 2`` points
    out of 2 (LL, LD, DD or WL, WD, WW); a pair's score is its mean, 0 … 1 in steps of ¼.
    """
    arr = np.asarray(counts, dtype=float)
    if arr.shape != (5,):
        raise ValueError("pentanomial counts need exactly five entries (0, ½, 1, 1½, 2 points)")
    if arr.sum() == 0:
        return (math.nan, math.nan)
    return _moments(arr, PENTANOMIAL_VALUES)


def _moments(counts: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    n = counts.sum()
    mean = float((counts * values).sum() / n)
    var = float((counts * (values - mean) ** 2).sum() / (n - 1)) if n > 1 else math.nan
    return (mean, var)


def two_sample_difference(
    mean_a: float, var_a: float, n_a: float, mean_b: float, var_b: float, n_b: float
) -> tuple[float, float, float, float]:
    """Difference of two independent means (a − b): (estimate, ci_low, ci_high, p-value).

    Unpooled normal (Wald) interval and z-test from the per-observation variances.
    """
    if n_a <= 0 or n_b <= 0:
        return (math.nan, math.nan, math.nan, math.nan)
    diff = mean_a - mean_b
    se = math.sqrt(max(var_a, 0.0) / n_a + max(var_b, 0.0) / n_b)
    if se == 0:
        return (diff, diff, diff, 1.0 if diff == 0 else 0.0)
    p = float(2 * sps.norm.sf(abs(diff) / se))
    return (diff, diff - Z95 * se, diff + Z95 * se, p)


def weighted_quantiles(values: np.ndarray, weights: np.ndarray, qs: Sequence[float]) -> list[float]:
    """Quantiles of a distribution given as distinct ``values`` with counts ``weights``.

    Uses the same rule as ``numpy.quantile(..., method="linear")`` on the expanded data.
    """
    order = np.argsort(values)
    v = np.asarray(values, dtype=float)[order]
    w = np.asarray(weights, dtype=np.int64)[order]
    n = int(w.sum())
    if n == 0:
        return [math.nan for _ in qs]
    cum = np.cumsum(w)
    out = []
    for q in qs:
        pos = q * (n - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, n - 1)
        v_lo = v[np.searchsorted(cum, lo + 1)]
        v_hi = v[np.searchsorted(cum, hi + 1)]
        out.append(float(v_lo + (v_hi - v_lo) * (pos - lo)))
    return out
