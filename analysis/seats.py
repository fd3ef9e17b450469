"""Seat balance: how each seat (turn position) fares, and the first player's advantage.

``seat_balance`` returns one row per seat with the columns

- ``seat``, ``games``, ``win_share`` (mean of ``returns()``: shared wins split),
- ``ci_low``, ``ci_high``: 95 % interval, Wilson when every outcome is 0 or 1, otherwise the
  normal interval from the per-game sample variance, or Wilson again when that variance is
  zero or undefined (an all-draw batch); ``interval`` says which,
- ``expected`` (1/n), ``p_value`` and ``test``: two players, exact binomial sign test on the
  decisive games; n players, chi-square goodness of fit of this seat's wins against the rest
  when both expect at least 5, else an exact binomial test (or none, with shared wins),
- ``mean_points``, ``points_ci_low``, ``points_ci_high`` (normal interval; null for one game).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from analysis import stats
from analysis.tidy import Wide, is_binary, to_wide

BALANCE_COLUMNS = (
    "seat", "games", "win_share", "ci_low", "ci_high", "interval", "expected", "p_value",
    "test", "mean_points", "points_ci_low", "points_ci_high",
)  # fmt: skip


def seat_balance(seat_results_df: pd.DataFrame, players: int) -> pd.DataFrame:
    """Per-seat win shares with intervals and tests (columns in ``BALANCE_COLUMNS``)."""
    return seat_balance_wide(to_wide(seat_results_df, players))


def seat_balance_wide(w: Wide) -> pd.DataFrame:
    """``seat_balance`` on already pivoted results."""
    n, m = w.players, w.matches
    binary = is_binary(w.win)
    decisive = np.zeros(m, dtype=bool)
    if n == 2:
        decisive = is_decisive(w.win)
    rows: list[dict[str, Any]] = []
    for s in range(n):
        col = w.win[:, s]
        total = float(col.sum())
        share = total / m if m else math.nan
        lo, hi, interval = stats.share_interval(col, binary)
        if n == 2:
            d = int(decisive.sum())
            p = stats.sign_test(int((col[decisive] == 1).sum()), d)
            test = "exact binomial sign test on decisive games"
        elif n > 2:
            p, test = stats.small_sample_gof([total, m - total], [1.0, n - 1.0])
            test += " (this seat vs the rest)"
        else:
            p, test = math.nan, "none"
        mp, plo, phi = stats.mean_interval(w.points[:, s])
        rows.append(
            {
                "seat": s,
                "games": m,
                "win_share": share,
                "ci_low": lo,
                "ci_high": hi,
                "interval": interval,
                "expected": 1.0 / n,
                "p_value": p,
                "test": test,
                "mean_points": mp,
                "points_ci_low": plo,
                "points_ci_high": phi,
            }
        )
    return pd.DataFrame(rows, columns=list(BALANCE_COLUMNS))


def is_decisive(win: np.ndarray) -> np.ndarray:
    """Rows where one seat took the whole win."""
    return np.asarray((win == 1).any(axis=1))


def seat_test(w: Wide) -> dict[str, Any]:
    """Goodness of fit of the seats' wins against equal shares, all seats at once.

    Chi-square when every seat expects at least 5 wins, else the exact multinomial test (whole
    wins only; with shared wins and fewer games no test is made and ``p_value`` is null).
    """
    n = w.players
    wins = w.win.sum(axis=0)
    p, method = stats.small_sample_gof(wins, [1.0] * n)
    stat, df = math.nan, 0
    if method == stats.CHI_SQUARE_GOF:
        stat, df, _ = stats.chisquare_gof(wins, [1.0] * n)
    return {"method": method, "statistic": stat, "df": df, "p_value": p}


def first_player_advantage(balance: pd.DataFrame) -> dict[str, Any]:
    """Seat 0's win share minus 1/n, with the interval of that share shifted by 1/n."""
    if balance.empty:
        return {"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "p_value": math.nan}
    row = balance.iloc[0]
    e = float(row["expected"])
    return {
        "estimate": float(row["win_share"]) - e,
        "ci_low": float(row["ci_low"]) - e,
        "ci_high": float(row["ci_high"]) - e,
        "p_value": float(row["p_value"]),
        "interval": str(row["interval"]),
    }
