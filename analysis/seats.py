"""Seat balance and agent scores from a batch's seat results.

Inputs are the long frame of ``analysis.frames.seat_results``; outputs are new frames with
documented columns; inputs are never mutated and nothing is rounded here.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

Z95 = 1.959963984540054

BALANCE_COLUMNS = [
    "seat",
    "games",
    "win_share",
    "ci_low",
    "ci_high",
    "expected",
    "p_value",
    "mean_points",
]
AGENT_COLUMNS = ["agent", "games", "score", "ci_low", "ci_high", "mean_points"]


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion; (nan, nan) when there are no trials.

    ``successes`` may be fractional (draws counted as half a win); the interval then treats
    the shares as if they were 0/1 outcomes, which is slightly conservative.
    """
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def share_p_value(shares: np.ndarray, expected: float) -> float:
    """Two-sided p-value that the mean share equals ``expected``.

    Exact binomial when every share is 0 or 1; otherwise (draws split the win) a one-sample
    t-test on the shares.
    """
    n = len(shares)
    if n == 0:
        return math.nan
    if np.all((shares == 0) | (shares == 1)):
        return float(stats.binomtest(int(shares.sum()), n, expected).pvalue)
    if n < 2 or np.std(shares) == 0:
        return 1.0 if math.isclose(float(shares.mean()), expected) else 0.0
    return float(stats.ttest_1samp(shares, expected).pvalue)


def seat_balance(seat_results_df: pd.DataFrame, players: int) -> pd.DataFrame:
    """Per seat: games, win share with its 95 % Wilson interval, expected share 1/players,
    p-value against it, and mean points.

    Columns: seat, games, win_share, ci_low, ci_high, expected, p_value, mean_points.
    Every seat 0..players-1 gets a row, with NaN figures when it has no games.
    """
    expected = 1.0 / players
    rows = []
    for seat in range(players):
        part = seat_results_df[seat_results_df["seat"] == seat]
        shares = part["win_share"].to_numpy(dtype=float)
        n = len(shares)
        low, high = wilson_interval(float(shares.sum()), n)
        rows.append(
            {
                "seat": seat,
                "games": n,
                "win_share": float(shares.mean()) if n else math.nan,
                "ci_low": low,
                "ci_high": high,
                "expected": expected,
                "p_value": share_p_value(shares, expected),
                "mean_points": float(part["points"].mean()) if n else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=BALANCE_COLUMNS)


def agent_scores(seat_results_df: pd.DataFrame) -> pd.DataFrame:
    """Per agent label: games, score (mean win share) with its 95 % Wilson interval, mean points.

    Columns: agent, games, score, ci_low, ci_high, mean_points; ordered by agent index.
    """
    rows = []
    order = (
        seat_results_df.groupby("agent")["agent_index"].min().sort_values().index.tolist()
        if len(seat_results_df)
        else []
    )
    for agent in order:
        part = seat_results_df[seat_results_df["agent"] == agent]
        shares = part["win_share"].to_numpy(dtype=float)
        low, high = wilson_interval(float(shares.sum()), len(shares))
        rows.append(
            {
                "agent": agent,
                "games": len(shares),
                "score": float(shares.mean()),
                "ci_low": low,
                "ci_high": high,
                "mean_points": float(part["points"].mean()),
            }
        )
    return pd.DataFrame(rows, columns=AGENT_COLUMNS)
