"""Abalone: marbles pushed off by seat and by agent, how games ended, game length by layout.

Every interval counts the batch's units of sampling (``Wide.unit``), as the generic figures do.

Works from each match's ``stats()``: ``plies`` (plies of play, placements not counted),
``layout``, ``ended_by`` and ``per_seat`` dicts with ``pushed_off``, ``lost``, ``inline``,
``broadside``, ``pushes`` and ``ejections``. A match cut by the batch's own ply cap
(``max_plies``) before the game ended has ``ended_by`` null in its stats and counts as drawn by
that cap, apart from the game's own move limit (``move_limit``): rows stored before the cap had
its own ending read the same way, since their stats say which it was.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis import frames, stats
from analysis.formatting import TextTable, num, pct, span
from analysis.games import GameReport
from analysis.tidy import Wide
from engines.core import Ending

COUNTERS = ("pushed_off", "lost", "inline", "broadside", "pushes", "ejections")
ENDINGS: dict[str, str] = {
    Ending.NORMAL: "decided",
    Ending.MOVE_LIMIT: "drawn: move limit",
    Ending.REPETITION: "drawn: repetition",
    Ending.NO_MOVE: "drawn: no legal move (3 players)",
    Ending.MAX_PLIES: "drawn: batch ply cap (max_plies)",
}
OTHER_ENDINGS: dict[str, str] = {Ending.TIME: "decided: lost on time (clocks)"}
"""Endings shown only when some match ended so."""


def _not_by_rules(ended_by: Any) -> str:
    """How a match the rules did not end ended: on time, else at the batch's ply cap (rows
    stored before ``max_plies`` existed say ``move_limit`` for that)."""
    return Ending.TIME if ended_by == Ending.TIME else Ending.MAX_PLIES


def _parse(match_stats: pd.DataFrame, w: Wide) -> tuple[np.ndarray, np.ndarray, list[dict]]:
    """(rows of ``w``, per-seat counters (M, n, 6), per-match dicts) of usable stats."""
    pos = {int(mi): r for r, mi in enumerate(w.match_index)}
    rows: list[int] = []
    counters: list[list[list[float]]] = []
    games: list[dict] = []
    ended = match_stats["ended_by"] if "ended_by" in match_stats else [None] * len(match_stats)
    for mi, st, how in zip(match_stats["match_index"], match_stats["stats"], ended, strict=True):
        row = pos.get(int(mi))
        if row is None or not isinstance(st, Mapping):
            continue
        per_seat = st.get("per_seat")
        if not isinstance(per_seat, list) or len(per_seat) != w.players:
            continue
        rows.append(row)
        counters.append([[float(seat.get(c, 0)) for c in COUNTERS] for seat in per_seat])
        games.append(
            {
                "plies": int(st.get("plies", 0)),
                "layout": str(st.get("layout", "?")),
                "ended_by": st.get("ended_by") or _not_by_rules(how),
            }
        )
    shape = (len(rows), w.players, len(COUNTERS))
    return np.array(rows, dtype=np.int64), np.array(counters).reshape(shape), games


def _mean_row(values: np.ndarray, unit: np.ndarray) -> dict[str, Any]:
    """Mean of each counter over the (K, 6) cells, with the pushed-off mean's interval over the
    cells' units of sampling ``unit`` (K,) (``stats.clustered_mean``)."""
    out: dict[str, Any] = {"seats": int(values.shape[0])}
    for i, name in enumerate(COUNTERS):
        out[name] = float(values[:, i].mean()) if values.size else math.nan
    mean = stats.clustered_mean(values[:, 0], unit)
    out["pushed_off_ci_low"], out["pushed_off_ci_high"] = mean.ci_low, mean.ci_high
    return out


def _share(hits: np.ndarray, unit: np.ndarray) -> tuple[float, float]:
    """The interval of a share of games over their units (``stats.clustered_share``)."""
    if not hits.size:
        return (math.nan, math.nan)
    share = stats.clustered_share(hits.astype(float), unit)
    return (share.ci_low, share.ci_high)


