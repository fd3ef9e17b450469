"""Small statistical building blocks: intervals, tests, Elo, LOS and game-pair variances.

Every function works on plain numbers (or NumPy arrays where noted) and returns plain floats,
so the section modules can combine them freely. Undefined values are ``nan``; the report turns
them into JSON ``null``.

One variance convention everywhere: the sample variance (``ddof=1``) of the per-unit values
(games, meetings or seat-swapped pairs); it is undefined for a single unit.

Units of sampling (``analysis.units``): ``unit_sums`` → ``share_from_sums`` / ``clustered_share``
(a mean share with its exact, design-adjusted interval), ``clustered_mean`` (a t interval over
units), ``share_test`` (the test that interval inverts), ``share_difference`` (two batches),
``holm`` (adjusted p-values for a family of tests).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import numpy as np
from scipy import special
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


def normal_interval(mean: float, variance: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Normal interval ``mean ± z·sqrt(variance / n)`` from a per-observation variance."""
    if n <= 0 or not math.isfinite(mean):
        return (math.nan, math.nan)
    half = z * math.sqrt(max(variance, 0.0) / n)
    return (mean - half, mean + half)


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


# --------------------------------------------------------------------------- units of sampling
# Matches are not always independent draws: deterministic players replay an opening, and a round
# of the seating design shares agents (``analysis.units``). Every figure below averages
# per-match values but treats the *units* those matches belong to as the independent draws.


class UnitSums(NamedTuple):
    """What a clustered mean needs of per-match values ``y`` grouped into units ``g``.

    Sums, so they can come from NumPy (``unit_sums``) or from one grouped SQL query alike:
    ``matches`` M, ``units`` G, ``total`` Σy, ``squares`` Σy², and over units, with ``T_g`` a
    unit's total and ``N_g`` its size: ``unit_squares`` ΣT², ``unit_size_squares`` ΣN²,
    ``unit_cross`` ΣN·T; ``fractional`` counts values strictly between 0 and 1 (0: every value
    is a whole win or loss).
    """

    matches: int
    units: int
    total: float
    squares: float
    unit_squares: float
    unit_size_squares: float
    unit_cross: float
    fractional: int = 0

    @property
    def mean(self) -> float:
        return self.total / self.matches if self.matches else math.nan


