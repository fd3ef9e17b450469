"""Seat balance: how each seat and each turn position fares, and the first player's advantage.

Every figure counts units of sampling (``Wide.unit``, see ``analysis.units``), not matches: a
batch of forty matches that replay one opening is one observation. ``seat_balance_wide``
returns one row per seat (or, on ``by_turn(w)`` with ``label="position"``, per turn position,
0 = the player who moved first) with the columns

- ``seat`` (or ``position``), ``games``, ``win_share`` (mean of ``returns()``: shared wins split),
- ``ci_low``, ``ci_high``: 95 % interval (``analysis.stats.share_from_sums``): exact
  Clopper–Pearson when the matches are independent whole wins, otherwise design-adjusted over
  units (Korn–Graubard); the whole range [0, 1] with one unit; ``interval`` says which,
- ``units``, ``effective_n``: units behind the figure and matches / design effect,
- ``expected`` (1/n), ``p_value`` and ``test``: the test the interval inverts (exact binomial
  for independent whole wins, else the exact test at the effective size; null with one unit),
  so p < 0.05 exactly when 1/n lies outside the interval; ``p_holm``: Holm-adjusted over the
  seats (two players: one hypothesis, so equal to ``p_value``),
- ``mean_points``, ``points_ci_low``, ``points_ci_high`` (t interval over units; null for one
  unit or when every match scored the same),
- ``joint_ci_low``, ``joint_ci_high``: the seats' simultaneous 95 % intervals (each at
  ``joint_confidence``: Bonferroni over the seats, so all seats' intervals hold together in 95 %
  of batches; with two seats the ``ci`` ones, which already do). Each ``ci`` interval alone is
  95 %, but with four seats some seat's misses more often than 5 % of batches.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from analysis import stats
from analysis.tidy import Wide, is_binary, to_wide

BALANCE_COLUMNS = (
    "seat", "games", "win_share", "ci_low", "ci_high", "interval", "units", "effective_n",
    "expected", "p_value", "p_holm", "test", "mean_points", "points_ci_low", "points_ci_high",
    "joint_ci_low", "joint_ci_high",
)  # fmt: skip


def joint_confidence(players: int) -> float:
    """The level of each seat's interval that makes the seats' intervals simultaneous at 95 %
    (Bonferroni over the seats: 1 − 0.05 / n). Two seats' shares sum to one, so their two
    intervals stand or fall together and keep the 95 % level."""
    return stats.CONFIDENCE if players <= 2 else 1 - (1 - stats.CONFIDENCE) / players


def seat_balance(seat_results_df: pd.DataFrame, players: int) -> pd.DataFrame:
    """Per-seat win shares with intervals and tests (columns in ``BALANCE_COLUMNS``)."""
    return seat_balance_wide(to_wide(seat_results_df, players))


def independent(w: Wide) -> bool:
    """True when every match is its own unit of sampling."""
    return np.unique(w.unit).size == w.matches


def seat_share(w: Wide, seat: int) -> stats.UnitMean:
    """Column ``seat``'s mean win share with its interval over units."""
    return stats.share_from_sums(stats.unit_sums(w.win[:, seat], w.unit))


def _seat_p(w: Wide, share: stats.UnitMean) -> tuple[float, str]:
    """The p-value of a share of 1/n from the test its interval inverts (``stats.share_test``),
    so the two never disagree on significance (a sign test on the decisive games would leave
    the draws out that the interval counts as half a win)."""
    if share.units < 2:
        return (math.nan, stats.ONE_UNIT)
    p = stats.share_test(share, 1.0 / w.players)
    if share.interval == "clopper-pearson":
        return (p, "exact binomial test (this seat vs the rest), the one its interval inverts")
    return (p, f"exact test at the effective size (design-adjusted over {share.units} units)")


