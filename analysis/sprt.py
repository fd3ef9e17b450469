"""Early stopping: a generalised SPRT on two agents' score over units of sampling.

A stop rule is an ``SprtRule`` (``analysis.stopping``, which reads and writes it), stored as
``{"type": "sprt", "agents": [A, B], "elo0": 0, "elo1": 5, "alpha": 0.05, "beta": 0.05}``.
H0: A is ``elo0`` Elo stronger than B; H1: ``elo1``. The observations are the batch's units
of sampling (``analysis.units``: a round of the seating design, or the matches of a declared
book line), not its games: a unit's score is A's mean result against B over the
unit's meetings (1 a win, ½ a draw, 0 a loss, by the game result), so whatever the unit shares
(an opening that favours one agent, a deal) stays inside one observation and the error rates
hold. The log-likelihood ratio is the generalised one over the distribution of unit scores:
for each hypothesis the distribution closest to the observed frequencies (maximum likelihood)
among those whose mean is the hypothesis's expected score, then ``N · Σ p̂ log(p₁ / p₀)``, with
``N`` the units. Bounds are ``ln(β/(1−α))`` (accept H0) and ``ln((1−β)/α)`` (accept H1).

Seat-swapped pairs (two players, ``balanced`` or ``rotate``) are units of two games, whose
scores take the five values 0, ¼, ½, ¾, 1: the pentanomial model, as fishtest uses. Rounds of
three to six players hold more meetings (six with three players seated ``balanced``), whose
mean scores fall on the grid ``j / 2k`` of a round of ``k`` meetings (``unit means``); single
matches (a round of one) give the trinomial one.

Pure arithmetic, no I/O: ``analysis.stop_rule`` reads a stored batch and
applies this. Each chunk row stores its own outcome counts (``chunk_outcomes``, from the game
result: a beats b when its win share is higher, a draw when equal); the pentanomial check sums
them, the others read the batch's units.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
from scipy.optimize import brentq

from analysis import stats
from analysis.stopping import SprtRule
from engines.seating import seat_swapped_pairs

EMPTY_CELL = 1e-3
"""Pseudo-count for an outcome never seen, so the constrained fit exists (as fishtest does)."""


# --------------------------------------------------------------------------- the statistic


def constrained_mle(freqs: np.ndarray, values: np.ndarray, mean: float) -> np.ndarray:
    """Outcome probabilities maximising ``Σ freqs·log p`` subject to ``Σ p·values = mean``.

    The solution is ``p_i = f_i / (1 + λ (x_i − mean))`` with λ the root of
    ``Σ f_i (x_i − mean) / (1 + λ (x_i − mean)) = 0`` inside the interval keeping every
    denominator positive.
    """
    f = freqs / freqs.sum()
    d = values - mean
    if np.all(d >= 0) or np.all(d <= 0):
        raise ValueError(f"score {mean:.4f} lies outside the outcome values' range")
    lo = -1.0 / d.max()
    hi = -1.0 / d.min()
    span = hi - lo
    eps = span * 1e-12

    def g(lam: float) -> float:
        return float(np.sum(f * d / (1.0 + lam * d)))

    lam = brentq(g, lo + eps, hi - eps, xtol=1e-15, rtol=1e-14, maxiter=500)
    p = f / (1.0 + lam * d)
    return np.asarray(p / p.sum())


def llr(
    counts: Sequence[float], values: Sequence[float] | np.ndarray, score0: float, score1: float
) -> float:
    """Generalised log-likelihood ratio of mean score ``score1`` against ``score0``."""
    c = np.asarray(counts, dtype=float)
    x = np.asarray(values, dtype=float)
    n = float(c.sum())
    if n == 0:
        return 0.0
    c = np.where(c > 0, c, EMPTY_CELL)
    f = c / c.sum()
    p0 = constrained_mle(c, x, score0)
    p1 = constrained_mle(c, x, score1)
    return float(n * np.sum(f * (np.log(p1) - np.log(p0))))


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper): accept H0 at or below lower, H1 at or above upper."""
    return (math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha))


PENTANOMIAL = "pentanomial"
TRINOMIAL = "trinomial"
UNIT_MEANS = "unit means"


