"""Game shape: draws, length distribution, how games ended, and Ludii's balance metric."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from analysis import stats
from analysis.seats import BALANCE_NOTE, balance_interval, fair_balance
from analysis.tidy import Wide

HISTOGRAM_BINS = 30


def plies_summary(plies: pd.DataFrame, bins: int = HISTOGRAM_BINS) -> dict[str, Any]:
    """Mean, median, p10, p90 and a histogram of match lengths.

    ``plies`` has one row per distinct length: columns ``plies`` and ``count`` (aggregated in
    SQL, so a million matches cost a few hundred rows here). The histogram has integer-aligned
    edges; ``counts[i]`` covers ``edges[i] <= plies < edges[i+1]`` (the last bin is closed).
    """
    values = plies["plies"].to_numpy(float)
    counts = plies["count"].to_numpy(np.int64)
    total = int(counts.sum())
    if total == 0:
        return {
            "mean": math.nan, "median": math.nan, "p10": math.nan, "p90": math.nan,
            "min": math.nan, "max": math.nan, "histogram": {"edges": [], "counts": []},
        }  # fmt: skip
    p10, median, p90 = stats.weighted_quantiles(values, counts, [0.1, 0.5, 0.9])
    lo, hi = float(values.min()), float(values.max())
    width = max(1.0, math.ceil((hi - lo + 1) / bins))
    edges = np.arange(lo, hi + width + 1e-9, width)
    if edges.size < 2:
        edges = np.array([lo, lo + 1.0])
    hist, _ = np.histogram(values, bins=edges, weights=counts)
    return {
        "mean": float((values * counts).sum() / total),
        "median": median,
        "p10": p10,
        "p90": p90,
        "min": lo,
        "max": hi,
        "histogram": {"edges": edges.tolist(), "counts": [int(c) for c in hist]},
    }


def game_shape(w: Wide, plies: pd.DataFrame, ended_by: pd.DataFrame) -> dict[str, Any]:
    """Shape of a batch's games.

    - ``draw_rate``: share of matches where every seat got the same win share, with
      ``draw_rate_ci_low`` / ``draw_rate_ci_high`` (95 %, over units of sampling);
    - ``shared_win_rate``: share where no seat took the whole win (equals the draw rate with two
      players);
    - ``completion``: share with a sole winner;
    - ``balance``: Ludii's metric, 1 − (largest − smallest seat win share), draws fractional,
      with ``balance_ci_low`` / ``balance_ci_high`` (``seats.balance_interval``),
      ``balance_if_fair`` (what a fair game of this size scores: the bias) and ``balance_note``;
    - ``plies``: see ``plies_summary``; ``ended_by``: counts by ending (``ended_by`` has columns
      ``ended_by`` and ``count``).
    """
    m = w.matches
    if m:
        full_draw = np.all(w.win == w.win[:, :1], axis=1)
        sole = np.any(w.win == 1, axis=1)
        shares = w.win.mean(axis=0)
        draw_rate = float(full_draw.mean())
        shared = float(1 - sole.mean())
        completion = float(sole.mean())
        balance = float(1 - (shares.max() - shares.min()))
        draw_ci = stats.clustered_share(full_draw.astype(float), w.unit)
        draw_lo, draw_hi = draw_ci.ci_low, draw_ci.ci_high
    else:
        draw_rate = shared = completion = balance = draw_lo = draw_hi = math.nan
    balance_lo, balance_hi = balance_interval(w)
    ended = {
        str(k): int(v)
        for k, v in zip(ended_by["ended_by"], ended_by["count"], strict=True)
        if int(v) > 0
    }
    return {
        "matches": m,
        "draw_rate": draw_rate,
        "draw_rate_ci_low": draw_lo,
        "draw_rate_ci_high": draw_hi,
        "shared_win_rate": shared,
        "completion": completion,
        "balance": balance,
        "balance_ci_low": balance_lo,
        "balance_ci_high": balance_hi,
        "balance_if_fair": fair_balance(w),
        "balance_note": BALANCE_NOTE,
        "plies": plies_summary(plies),
        "ended_by": dict(sorted(ended.items(), key=lambda kv: -kv[1])),
    }