def seat_balance_wide(w: Wide, label: str = "seat") -> pd.DataFrame:
    """``seat_balance`` on already pivoted results; ``label`` names the first column."""
    n, m = w.players, w.matches
    rows: list[dict[str, Any]] = []
    for s in range(n):
        share = seat_share(w, s)
        p, test = _seat_p(w, share)
        pts = stats.clustered_mean(w.points[:, s], w.unit)
        joint = share if n <= 2 else stats.share_from_sums(
            stats.unit_sums(w.win[:, s], w.unit), joint_confidence(n))  # fmt: skip
        rows.append(
            {
                "seat": s,
                "games": m,
                "win_share": share.estimate,
                "ci_low": share.ci_low,
                "ci_high": share.ci_high,
                "interval": share.interval,
                "units": share.units,
                "effective_n": share.effective_n,
                "expected": 1.0 / n,
                "p_value": p,
                "p_holm": p,
                "test": test,
                "mean_points": pts.estimate,
                "points_ci_low": pts.ci_low,
                "points_ci_high": pts.ci_high,
                "joint_ci_low": joint.ci_low,
                "joint_ci_high": joint.ci_high,
            }
        )
    if n > 2:
        for row, adjusted in zip(rows, stats.holm([r["p_value"] for r in rows]), strict=True):
            row["p_holm"] = adjusted
    frame = pd.DataFrame(rows, columns=list(BALANCE_COLUMNS))
    return frame.rename(columns={"seat": label}) if label != "seat" else frame


def is_decisive(win: np.ndarray) -> np.ndarray:
    """Rows where one seat took the whole win."""
    return np.asarray((win == 1).any(axis=1))


def seat_test(w: Wide) -> dict[str, Any]:
    """Goodness of fit of the seats' wins against equal shares, all seats at once.

    Independent matches with whole wins: chi-square when every seat expects at least 5 wins,
    else the exact multinomial test. Otherwise (units of several matches, or shared wins) the
    first-order Rao–Scott correction: Pearson's statistic divided by the mean design effect of
    the seat shares, referred to F(n − 1, (n − 1)·df) with df = ``stats.unit_df`` (G − 2 for G
    units of one size); no test with one unit.
    """
    n, m = w.players, w.matches
    wins = w.win.sum(axis=0)
    if m and independent(w) and is_binary(w.win):
        p, method = stats.small_sample_gof(wins, [1.0] * n)
        stat, df = math.nan, 0
        if method == stats.CHI_SQUARE_GOF:
            stat, df, _ = stats.chisquare_gof(wins, [1.0] * n)
        return {"method": method, "statistic": stat, "df": df, "p_value": p}
    units = int(np.unique(w.unit).size)
    if m == 0 or units < 2 or n < 2:
        reason = "none: no games" if m == 0 else stats.ONE_UNIT
        return {"method": reason, "statistic": math.nan, "df": 0, "p_value": math.nan}
    p0 = 1.0 / n
    null_variance = p0 * (1 - p0) / m
    effects = []
    for s in range(n):
        share = seat_share(w, s)
        variance = share.variance if share.variance > 0 else p0 * (1 - p0) / units
        effects.append(variance / null_variance)
    delta = float(np.mean(effects))
    pearson = m * float(((wins / m - p0) ** 2).sum()) / p0
    f = pearson / delta / (n - 1)
    df2 = (n - 1) * stats.unit_df(stats.unit_sums(w.win[:, 0], w.unit))
    return {
        "method": f"Rao–Scott corrected chi-square (mean design effect {delta:.2f}, {units} units)",
        "statistic": f,
        "df": n - 1,
        "df_denominator": df2,
        "p_value": float(sps.f.sf(f, n - 1, df2)),
    }


BALANCE_NOTE = (
    "Ludii's balance, 1 − (largest − smallest seat win share), is biased low: sampling noise "
    "only widens the gap between the best and worst seat, so even a perfectly fair game scores "
    "below 1 (balance_if_fair: its mean for a fair game with as many independent matches as "
    "this batch is worth). The interval is what the data allow: an upper end of 1 means a "
    "perfectly fair game is consistent with them"
)
FAIR_BALANCE_SEED = 20_260_118
FAIR_BALANCE_DRAWS = 4_000


def fair_balance(w: Wide) -> float:
    """Mean Ludii balance of a perfectly fair game (whole wins, 1/n each) over as many
    independent matches as ``w`` is worth (the starting seat's effective sample size): the
    bias of the metric at this size. Seeded, so a report never changes between reads."""
    if w.matches == 0 or w.players < 2:
        return math.nan
    return _fair_balance(w.players, max(1, round(seat_share(w, 0).effective_n)))


