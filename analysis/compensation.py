"""Fair compensation (komi): points to give each later turn position so that win shares equalise.

The komi measures the seat, not the agents: when different agents play, each seat's points are
first corrected for who sits there. An additive model ``points = agent effect + seat effect``
is fitted by least squares over every seat of every match, and the agent effects are taken off
(agents with the same spec share one effect, so self-play needs no correction). The seating
must separate the two: with ``fixed`` seats and different agents every agent always has the
same seat, the effects are confounded, and the komi is reported as not estimable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from analysis import stats
from analysis.tidy import Wide, by_turn

BOOTSTRAP_SEED = 7_340_033
BOOTSTRAP_SAMPLES = 1_000
"""Resamples of units behind the n-player interval: enough that the 2.5 % and 97.5 % points
move by well under a points step between seeds."""
MIN_BOOTSTRAP_UNITS = 30
"""Fewer units give bootstrap intervals built from a handful of distinct resamples."""
BOOTSTRAP_MAX_MATCHES = 1_000
"""Above this many matches the bootstrap resamples a fixed random subset of the units (about
this many matches) and scales its spread by √(subset / all units): the spread of a figure
averaged over units shrinks as 1/√units."""
TIE = 1e-9
"""Points: adjusted scores this close are a tie (the winners split the win)."""
MAX_ROUNDS = 30
"""Rounds of the seat-by-seat solve; it stops earlier once no offset moves."""
RESAMPLE_BLOCK = 200
"""Resamples solved side by side: bounds the memory of the (resamples x matches x seats)
arrays."""


def shares_with_offsets(points: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Seat win shares when ``offsets[s]`` points are added to seat ``s`` (ties split)."""
    adj = points + offsets[None, :]
    top = adj.max(axis=1, keepdims=True)
    winners = np.isclose(adj, top, rtol=0.0, atol=1e-9)
    return np.asarray((winners / winners.sum(axis=1, keepdims=True)).mean(axis=0))


def seat_adjusted_points(w: Wide, groups: np.ndarray) -> np.ndarray | None:
    """Points with the agents' effects removed, or None when seat and agent are confounded.

    ``groups[agent_index]`` says which agents are the same player; one group is self-play and
    comes back unchanged.
    """
    cell_group = groups[w.agent]
    kinds = np.unique(cell_group)
    if kinds.size < 2:
        return w.points
    m, n = w.points.shape
    # Columns: one per agent group, then seats 1..n-1 (seat 0 is the baseline).
    design = np.zeros((m * n, kinds.size + n - 1))
    rows = np.arange(m * n)
    design[rows, np.searchsorted(kinds, cell_group.ravel())] = 1.0
    seat = np.tile(np.arange(n), m)
    later = seat > 0
    design[rows[later], kinds.size + seat[later] - 1] = 1.0
    coef, _, rank, _ = np.linalg.lstsq(design, w.points.ravel(), rcond=None)
    if rank < design.shape[1]:
        return None
    effect = coef[: kinds.size][np.searchsorted(kinds, cell_group)]
    return np.asarray(w.points - effect)