def model_values(model: str, meetings: int = 1) -> np.ndarray:
    """The values a unit's score takes: ``j / 2k`` for a unit of ``k`` meetings (the
    pentanomial's five for a pair, the trinomial's three for one game)."""
    if model == PENTANOMIAL:
        return stats.PENTANOMIAL_VALUES
    if model == TRINOMIAL:
        return stats.TRINOMIAL_VALUES
    return np.arange(2 * meetings + 1) / (2 * meetings)


def unit_score_counts(
    half_points: np.ndarray, meetings: np.ndarray
) -> tuple[str, np.ndarray, list[int]]:
    """(model, values, counts) of units whose meetings of the two agents gave ``half_points``
    in all over ``meetings`` meetings (units without a meeting are left out).

    Units of one size ``k`` count on the grid ``j / 2k``; units of unequal sizes (openings
    linked across rounds) on their distinct scores, with 0 and 1 added so that every
    hypothesis's score lies inside the range of values."""
    s = np.asarray(half_points, dtype=np.int64)
    k = np.asarray(meetings, dtype=np.int64)
    keep = k > 0
    s, k = s[keep], k[keep]
    if k.size == 0 or bool((k == k[0]).all()):
        size = int(k[0]) if k.size else 1
        model = {1: TRINOMIAL, 2: PENTANOMIAL}.get(size, UNIT_MEANS)
        values = model_values(model, size)
        return model, values, np.bincount(s, minlength=2 * size + 1).tolist()
    scores = s / (2 * k)
    values, counts = np.unique(np.concatenate([scores, [0.0, 1.0]]), return_counts=True)
    counts[0] -= 1
    counts[-1] -= 1
    return UNIT_MEANS, values, counts.tolist()


def sprt_state(
    counts: Sequence[float],
    model: str,
    rule: SprtRule,
    values: np.ndarray | None = None,
    games: int | None = None,
) -> dict[str, Any]:
    """The SPRT's state for ``counts`` of units over unit scores ``values`` (worst first; by
    default the model's grid: 3 trinomial or 5 pentanomial). ``games``: the meetings counted
    (by default the units times the model's meetings per unit)."""
    x = model_values(model) if values is None else np.asarray(values, dtype=float)
    if len(counts) != len(x):
        raise ValueError(f"{model} needs {len(x)} counts, got {len(counts)}")
    s0 = stats.score_from_elo(float(rule.elo0))
    s1 = stats.score_from_elo(float(rule.elo1))
    value = llr(counts, x, s0, s1)
    lower, upper = bounds(float(rule.alpha), float(rule.beta))
    result = "H1" if value >= upper else "H0" if value <= lower else None
    total = int(sum(counts))
    score = float(np.dot(np.asarray(counts, float), x) / total) if total else math.nan
    if games is None:
        games = total * (2 if model == PENTANOMIAL else 1)
    return {
        **rule.to_json(),
        "model": model,
        "values": [float(v) for v in x],
        "counts": [int(c) for c in counts],
        "units": total,
        "games": int(games),
        "score": score,
        "llr": value,
        "lower": lower,
        "upper": upper,
        "result": result,
        "verdict": verdict(result, rule),
    }


def verdict(result: str | None, rule: SprtRule, estimate: Mapping[str, Any] | None = None) -> str:
    """The decision in words: which hypothesis the test accepted, and, given the stopping-aware
    ``estimate`` (``analysis.sprt_estimate``: ``elo_median``, ``elo_low``, ``elo_high``), how
    far apart the agents are by its median-unbiased estimate and 95 % interval, never by the
    hypothesis alone (the median-unbiased estimate always lies inside the interval)."""
    a, b = rule.agents
    if result is None:
        return "continue: no bound crossed yet"
    h0, h1 = f"{float(rule.elo0):g}", f"{float(rule.elo1):g}"
    which = (
        f"accept H1: the data favour {h1} Elo over {h0} for {a} against {b}"
        if result == "H1"
        else f"accept H0: the data favour {h0} Elo over {h1} for {a} against {b}"
    )
    if not estimate or math.isnan(float(estimate.get("elo_median", math.nan))):
        return which
    return (
        f"{which}; {a} is an estimated {_elo_text(estimate['elo_median'])} Elo against {b} "
        f"(median-unbiased, 95 % {_elo_text(estimate['elo_low'])} to "
        f"{_elo_text(estimate['elo_high'])}, adjusted for the stop)"
    )