@functools.lru_cache(maxsize=256)
def _fair_balance(players: int, size: int) -> float:
    rng = np.random.default_rng(FAIR_BALANCE_SEED)
    draws = rng.multinomial(size, [1.0 / players] * players, size=FAIR_BALANCE_DRAWS) / size
    return float(1 - (draws.max(axis=1) - draws.min(axis=1)).mean())


def balance_interval(w: Wide) -> tuple[float, float]:
    """95 % interval of Ludii's balance, 1 − (max − min) of the seats' true win shares.

    From simultaneous seat intervals over units: with two seats the shares are one figure
    (they sum to 1), so seat 0's interval maps straight onto the gap; with more, Bonferroni
    intervals at 1 − 0.05/n bound every seat at once, and the gap lies between the largest
    lower end minus the smallest upper end (at least 0) and the largest upper end minus the
    smallest lower end. Analytic, so no resampling and no seed.
    """
    n = w.players
    if w.matches == 0 or n < 2:
        return (math.nan, math.nan)
    sums = [stats.unit_sums(w.win[:, s], w.unit) for s in range(n)]
    if n == 2 and np.allclose(w.win.sum(axis=1), 1.0):
        share = stats.share_from_sums(sums[0])
        ends = sorted(abs(2 * x - 1) for x in (share.ci_low, share.ci_high))
        low_gap = 0.0 if share.ci_low <= 0.5 <= share.ci_high else ends[0]
        return (1 - ends[1], 1 - low_gap)
    level = 1 - (1 - stats.CONFIDENCE) / n
    bounds = [stats.share_from_sums(s, level) for s in sums]
    lows = np.array([b.ci_low for b in bounds])
    highs = np.array([b.ci_high for b in bounds])
    gap_low = max(0.0, float(lows.max() - highs.min()))
    gap_high = min(1.0, float(highs.max() - lows.min()))
    return (1 - gap_high, 1 - gap_low)


def first_player_advantage(positions: pd.DataFrame) -> dict[str, Any]:
    """The starting player's win share minus 1/n, from the first row of a turn-position (or,
    where turn order is seat order, seat) table, with that share's interval shifted by 1/n."""
    if positions.empty:
        return {"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "p_value": math.nan}
    row = positions.iloc[0]
    e = float(row["expected"])
    return {
        "estimate": float(row["win_share"]) - e,
        "ci_low": float(row["ci_low"]) - e,
        "ci_high": float(row["ci_high"]) - e,
        "p_value": float(row["p_value"]),
        "interval": str(row["interval"]),
        "units": int(row["units"]),
        "effective_n": float(row["effective_n"]),
        "by": "turn position 0 (the seat that moved first)",
    }


def decided_games(turn: Wide, draw_endings: pd.DataFrame) -> dict[str, Any]:
    """Decided games apart from the rest, on a turn-ordered ``turn`` (``tidy.by_turn``).

    A game is decided when one seat took the whole win. ``draws_by_ending`` counts the others
    by how they ended (``draw_endings``: columns ``ended_by``, ``count``, over matches where no
    seat took the whole win), so a game whose draws are truncations at a move limit says so.
    ``first_player`` is the starting player's share of the decided games minus 1/n, with its
    interval and test over the units those games belong to, as every seat figure's.
    """
    m = turn.matches
    sole = np.any(turn.win == 1, axis=1) if m else np.zeros(0, bool)
    decided = int(sole.sum())
    draws = {
        str(k): int(v)
        for k, v in zip(draw_endings["ended_by"], draw_endings["count"], strict=True)
        if int(v) > 0
    }
    fair = 1 / turn.players
    first: dict[str, Any] = {
        "estimate": math.nan,
        "ci_low": math.nan,
        "ci_high": math.nan,
        "p_value": math.nan,
        "wins": 0,
    }
    if decided:
        share = stats.clustered_share(turn.win[sole, 0], turn.unit[sole])
        first = {
            "estimate": share.estimate - fair,
            "ci_low": share.ci_low - fair,
            "ci_high": share.ci_high - fair,
            "p_value": stats.share_test(share, fair),
            "interval": share.interval,
            "units": share.units,
            "effective_n": share.effective_n,
            "wins": int(turn.win[sole, 0].sum()),
        }
    return {
        "matches": m,
        "decided": decided,
        "draws_by_ending": dict(sorted(draws.items(), key=lambda kv: (-kv[1], kv[0]))),
        "first_player": first,
    }
