"""Fair compensation (komi): points to give each later seat so that win shares equalise.

The komi measures the seat, not the agents: when different agents play, each seat's points are
first corrected for who sits there. An additive model ``points = agent effect + seat effect``
is fitted by least squares over every seat of every match, and the agent effects are taken off
(agents with the same spec share one effect, so self-play needs no correction). The seating
must separate the two: with ``fixed`` seats and different agents every agent always has the
same seat, the effects are confounded, and the komi is reported as not estimable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import brentq

from analysis.tidy import Wide

BOOTSTRAP_SEED = 7_340_033
BOOTSTRAP_SAMPLES = 200
N_PLAYER_BOOTSTRAP_SAMPLES = 40
N_PLAYER_MAX_MATCHES = 20_000
"""The n-player solve is iterative; it works on a fixed random subsample of this size."""
MIN_BOOTSTRAP_MATCHES = 30
"""Fewer matches give bootstrap intervals built from a handful of distinct resamples."""
OFFSET_TOLERANCE = 1e-6
"""Points: the n-player offsets are solved to this tolerance (``brentq``'s ``xtol``)."""
MAX_ROUNDS = 30
"""Rounds of the seat-by-seat solve; it stops earlier once no offset moves by the tolerance."""


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


def _no_interval(samples: int, matches: int) -> bool:
    return samples <= 0 or matches < MIN_BOOTSTRAP_MATCHES


def _two_player(points: np.ndarray, samples: int) -> dict[str, Any]:
    diff = points[:, 0] - points[:, 1]
    values, counts = np.unique(diff, return_counts=True)
    est = _median_of_counts(values, counts)
    lo = hi = math.nan
    if not _no_interval(samples, points.shape[0]):
        rng = np.random.default_rng(BOOTSTRAP_SEED)
        probs = counts / counts.sum()
        boots = [
            _median_of_counts(values, rng.multinomial(int(counts.sum()), probs))
            for _ in range(samples)
        ]
        lo, hi = (float(x) for x in np.percentile(boots, [2.5, 97.5]))
    return {
        "method": "median of seat 0's points minus seat 1's; bootstrap percentile interval "
        f"({samples} resamples of matches)",
        "offsets": [{"seat": 1, "points": est, "ci_low": lo, "ci_high": hi}],
        "win_share_after": shares_with_offsets(points, np.array([0.0, est])).tolist(),
    }


def _solve_seat(points: np.ndarray, offsets: np.ndarray, s: int, spread: float) -> float:
    """The offset of seat ``s`` (others fixed) where its win share crosses 1/n."""
    target = 1.0 / points.shape[1]
    trial = offsets.copy()

    def gap(x: float) -> float:
        trial[s] = x
        return float(shares_with_offsets(points, trial)[s] - target)

    lo, hi = offsets[s] - spread, offsets[s] + spread
    # The share only rises with the offset; widen until the bracket holds the crossing.
    while gap(lo) > 0:
        lo -= spread
    while gap(hi) < 0:
        hi += spread
    x = float(brentq(gap, lo, hi, xtol=OFFSET_TOLERANCE))
    # The share jumps where seat s ties another seat; exactly on a tie the win is split, which
    # lands between the two sides of the jump. Ties sit at whole steps of points from each
    # other seat's adjusted score, so try the nearest such offsets too and keep the closest.
    candidates = [x, x - OFFSET_TOLERANCE, x + OFFSET_TOLERANCE]
    candidates += [round(x - offsets[t]) + offsets[t] for t in range(points.shape[1]) if t != s]
    return min(candidates, key=lambda c: abs(gap(c)))


def _fit_offsets(points: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """Offsets (seat 0 fixed at 0) making every seat's win share 1/n, seat by seat.

    Win shares are step functions of the offsets, so the solve finds where each seat's share
    crosses 1/n (to ``OFFSET_TOLERANCE`` points) and repeats over the seats until no offset
    moves; what is left of the imbalance is reported as the residual.
    """
    n = points.shape[1]
    spread = float(points.max() - points.min()) + 1.0
    if start is None:
        offsets = np.zeros(n)
        offsets[1:] = np.median(points[:, :1] - points[:, 1:], axis=0)
    else:
        offsets = start.copy()
    for _ in range(MAX_ROUNDS):
        before = offsets.copy()
        for s in range(1, n):
            offsets[s] = _solve_seat(points, offsets, s, spread)
        if float(np.abs(offsets - before).max()) <= OFFSET_TOLERANCE:
            break
    return offsets


def _n_player(points: np.ndarray, samples: int) -> dict[str, Any]:
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    fit_on = points
    if points.shape[0] > N_PLAYER_MAX_MATCHES:
        fit_on = points[rng.choice(points.shape[0], N_PLAYER_MAX_MATCHES, replace=False)]
    est = _fit_offsets(fit_on)
    n = points.shape[1]
    lo = hi = np.full(n, math.nan)
    if not _no_interval(samples, points.shape[0]):
        size = fit_on.shape[0]
        boots = np.array(
            [_fit_offsets(fit_on[rng.integers(0, size, size)], est) for _ in range(samples)]
        )
        lo, hi = np.percentile(boots, [2.5, 97.5], axis=0)
    return {
        "method": "per-seat offsets (seat 0 fixed at 0) equalising win shares, solved seat by "
        f"seat with brentq to {OFFSET_TOLERANCE:g} points on up to {N_PLAYER_MAX_MATCHES} "
        f"matches; bootstrap percentile interval ({samples} resamples)",
        "offsets": [
            {"seat": s, "points": float(est[s]), "ci_low": float(lo[s]), "ci_high": float(hi[s])}
            for s in range(1, n)
        ],
        "win_share_after": shares_with_offsets(points, est).tolist(),
    }


def fair_compensation(
    w: Wide, agent_groups: Sequence[int] | None = None, samples: int | None = None
) -> dict[str, Any] | None:
    """Komi for a points game; None when there are fewer than two seats or no matches.

    ``agent_groups[i]`` names the player behind agent index ``i`` (equal for agents with the
    same spec); by default every agent index is a different player. Two players: the median of
    seat 0's minus seat 1's (agent-corrected) points, to be added to seat 1. More players: an
    offset per later seat. ``win_share_after`` and ``residual`` (the largest remaining gap
    between a seat's share and 1/n) are computed on the corrected points of every match.
    Bootstrap intervals are null below ``MIN_BOOTSTRAP_MATCHES`` matches (``note`` says so);
    when seats and agents are confounded, ``offsets`` is null and ``note`` says why.
    """
    if w.players < 2 or w.matches == 0:
        return None
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
            "residual": None,
            "agent_corrected": False,
            "note": "cannot be estimated: every agent keeps one seat, so the seat's effect on "
            "points cannot be told apart from the agent's (seat the agents in turn)",
        }
    if w.players == 2:
        out = _two_player(points, BOOTSTRAP_SAMPLES if samples is None else samples)
    else:
        out = _n_player(points, N_PLAYER_BOOTSTRAP_SAMPLES if samples is None else samples)
    out["residual"] = float(np.abs(np.asarray(out["win_share_after"]) - 1.0 / w.players).max())
    out["agent_corrected"] = points is not w.points
    notes = []
    if out["agent_corrected"]:
        notes.append(
            "points corrected for the agents in each seat (least-squares agent + seat effects)"
        )
    if w.matches < MIN_BOOTSTRAP_MATCHES:
        notes.append(f"no interval: fewer than {MIN_BOOTSTRAP_MATCHES} matches")
    out["note"] = "; ".join(notes) or None
    return out


def points_vary(w: Wide) -> bool:
    """True when points carry more than the win/loss outcome (some seat's points differ)."""
    return bool(w.matches) and not math.isclose(float(np.ptp(w.points)), 0.0)