def _elo_text(value: float) -> str:
    v = float(value)
    return f"{v:+.1f}" if math.isfinite(v) else ("+inf" if v > 0 else "−inf")


def meeting_sums(w: Any, agent_a: str, agent_b: str) -> tuple[np.ndarray, np.ndarray]:
    """Per unit of sampling of per-match arrays ``w`` (``analysis.tidy.Wide``): the half-points
    ``agent_a`` scored against ``agent_b`` over the unit's meetings (2 a win, 1 a draw, 0 a loss,
    by the game result), and the meetings."""
    labels = list(w.labels)
    if agent_a not in labels or agent_b not in labels or w.matches == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ia, ib = labels.index(agent_a), labels.index(agent_b)
    has_a, has_b = w.agent == ia, w.agent == ib
    met = has_a.any(axis=1) & has_b.any(axis=1)
    share_a = np.where(has_a, w.win, 0.0).sum(axis=1)
    share_b = np.where(has_b, w.win, 0.0).sum(axis=1)
    half = np.where(share_a > share_b, 2, np.where(share_a == share_b, 1, 0))
    _, unit = np.unique(w.unit, return_inverse=True)
    size = int(unit.max()) + 1
    sums = np.bincount(unit, weights=np.where(met, half, 0), minlength=size)
    meetings = np.bincount(unit, weights=met.astype(float), minlength=size)
    return sums.astype(np.int64), meetings.astype(np.int64)


def units_state(w: Any, rule: SprtRule) -> dict[str, Any]:
    """The SPRT's state over the units of sampling of per-match arrays ``w``."""
    a, b = rule.agents
    half, meetings = meeting_sums(w, a, b)
    model, values, counts = unit_score_counts(half, meetings)
    return sprt_state(counts, model, rule, values, games=int(meetings.sum()))


# --------------------------------------------------------------------------- one chunk


class _Seat(Protocol):
    @property
    def agent_label(self) -> str: ...
    @property
    def win_share(self) -> float: ...


class _Match(Protocol):
    @property
    def match_index(self) -> int: ...
    @property
    def seats(self) -> Sequence[_Seat]: ...


def meeting_outcome(mine: float, theirs: float) -> int:
    """Half-points of a meeting from the game result: win share above, equal or below."""
    return 2 if mine > theirs else 1 if mine == theirs else 0


def chunk_outcomes(
    records: Iterable[_Match], agent_a: str, agent_b: str, *, pairs: bool
) -> list[int]:
    """The rule's outcome counts over a chunk's match records, worst first.

    Arranged as ``frames.pair_outcomes`` arranges them, and counted by the game result: a at
    seat s beats b at seat t when its win share is higher, a draw when equal (never by points
    or rank). ``pairs``: five counts of a's half-points over each complete seat-swapped pair
    (2k, 2k+1) in ``records``; else three counts, one per meeting. Failed matches have no
    seats and count nowhere.
    """
    met: dict[int, list[int]] = {}
    for record in records:
        shares = {seat.agent_label: seat.win_share for seat in record.seats}
        if agent_a in shares and agent_b in shares:
            outcome = meeting_outcome(shares[agent_a], shares[agent_b])
            met.setdefault(record.match_index, []).append(outcome)
    if not pairs:
        counts = [0, 0, 0]
        for outcomes in met.values():
            for outcome in outcomes:
                counts[outcome] += 1
        return counts
    by_pair: dict[int, list[int]] = {}
    for index, outcomes in met.items():
        by_pair.setdefault(index // 2, []).extend(outcomes)
    counts = [0] * 5
    for outcomes in by_pair.values():
        if len(outcomes) == 2:
            counts[sum(outcomes)] += 1
    return counts


def uses_pairs(batch: Any) -> bool:
    """Seat-swapped pairs: two players seated by ``balanced`` or ``rotate``."""
    return seat_swapped_pairs(batch.players, batch.seat_policy)