def _median_of_counts(values: np.ndarray, counts: np.ndarray) -> float:
    cum = np.cumsum(counts)
    n = int(cum[-1])
    lo = values[np.searchsorted(cum, (n - 1) // 2 + 1)]
    hi = values[np.searchsorted(cum, n // 2 + 1)]
    return float((lo + hi) / 2)


def median_interval(diff: np.ndarray, unit: np.ndarray) -> tuple[float, float]:
    """95 % interval of the komi ``x`` that evens two seats whose point gaps are ``diff``.

    With ``x`` added to the second seat it wins the matches with ``diff < x``: for ``x``
    between two observed gaps its share is the share of gaps below, a mean over units with an
    exact, design-adjusted interval (``stats.share_from_sums``). The interval holds every
    ``x`` whose share is not significantly below ½ on its left end, nor above ½ on its right
    (the test inverted, as Woodruff's interval for a median); nan where the data cannot bound
    it (one unit, or too few matches to reject any share).
    """
    values = np.unique(diff)
    k = values.size

    def below(j: int, strict: bool) -> stats.UnitMean:
        cut = diff < values[j] if strict else diff <= values[j]
        return stats.share_from_sums(stats.unit_sums(cut.astype(float), unit))

    def first(ok: Callable[[int], bool]) -> int:
        lo, hi = 0, k  # smallest j in [0, k) with ok(j); k when none
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ok(mid) else (mid + 1, hi)
        return lo

    none = stats.share_from_sums(stats.unit_sums(np.zeros(diff.size), unit))
    low = (
        math.nan
        if none.ci_high >= 0.5
        else float(values[first(lambda j: below(j, False).ci_high >= 0.5)])
    )
    every = stats.share_from_sums(stats.unit_sums(np.ones(diff.size), unit))
    j = first(lambda j: below(j, True).ci_low > 0.5)  # first value past the upper end
    high = math.nan if every.ci_low <= 0.5 else float(values[j - 1])
    return (low, high)


def _two_player(points: np.ndarray, unit: np.ndarray) -> dict[str, Any]:
    diff = points[:, 0] - points[:, 1]
    values, counts = np.unique(diff, return_counts=True)
    est = _median_of_counts(values, counts)
    lo, hi = median_interval(diff, unit)
    return {
        "method": "median of the starting player's points minus the second player's; 95 % "
        "interval inverting the exact test of the second player's win share after the komi, "
        "over units of sampling (analytic, no resampling)",
        "offsets": [{"seat": 1, "points": est, "ci_low": lo, "ci_high": hi}],
        "win_share_after": shares_with_offsets(points, np.array([0.0, est])).tolist(),
    }


def _solve_seat(points: np.ndarray, weights: np.ndarray, offsets: np.ndarray, s: int) -> float:
    """The offset of seat ``s`` (others fixed) whose weighted win share is nearest 1/n.

    Seat ``s`` wins a match alone when its offset exceeds ``c`` = the best other adjusted
    score minus its own points, and shares the win when equal, so its share is a step function
    of the offset with steps at the sorted ``c``: one pass over them finds the closest point
    (a tie value, or the middle of the gap between two).
    """
    n = points.shape[1]
    others = (points + offsets[None, :])[:, [t for t in range(n) if t != s]]
    top = others.max(axis=1)
    c = top - points[:, s]
    tied = (top[:, None] - others <= TIE).sum(axis=1)
    order = np.argsort(c)
    c_sorted, w_sorted = c[order], weights[order]
    starts = np.r_[0, np.flatnonzero(np.diff(c_sorted) > TIE) + 1]
    steps = c_sorted[starts]
    total = float(w_sorted.sum())
    mass = np.add.reduceat(w_sorted, starts) / total
    at_tie = np.add.reduceat(w_sorted / (tied[order] + 1), starts) / total
    after = np.cumsum(mass)  # share just above each step
    share = np.concatenate([[0.0], after - mass + at_tie, after])
    where = np.concatenate(
        [[steps[0] - 1.0], steps, (steps[:-1] + steps[1:]) / 2, [steps[-1] + 1.0]]
    )
    return float(where[int(np.argmin(np.abs(share - 1.0 / n)))])


def _fit_offsets(
    points: np.ndarray, weights: np.ndarray | None = None, start: np.ndarray | None = None
) -> np.ndarray:
    """Offsets (seat 0 fixed at 0) making every seat's (weighted) win share 1/n, seat by seat,
    repeated over the seats until no offset moves.

    Shares are step functions, so the rounds can fall into a cycle between neighbouring steps;
    then the state of the cycle whose shares are closest to 1/n is kept.
    """
    n = points.shape[1]
    w = np.ones(points.shape[0]) if weights is None else weights.astype(float)
    if start is None:
        offsets = np.zeros(n)
        offsets[1:] = np.median(points[:, :1] - points[:, 1:], axis=0)
    else:
        offsets = start.copy()
    seen: list[np.ndarray] = []
    shares = _weighted_shares(points, w, offsets)
    for _ in range(MAX_ROUNDS):
        seen.append(offsets.copy())
        for s in range(1, n):
            offsets[s] = _solve_seat(points, w, offsets, s)
        before, shares = shares, _weighted_shares(points, w, offsets)
        # Offsets inside a flat step can keep moving (a middle of a gap that depends on
        # another offset) while no share changes: the shares are what is being solved.
        if float(np.abs(shares - before).max()) <= TIE:
            return offsets
        again = [i for i, old in enumerate(seen) if float(np.abs(offsets - old).max()) <= TIE]
        if again:
            cycle = seen[again[0] :]
            gaps = [np.abs(_weighted_shares(points, w, o) - 1.0 / n).max() for o in cycle]
            return cycle[int(np.argmin(gaps))]
    return offsets


def _weighted_shares(points: np.ndarray, weights: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    adj = points + offsets[None, :]
    winners = adj.max(axis=1, keepdims=True) - adj <= TIE
    split = winners / winners.sum(axis=1, keepdims=True)
    return np.asarray(weights @ split / weights.sum())


def _solve_seat_many(
    points: np.ndarray, weights: np.ndarray, offsets: np.ndarray, s: int
) -> np.ndarray:
    """``_solve_seat`` for many resamples at once: row ``r`` of ``weights`` and ``offsets``.

    Every float is made by the same operation on the same operands, in the same order, as in
    ``_solve_seat`` (rows sorted one by one, each segment summed by one ``reduceat``, shares
    accumulated left to right), so each row's answer is that function's to the last bit; the
    bootstrap's published intervals depend on it.
    """
    r, m = weights.shape
    n = points.shape[1]
    # Seat by seat on (resamples x matches) planes: reducing a short last axis is slow.
    others = [points[None, :, t] + offsets[:, t, None] for t in range(n) if t != s]
    top = others[0]
    for o in others[1:]:
        top = np.maximum(top, o)
    c = top - points[None, :, s]
    tied = np.zeros((r, m))
    for o in others:
        tied += top - o <= TIE
    order = (np.argsort(c, axis=1) + m * np.arange(r)[:, None]).ravel()
    c_sorted = c.ravel()[order].reshape(r, m)
    w_sorted = weights.ravel()[order].reshape(r, m)
    tied_sorted = tied.ravel()[order].reshape(r, m)
    is_start = np.ones((r, m), bool)
    is_start[:, 1:] = np.diff(c_sorted, axis=1) > TIE
    # Segments of every row in one flat array: each ends where the next starts, and every row
    # starts one, so no segment crosses rows.
    starts = np.flatnonzero(is_start)
    seg_row = starts // m
    counts = is_start.sum(axis=1)
    seg_pos = np.arange(starts.size) - np.repeat(np.cumsum(counts) - counts, counts)
    total = w_sorted.sum(axis=1)[seg_row]
    k = int(counts.max())
    steps = np.zeros((r, k))
    mass = np.zeros((r, k))
    at_tie = np.zeros((r, k))
    steps[seg_row, seg_pos] = c_sorted.ravel()[starts]
    mass[seg_row, seg_pos] = np.add.reduceat(w_sorted.ravel(), starts) / total
    at_tie[seg_row, seg_pos] = (
        np.add.reduceat((w_sorted / (tied_sorted + 1)).ravel(), starts) / total
    )
    after = np.cumsum(mass, axis=1)  # the padding (zeros) comes after each row's steps
    valid = np.arange(k)[None, :] < counts[:, None]
    target = 1.0 / n
    gap = np.concatenate(
        [
            np.abs(np.zeros((r, 1)) - target),
            np.where(valid, np.abs(after - mass + at_tie - target), np.inf),
            np.where(valid, np.abs(after - target), np.inf),
        ],
        axis=1,
    )
    last = steps[np.arange(r), counts - 1]
    middles = np.empty((r, k))
    middles[:, :-1] = (steps[:, :-1] + steps[:, 1:]) / 2
    above = np.where(np.arange(k)[None, :] == (counts - 1)[:, None], last[:, None] + 1.0, middles)
    where = np.concatenate([steps[:, :1] - 1.0, steps, above], axis=1)
    return where[np.arange(r), np.argmin(gap, axis=1)]


def _fit_offsets_many(points: np.ndarray, weights: np.ndarray, start: np.ndarray) -> np.ndarray:
    """``_fit_offsets(points, weights[r], start)`` for every row ``r``, solved side by side.

    The shares only decide whether a round moved (their changes are whole weights over the
    total, far above ``TIE``, or rounding), so they are summed here in any order; a cycle's
    state is picked with ``_weighted_shares`` itself, whose rounding breaks exact ties.
    """
    r, n = weights.shape[0], points.shape[1]
    offsets = np.tile(start, (r, 1))
    out = np.empty((r, n))
    active = np.arange(r)
    seen: list[np.ndarray] = []
    shares = _shares_many(points, weights, offsets)
    for _ in range(MAX_ROUNDS):
        if active.size == 0:
            break
        seen.append(offsets.copy())
        w = weights[active]
        for s in range(1, n):
            offsets[active, s] = _solve_seat_many(points, w, offsets[active], s)
        before, now = shares[active], _shares_many(points, w, offsets[active])
        shares[active] = now
        moved = np.abs(now - before).max(axis=1) > TIE
        out[active[~moved]] = offsets[active[~moved]]
        active = active[moved]
        history = np.stack(seen)[:, active]  # rounds x rows x seats
        match = np.abs(history - offsets[active][None]).max(axis=2) <= TIE
        cycled = match.any(axis=0)
        for row, first in zip(active[cycled], match.argmax(axis=0)[cycled], strict=True):
            cycle = [old[row] for old in seen[first:]]
            gaps = [
                np.abs(_weighted_shares(points, weights[row], o) - 1.0 / n).max() for o in cycle
            ]
            out[row] = cycle[int(np.argmin(gaps))]
        active = active[~cycled]
    out[active] = offsets[active]
    return out


def _shares_many(points: np.ndarray, weights: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each row's weighted win shares (``_weighted_shares`` per row, summed in another order)."""
    adj = [points[None, :, t] + offsets[:, t, None] for t in range(points.shape[1])]
    top = adj[0]
    for a in adj[1:]:
        top = np.maximum(top, a)
    winners = [top - a <= TIE for a in adj]
    count = np.sum(winners, axis=0)
    won = np.stack([(weights * (wins / count)).sum(axis=1) for wins in winners], axis=1)
    return np.asarray(won / weights.sum(axis=1)[:, None])


def _bootstrap_offsets(
    points: np.ndarray, unit: np.ndarray, est: np.ndarray, samples: int
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile 95 % interval of every offset from ``samples`` resamples of whole units."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    _, label = np.unique(unit, return_inverse=True)
    units = int(label.max()) + 1
    scale, centre = 1.0, est
    subset = max(MIN_BOOTSTRAP_UNITS, units * BOOTSTRAP_MAX_MATCHES // points.shape[0])
    if subset < units:
        keep = np.zeros(units, bool)
        keep[rng.choice(units, subset, replace=False)] = True
        rows = keep[label]
        points, label = points[rows], np.unique(label[rows], return_inverse=True)[1]
        scale = math.sqrt(subset / units)
        centre = _fit_offsets(points, start=est)
        units = subset
    weights = np.array(
        [np.bincount(rng.integers(0, units, units), minlength=units) for _ in range(samples)]
    )[:, label].astype(float)
    boots = np.concatenate(
        [
            _fit_offsets_many(points, weights[i : i + RESAMPLE_BLOCK], centre)
            for i in range(0, samples, RESAMPLE_BLOCK)
        ]
    )
    lo, hi = np.percentile(boots, [2.5, 97.5], axis=0)
    return est + (lo - centre) * scale, est + (hi - centre) * scale


def _n_player(points: np.ndarray, unit: np.ndarray, samples: int) -> dict[str, Any]:
    est = _fit_offsets(points)
    n = points.shape[1]
    lo = hi = np.full(n, math.nan)
    if samples > 0 and np.unique(unit).size >= MIN_BOOTSTRAP_UNITS:
        lo, hi = _bootstrap_offsets(points, unit, est, samples)
    return {
        "method": "per-turn-position offsets (the starting player fixed at 0) equalising win "
        "shares, solved seat by seat on the step function of each share; bootstrap percentile "
        f"interval ({samples:,} resamples of units of sampling, seeded)",
        "offsets": [
            {"seat": s, "points": float(est[s]), "ci_low": float(lo[s]), "ci_high": float(hi[s])}
            for s in range(1, n)
        ],
        "win_share_after": shares_with_offsets(points, est).tolist(),
    }


def fair_compensation(
    w: Wide, agent_groups: Sequence[int] | None = None, samples: int | None = None
) -> dict[str, Any] | None:
    """Komi for a points game, by turn position; None with fewer than two seats or no matches.

    ``agent_groups[i]`` names the player behind agent index ``i`` (equal for agents with the
    same spec); by default every agent index is a different player. Offsets are per turn
    position (``offsets[].seat`` is the turn position: 1 = the second to move), which is the
    seat index wherever seat 0 always starts. Two players: the median of the starting player's
    minus the second's (agent-corrected) points, to be added to the second, with an analytic
    interval (``median_interval``). More players: an offset per later position with a
    bootstrap interval over units (``BOOTSTRAP_SAMPLES`` resamples, none below
    ``MIN_BOOTSTRAP_UNITS`` units; ``note`` says so). ``win_share_after`` is computed on the
    corrected points of every match. No residual is reported: the offsets are solved to even
    these very matches, so what is left on them is zero up to whole-point steps and says nothing
    about the game; the interval carries the uncertainty. When seats and agents are confounded,
    ``offsets`` is null and ``note`` says why.
    """
    if w.players < 2 or w.matches == 0:
        return None
    w = by_turn(w)
    if agent_groups is None:
        groups = np.arange(len(w.labels), dtype=np.int64)
    else:
        groups = np.asarray(agent_groups, dtype=np.int64)
    points = seat_adjusted_points(w, groups)
    if points is None:
        return {
            "method": "not estimable",
            "offsets": None,
            "win_share_after": None,
            "agent_corrected": False,
            "note": "cannot be estimated: every agent keeps one seat, so the seat's effect on "
            "points cannot be told apart from the agent's (seat the agents in turn)",
        }
    if w.players == 2:
        out = _two_player(points, w.unit)
    else:
        out = _n_player(points, w.unit, BOOTSTRAP_SAMPLES if samples is None else samples)
    out["agent_corrected"] = points is not w.points
    notes = []
    if out["agent_corrected"]:
        notes.append(
            "points corrected for the agents in each seat (least-squares agent + seat effects)"
        )
    units = int(np.unique(w.unit).size)
    if w.players > 2 and units < MIN_BOOTSTRAP_UNITS:
        notes.append(f"no interval: fewer than {MIN_BOOTSTRAP_UNITS} units of sampling")
    elif any(
        not math.isfinite(o["ci_low"]) or not math.isfinite(o["ci_high"]) for o in out["offsets"]
    ):
        notes.append("the data cannot bound the komi on one side or both (too few units)")
    out["note"] = "; ".join(notes) or None
    return out


def points_vary(w: Wide) -> bool:
    """True when points carry more than the win/loss outcome (some seat's points differ)."""
    return bool(w.matches) and not math.isclose(float(np.ptp(w.points)), 0.0)