def unit_totals(
    values: np.ndarray, unit: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-unit totals ``(T_g, N_g)`` of ``values`` labelled by ``unit`` (any integers, in order
    of label; None: every value is its own unit): what every variance over units starts from."""
    y = np.asarray(values, dtype=float).ravel()
    if unit is None:
        unit = np.arange(y.size)
    _, inv, size = np.unique(np.asarray(unit).ravel(), return_inverse=True, return_counts=True)
    return np.bincount(inv.ravel(), weights=y, minlength=size.size), size.astype(float)


def totals_sums(t: np.ndarray, n: np.ndarray) -> UnitSums:
    """``UnitSums`` of units with totals ``t`` over sizes ``n`` (units of size 0 left out), for
    figures that have only unit totals (``squares`` then unknown: no design effect)."""
    keep = np.asarray(n) > 0
    t, n = np.asarray(t, float)[keep], np.asarray(n, float)[keep]
    return UnitSums(round(float(n.sum())), int(t.size), float(t.sum()), math.nan,
                    float((t * t).sum()), float((n * n).sum()), float((n * t).sum()))  # fmt: skip


def unit_sums(values: np.ndarray, unit: np.ndarray | None = None) -> UnitSums:
    """``UnitSums`` of per-match ``values`` with unit labels ``unit`` (any integers; None: every
    match is its own unit)."""
    y = np.asarray(values, dtype=float).ravel()
    m = int(y.size)
    t, n = unit_totals(y, unit)
    return UnitSums(
        matches=m,
        units=int(n.size),
        total=float(y.sum()),
        squares=float((y * y).sum()),
        unit_squares=float((t * t).sum()),
        unit_size_squares=float((n * n).sum()),
        unit_cross=float((n * t).sum()),
        fractional=int(((y > 0) & (y < 1)).sum()),
    )


def cluster_variance(s: UnitSums) -> float:
    """Cluster-robust (CR1) variance of the mean Σy / M over units (nan below two units).

    The mean is a ratio of unit totals to unit sizes; its linearised residual in unit g is
    ``T_g − ȳ·N_g``, and CR1 is ``G / (G − 1) · Σ (T_g − ȳ·N_g)² / M²``. With one match per
    unit it is exactly the sample variance (ddof = 1) over M.
    """
    m, g = s.matches, s.units
    if g < 2 or m == 0:
        return math.nan
    mean = s.total / m
    ss = s.unit_squares - 2 * mean * s.unit_cross + mean * mean * s.unit_size_squares
    # The expanded sum leaves rounding residue where every unit has the same mean.
    scale = s.unit_squares + mean * mean * s.unit_size_squares
    if ss <= 1e-12 * scale:
        ss = 0.0
    return g / (g - 1) * ss / (m * m)


SPENT_DF = 2.0
"""Degrees of freedom ``unit_df`` takes from the effective number of units."""


def unit_df(s: UnitSums) -> float:
    """Degrees of freedom of a mean over units, the one small-sample rule of every interval over
    units: the effective number of units minus two, never below one (zero below two units).

    The effective number is Kish's (Σ N_g)² / Σ N_g²: the unit count when units are of one
    size, fewer when a few large units carry most matches. CR1 understates the variance when a
    few units dominate (the mean leans towards them, shrinking their residuals), and the
    shortfall is worst where those units are few. Measured on twelve openings of very unequal
    frequencies (about four effective units, ``bench/README.md``): minus one covered 90.8 %
    (seat shares) and 87.5 % (all seats at once) with three seats at 300 matches, as did
    Bell and McCaffrey's degrees of freedom with CR1 or CR2 (85.6–93.1 %); minus two covered
    94.6 % and 96.4 %, costing one degree of freedom where units are many.
    """
    if s.units < 2 or s.unit_size_squares <= 0:
        return 0.0
    return max(s.matches * s.matches / s.unit_size_squares - SPENT_DF, 1.0)


def t_quantile(df: float, confidence: float = CONFIDENCE) -> float:
    """Two-sided Student t quantile on ``df`` degrees of freedom (nan unless positive)."""
    if not df > 0:
        return math.nan
    # scipy.special's quantiles: the distribution objects cost a millisecond a call.
    return float(special.stdtrit(df, 0.5 + confidence / 2))


def _independent_variance(s: UnitSums) -> float:
    """Variance of the mean if the M matches were independent: sample variance (ddof=1) / M."""
    m = s.matches
    if m < 2:
        return math.nan
    mean = s.total / m
    ss = s.squares - m * mean * mean
    if ss <= 1e-12 * max(s.squares, 1e-300):
        ss = 0.0
    return ss / (m - 1) / m


@dataclass(frozen=True)
class UnitMean:
    """A mean of per-match values with its 95 % interval, counting units, not matches.

    ``interval`` names the method; ``variance`` is the variance of the estimate used (the CR1
    variance over units); ``design_effect`` that variance over the one independent matches would
    give (below 1 where a design's rounds balance each other, as seat-swapped pairs do);
    ``effective_n`` = matches / design effect,
    the number of independent matches the data are worth (the unit count when every unit gave
    the same value); ``df`` the degrees of freedom of the t quantile (``unit_df``: effective
    units − 2, at least 1).
    """

    estimate: float
    ci_low: float
    ci_high: float
    interval: str
    matches: int
    units: int
    variance: float = math.nan
    design_effect: float = math.nan
    effective_n: float = math.nan
    df: float = 0.0
    binomial_n: float = math.nan
    """Share intervals only: the binomial sample size the exact interval was taken at (the
    effective size in Bernoulli terms, shrunk by (z / t_df)²); ``share_test`` inverts it."""

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


ONE_UNIT = "none: one unit of sampling (every match shares one opening or round)"
NO_MATCHES = "none: no matches"


def _t_factor(df: float, confidence: float = CONFIDENCE) -> float:
    """(z / t_df)²: shrinks a sample size so that a z-based interval has t's width."""
    return float((special.ndtri(0.5 + confidence / 2) / t_quantile(df, confidence)) ** 2)


def exact_interval(k: float, n: float, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Clopper–Pearson interval for ``k`` successes in ``n`` trials (both may be fractional:
    the beta-quantile form); the whole range [0, 1] for ``n`` = 0."""
    if n <= 0:
        return (0.0, 1.0)
    alpha = 1 - confidence
    lo = float(special.betaincinv(k, n - k + 1, alpha / 2)) if k > 0 else 0.0
    hi = float(special.betaincinv(k + 1, n - k, 1 - alpha / 2)) if k < n else 1.0
    return (lo, hi)


def exact_test(k: float, n: float, expected: float) -> float:
    """Two-sided central binomial test of ``k`` in ``n`` (fractional allowed) against
    ``expected``: twice the smaller tail, the test Clopper–Pearson inverts."""
    if n <= 0 or not 0 < expected < 1:
        return math.nan
    upper = 1.0 if k <= 0 else float(special.betainc(k, n - k + 1, expected))  # P(X >= k)
    lower = 1.0 if k >= n else float(special.betaincc(k + 1, n - k, expected))  # P(X <= k)
    return min(1.0, 2 * min(upper, lower))


def share_from_sums(s: UnitSums, confidence: float = CONFIDENCE) -> UnitMean:
    """95 % (or ``confidence``) interval of a mean of per-match values in [0, 1] (win shares,
    draw indicators).

    - One match per unit and whole wins only: the exact Clopper–Pearson interval.
    - Otherwise Korn & Graubard's design-adjusted exact interval: the variance of the mean is
      the CR1 variance over units (no floor: a balanced round is worth what it measures); the
      effective size is the
      Bernoulli sample with that variance, shrunk by (z / t)² on ``unit_df`` degrees of freedom
      for the few units it rests on, and Clopper–Pearson is taken at that size. When every
      unit gave the same value the data show no spread to measure and each unit counts once
      (then the same shrinking).
    - One unit: the whole range [0, 1] — one observation bounds nothing.
    """
    m, g = s.matches, s.units
    if m == 0:
        return UnitMean(math.nan, math.nan, math.nan, NO_MATCHES, 0, 0)
    p = min(max(s.total / m, 0.0), 1.0)
    if g < 2:
        return UnitMean(p, 0.0, 1.0, ONE_UNIT, m, g, math.nan, float(m), 1.0, 0, 0.0)
    independent = _independent_variance(s)
    if g == m and s.fractional == 0:
        lo, hi = exact_interval(s.total, m, confidence)
        name = "clopper-pearson"
        return UnitMean(p, lo, hi, name, m, g, independent, 1.0, float(m), m - 1, float(m))
    variance = cluster_variance(s)
    if variance > 0:
        design_effect = variance / independent
        base = m * p * (1 - p) / (m - 1) / variance
    else:
        design_effect = m / g
        base = float(g)
    df = unit_df(s)
    n_star = base * _t_factor(df, confidence)
    lo, hi = exact_interval(p * n_star, n_star, confidence)
    name = "clopper-pearson, design-adjusted" if g < m else "clopper-pearson, t-adjusted"
    return UnitMean(p, lo, hi, name, m, g, variance, design_effect, m / design_effect, df, n_star)


def clustered_share(values: np.ndarray, unit: np.ndarray | None = None) -> UnitMean:
    """``share_from_sums`` of per-match values in [0, 1] grouped by ``unit`` labels."""
    return share_from_sums(unit_sums(values, unit))


def clustered_mean(values: np.ndarray, unit: np.ndarray | None = None) -> UnitMean:
    """Mean of unbounded per-match values (points) with a t interval over units (``unit_df``
    degrees of freedom: G − 2 for units of one size).

    The variance is CR1 over units. Null interval with one
    unit, or when every match gave the same value (no spread to measure).
    """
    s = unit_sums(values, unit)
    m, g = s.matches, s.units
    if m == 0:
        return UnitMean(math.nan, math.nan, math.nan, NO_MATCHES, 0, 0)
    mean = s.total / m
    if g < 2:
        return UnitMean(mean, math.nan, math.nan, ONE_UNIT, m, g)
    independent = _independent_variance(s)
    variance = cluster_variance(s)
    if not variance > 0:
        return UnitMean(mean, math.nan, math.nan, "none: every match gave the same value", m, g)
    df = unit_df(s)
    half = t_quantile(df) * math.sqrt(variance)
    deff = variance / independent
    name = "t over units" if g < m else "t"
    return UnitMean(mean, mean - half, mean + half, name, m, g, variance, deff, m / deff, df)


def share_test(u: UnitMean, expected: float) -> float:
    """Two-sided p-value of H0: mean share = ``expected``: the exact test that ``share_from_sums``
    inverts, at the same binomial size (so p < 0.05 exactly when ``expected`` lies outside
    the interval). Null with one unit."""
    if u.matches == 0 or u.units < 2:
        return math.nan
    return exact_test(u.estimate * u.binomial_n, u.binomial_n, expected)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (family-wise error control).

    Null (nan) entries stay nan and are not counted in the family.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, math.nan)
    ok = np.flatnonzero(np.isfinite(p))
    k = ok.size
    if k == 0:
        return out.tolist()
    order = ok[np.argsort(p[ok], kind="stable")]
    adjusted = np.maximum.accumulate((k - np.arange(k)) * p[order])
    out[order] = np.minimum(adjusted, 1.0)
    return out.tolist()


@dataclass(frozen=True)
class ShareDifference:
    """Difference a − b of two independent mean shares with its 95 % interval and p-value."""

    a: float
    b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    interval: str
    test: str

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def share_difference(a: UnitSums, b: UnitSums) -> ShareDifference:
    """Difference of two independent batches' mean shares (a − b).

    Interval: Newcombe's hybrid method (MOVER) from each side's ``share_from_sums``
    interval, so clustering, small samples and clean sweeps carry over (a one-unit side spans
    its whole range). p-value: Fisher's exact test when both sides are independent whole wins;
    otherwise the pooled score test on the two effective binomial sizes.
    """
    ua, ub = share_from_sums(a), share_from_sums(b)
    if not (a.matches and b.matches):
        nan = math.nan
        return ShareDifference(ua.estimate, ub.estimate, nan, nan, nan, nan, "none", "none")
    d = ua.estimate - ub.estimate
    lo = d - math.hypot(ua.estimate - ua.ci_low, ub.ci_high - ub.estimate)
    hi = d + math.hypot(ua.ci_high - ua.estimate, ub.estimate - ub.ci_low)
    exact = all(s.units == s.matches and s.fractional == 0 for s in (a, b))
    if exact:
        ka, kb = round(a.total), round(b.total)
        table = [[ka, a.matches - ka], [kb, b.matches - kb]]
        p = float(sps.fisher_exact(table).pvalue)
        test = "Fisher's exact test"
    elif ua.binomial_n > 0 and ub.binomial_n > 0:
        na, nb = ua.binomial_n, ub.binomial_n
        pooled = (ua.estimate * na + ub.estimate * nb) / (na + nb)
        se = math.sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb))
        p = 1.0 if se == 0 else float(2 * sps.norm.sf(abs(d) / se))
        test = "score test on effective sample sizes (design effect over units)"
    else:
        p, test = math.nan, ONE_UNIT
    name = "newcombe (mover, exact per side)"
    return ShareDifference(ua.estimate, ub.estimate, d, lo, hi, p, name, test)
