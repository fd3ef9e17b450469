"""Fair compensation (komi): points to give each later seat so that win shares equalise."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from analysis.tidy import Wide

BOOTSTRAP_SEED = 7_340_033
BOOTSTRAP_SAMPLES = 200
N_PLAYER_BOOTSTRAP_SAMPLES = 40
N_PLAYER_MAX_MATCHES = 20_000
"""The n-player search is iterative; it works on a fixed random subsample of this size."""


def shares_with_offsets(points: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Seat win shares when ``offsets[s]`` points are added to seat ``s`` (ties split)."""
    adj = points + offsets[None, :]
    top = adj.max(axis=1, keepdims=True)
    winners = np.isclose(adj, top, rtol=0.0, atol=1e-9)
    return np.asarray((winners / winners.sum(axis=1, keepdims=True)).mean(axis=0))


def _median_of_counts(values: np.ndarray, counts: np.ndarray) -> float:
    cum = np.cumsum(counts)
    n = int(cum[-1])
    lo = values[np.searchsorted(cum, (n - 1) // 2 + 1)]
    hi = values[np.searchsorted(cum, n // 2 + 1)]
    return float((lo + hi) / 2)


def _two_player(w: Wide, samples: int) -> dict[str, Any]:
    diff = w.points[:, 0] - w.points[:, 1]
    values, counts = np.unique(diff, return_counts=True)
    est = _median_of_counts(values, counts)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    probs = counts / counts.sum()
    boots = [
        _median_of_counts(values, rng.multinomial(int(counts.sum()), probs)) for _ in range(samples)
    ]
    lo, hi = np.percentile(boots, [2.5, 97.5])
    after = shares_with_offsets(w.points, np.array([0.0, est]))
    return {
        "method": "median of seat 0's points minus seat 1's; bootstrap percentile interval "
        f"({samples} resamples of matches)",
        "offsets": [{"seat": 1, "points": est, "ci_low": float(lo), "ci_high": float(hi)}],
        "win_share_after": after.tolist(),
    }


def _fit_offsets(points: np.ndarray, rounds: int = 4, steps: int = 18) -> np.ndarray:
    """Offsets (seat 0 fixed at 0) making every seat's win share 1/n, by coordinate bisection."""
    n = points.shape[1]
    spread = float(points.max() - points.min()) + 1.0
    offsets = np.zeros(n)
    for s in range(1, n):
        offsets[s] = float(np.median(points[:, 0] - points[:, s]))
    for _ in range(rounds):
        for s in range(1, n):
            lo, hi = offsets[s] - spread, offsets[s] + spread
            for _ in range(steps):
                offsets[s] = (lo + hi) / 2
                if shares_with_offsets(points, offsets)[s] < 1.0 / n:
                    lo = offsets[s]
                else:
                    hi = offsets[s]
            offsets[s] = (lo + hi) / 2
    return offsets


def _n_player(w: Wide, samples: int) -> dict[str, Any]:
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    points = w.points
    if points.shape[0] > N_PLAYER_MAX_MATCHES:
        points = points[rng.choice(points.shape[0], N_PLAYER_MAX_MATCHES, replace=False)]
    est = _fit_offsets(points)
    boots = np.array(
        [
            _fit_offsets(points[rng.integers(0, points.shape[0], points.shape[0])])
            for _ in range(samples)
        ]
    )
    lo, hi = np.percentile(boots, [2.5, 97.5], axis=0)
    after = shares_with_offsets(w.points, est)
    return {
        "method": "per-seat offsets (seat 0 fixed at 0) equalising win shares, found by "
        f"coordinate bisection on up to {N_PLAYER_MAX_MATCHES} matches; bootstrap percentile "
        f"interval ({samples} resamples)",
        "offsets": [
            {"seat": s, "points": float(est[s]), "ci_low": float(lo[s]), "ci_high": float(hi[s])}
            for s in range(1, w.players)
        ],
        "win_share_after": after.tolist(),
    }


def fair_compensation(w: Wide, samples: int | None = None) -> dict[str, Any] | None:
    """Komi for a points game; None when there are fewer than two seats or no matches.

    Two players: the median of seat 0's minus seat 1's points, to be added to seat 1. More
    players: an offset per later seat. ``win_share_after`` checks the result on all matches.
    """
    if w.players < 2 or w.matches == 0:
        return None
    if w.players == 2:
        return _two_player(w, BOOTSTRAP_SAMPLES if samples is None else samples)
    return _n_player(w, N_PLAYER_BOOTSTRAP_SAMPLES if samples is None else samples)


def points_vary(w: Wide) -> bool:
    """True when points carry more than the win/loss outcome (some seat's points differ)."""
    return bool(w.matches) and not math.isclose(float(np.ptp(w.points)), 0.0)