def endings(
    games: list[dict], winners_pushed: np.ndarray, goal: int | None, unit: np.ndarray | None = None
) -> dict[str, Any]:
    """Share of games decided and drawn by each cause, with intervals over the games' units of
    sampling ``unit`` (one per game; None: each game its own); and the share decided by pushing
    off ``goal`` marbles (the rest of the decided games ended because the player to move had no
    legal move)."""
    total = len(games)
    unit = np.arange(total) if unit is None else np.asarray(unit)
    ended = np.array([g["ended_by"] for g in games], dtype=object)
    counts: dict[str, int] = {}
    for g in games:
        counts[g["ended_by"]] = counts.get(g["ended_by"], 0) + 1
    rows = []
    for key in [*ENDINGS, *sorted(set(counts) - set(ENDINGS))]:
        k = counts.get(key, 0)
        lo, hi = _share(ended == key, unit)
        rows.append(
            {
                "ended_by": key,
                "label": ENDINGS.get(key, OTHER_ENDINGS.get(key, key)),
                "games": k,
                "share": k / total if total else math.nan,
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    won_by_pushing = winners_pushed >= goal if goal is not None else np.zeros(total, bool)
    pushed = int(won_by_pushing.sum())
    lo, hi = _share(won_by_pushing, unit)
    return {
        "games": total,
        "by_cause": rows,
        "pushed_off_to_win": {
            "games": pushed,
            "share": pushed / total if total else math.nan,
            "ci_low": lo,
            "ci_high": hi,
        },
    }


def lengths(games: list[dict]) -> list[dict[str, Any]]:
    """Plies of play per layout: games, mean, median, 10th and 90th percentiles."""
    out = []
    for layout in sorted({g["layout"] for g in games}):
        plies = np.array([g["plies"] for g in games if g["layout"] == layout], dtype=float)
        out.append(
            {
                "layout": layout,
                "games": int(plies.size),
                "mean": float(plies.mean()),
                "median": float(np.median(plies)),
                "p10": float(np.percentile(plies, 10)),
                "p90": float(np.percentile(plies, 90)),
            }
        )
    return out


def abalone_section(match_stats: pd.DataFrame, w: Wide, goal: int | None = 6) -> dict[str, Any]:
    """The whole Abalone section of a report; ``goal`` is the batch's ``marbles_to_win``."""
    rows, counters, games = _parse(match_stats, w)
    n = w.players
    seats_of = w.agent[rows] if rows.size else np.zeros((0, n), np.int64)
    unit = w.unit[rows] if rows.size else np.zeros(0, np.int64)
    cell_unit = np.broadcast_to(unit[:, None], seats_of.shape)
    by_seat = [{"seat": s, **_mean_row(counters[:, s, :], unit)} for s in range(n)]
    by_agent = [
        {"agent": w.labels[a], **_mean_row(counters[seats_of == a], cell_unit[seats_of == a])}
        for a in np.unique(seats_of)
    ]
    wins = w.win[rows] if rows.size else np.zeros((0, n))
    winner = np.where(wins.max(axis=1, initial=0) == 1.0, wins.argmax(axis=1), -1)
    pushed = counters[:, :, 0] if rows.size else np.zeros((0, n))
    winners_pushed = np.where(
        winner >= 0, pushed[np.arange(len(winner)), np.clip(winner, 0, n - 1)], -1
    )
    return {
        "name": "abalone",
        "matches": int(rows.size),
        "marbles_to_win": goal,
        "marbles_by_seat": by_seat,
        "marbles_by_agent": by_agent,
        "endings": endings(games, winners_pushed, goal, unit),
        "length_by_layout": lengths(games),
    }


# --------------------------------------------------------------------------- the report


def build(engine: Engine, batch: Any, w: Wide) -> dict[str, Any] | None:
    """The section of a stored batch (None before any match is played)."""
    if not w.matches:
        return None
    options = batch.options if isinstance(batch.options, Mapping) else {}
    goal = options.get("marbles_to_win", 6)
    return abalone_section(frames.match_stats(engine, batch.id), w, int(goal))


def tables(g: Mapping[str, Any]) -> list[TextTable]:
    """Marbles by seat and by agent, how games ended, game length by layout."""

    def marble_rows(items: list[Mapping[str, Any]], key: str) -> list[list[str]]:
        return [
            [
                str(r[key]),
                num(r["pushed_off"], 2),
                span(r["pushed_off_ci_low"], r["pushed_off_ci_high"], lambda v: num(v, 2)),
                num(r["lost"], 2),
                num(r["pushes"], 1),
                num(r["ejections"], 2),
                num(r["broadside"], 1),
            ]
            for r in items
        ]

    columns = ("pushed off", "95% CI", "lost", "pushes", "ejections", "broadside moves")
    push_win = g["endings"]["pushed_off_to_win"]
    return [
        TextTable(
            "Marbles pushed off per game, by seat",
            ("seat", *columns),
            marble_rows(g["marbles_by_seat"], "seat"),
            css_class="marbles-seat",
        ),
        TextTable(
            "Marbles pushed off per game, by agent",
            ("agent", *columns),
            marble_rows(g["marbles_by_agent"], "agent"),
            css_class="marbles-agent",
        ),
        TextTable(
            "How games ended",
            ("ending", "games", "share", "95% CI"),
            [
                [e["label"], num(e["games"]), pct(e["share"]), span(e["ci_low"], e["ci_high"])]
                for e in g["endings"]["by_cause"]
            ],
            note=(
                f"won by pushing off {g['marbles_to_win']}: {num(push_win['games'])} games, "
                f"{pct(push_win['share'])} ({span(push_win['ci_low'], push_win['ci_high'])})"
            ),
            css_class="endings",
        ),
        TextTable(
            "Game length (plies of play) by layout",
            ("layout", "games", "mean", "median", "p10", "p90"),
            [
                [
                    str(r["layout"]),
                    num(r["games"]),
                    num(r["mean"]),
                    num(r["median"]),
                    num(r["p10"]),
                    num(r["p90"]),
                ]
                for r in g["length_by_layout"]
            ],
            css_class="lengths",
        ),
    ]


REPORT = GameReport(
    name="abalone",
    title="Abalone: marbles pushed off, endings, length",
    build=build,
    tables=tables,
)
