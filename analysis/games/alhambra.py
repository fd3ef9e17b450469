"""Alhambra: seat advantage by turn position, points by scoring round and source, tiles by type.

Works from each match's ``stats()``: ``per_seat`` dicts with ``turn_position`` (0 = the
starting player, who is not necessarily seat 0: decision H2, docs/rules/alhambra.md),
``rounds`` (three dicts of ``majorities`` and ``walls`` points), ``tiles_by_type`` (Alhambra)
and ``reserve_by_type``, ``longest_wall``, ``money_left`` and ``exact_purchases``; per match
``scorings`` (the scorings held) and ``missed_scorings`` (the scoring cards never drawn:
skipped under the literal rule, scored just before the final scoring under
``missed_scoring=before_final``; matches stored before it was kept played the literal rule, so
theirs is 3 − ``scorings``; None for a game cut off before its end, which the share leaves
out); and, in two-player games, ``collector`` with its ``points`` and ``rounds``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis import frames, stats
from analysis.formatting import TextTable, num, pct, span
from analysis.games import GameReport
from analysis.tidy import Wide
from engines.alhambra.flow import SKIP
from engines.alhambra.tiles import TYPES

ROUNDS = 3
SOURCES = ("majorities", "walls")
SEAT_FIGURES = ("longest_wall", "money_left", "exact_purchases")


@dataclass(frozen=True)
class AlhambraData:
    """Per-match, per-seat arrays aligned with a ``Wide`` (row m is ``wide.match_index[m]``)."""

    position: np.ndarray  # (M, n) turn position of each seat
    points: np.ndarray  # (M, n, 3 rounds, 2 sources)
    tiles: np.ndarray  # (M, n, 6) Alhambra tiles by type
    reserve: np.ndarray  # (M, n, 6)
    figures: np.ndarray  # (M, n, 3): longest wall, money left, exact purchases
    collector: np.ndarray  # (M, 4): collector points in rounds 1–3 and in all; nan when none
    rows: np.ndarray  # (M,) row of the Wide each match belongs to
    missed: np.ndarray  # (M,) scoring cards never drawn; nan when the stats do not say


def parse_stats(match_stats: pd.DataFrame, w: Wide) -> AlhambraData:
    """The Alhambra figures of the matches present in ``w``; matches without usable stats are
    skipped."""
    pos = {int(mi): r for r, mi in enumerate(w.match_index)}
    entries: list[tuple[int, Mapping[str, Any]]] = []
    for mi, st in zip(match_stats["match_index"], match_stats["stats"], strict=True):
        row = pos.get(int(mi))
        if row is None or not isinstance(st, Mapping):
            continue
        per_seat = st.get("per_seat")
        if isinstance(per_seat, list) and len(per_seat) == w.players:
            entries.append((row, st))
    m, n = len(entries), w.players
    out = AlhambraData(
        position=np.zeros((m, n), np.int64),
        points=np.zeros((m, n, ROUNDS, len(SOURCES))),
        tiles=np.zeros((m, n, len(TYPES))),
        reserve=np.zeros((m, n, len(TYPES))),
        figures=np.zeros((m, n, len(SEAT_FIGURES))),
        collector=np.full((m, ROUNDS + 1), math.nan),
        rows=np.array([row for row, _ in entries], np.int64),
        missed=np.array([_missed(st) for _, st in entries], float),
    )
    for i, (_, st) in enumerate(entries):
        for s, seat in enumerate(st["per_seat"]):
            out.position[i, s] = int(seat.get("turn_position", s))
            for r, rnd in enumerate(seat.get("rounds", [])[:ROUNDS]):
                out.points[i, s, r] = [rnd.get(src, 0) for src in SOURCES]
            out.tiles[i, s] = [seat.get("tiles_by_type", {}).get(t, 0) for t in TYPES]
            out.reserve[i, s] = [seat.get("reserve_by_type", {}).get(t, 0) for t in TYPES]
            out.figures[i, s] = [seat.get(f, 0) for f in SEAT_FIGURES]
        collector = st.get("collector")
        if isinstance(collector, Mapping):
            rounds = list(collector.get("rounds", []))[:ROUNDS]
            out.collector[i, : len(rounds)] = rounds
            out.collector[i, ROUNDS] = collector.get("points", sum(rounds))
    return out


def _missed(st: Mapping[str, Any]) -> float:
    if "missed_scorings" in st:  # None: a game cut off (ply cap) before its end
        missed = st["missed_scorings"]
        return float(missed) if isinstance(missed, int | float) else math.nan
    held = st.get("scorings")
    return float(ROUNDS - held) if isinstance(held, int | float) else math.nan


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else math.nan


def by_position(d: AlhambraData, w: Wide) -> list[dict[str, Any]]:
    """Per turn position: games, win share with its 95 % interval over units of sampling
    (``stats.share_from_sums``), expected 1/n, mean points."""
    win = w.win[d.rows] if d.rows.size else np.zeros((0, w.players))
    pts = w.points[d.rows] if d.rows.size else np.zeros((0, w.players))
    unit = w.unit[d.rows] if d.rows.size else np.zeros(0, np.int64)
    out = []
    for p in range(w.players):
        mask = d.position == p
        rows = np.nonzero(mask)[0]  # the match of each seat holding position p
        share = stats.share_from_sums(stats.unit_sums(win[mask], unit[rows]))
        out.append(
            {
                "position": p,
                "games": int(mask.sum()),
                "win_share": share.estimate,
                "ci_low": share.ci_low,
                "ci_high": share.ci_high,
                "interval": share.interval,
                "expected": 1.0 / w.players,
                "mean_points": _mean(pts[mask]),
            }
        )
    return out


def start_advantage(d: AlhambraData, w: Wide) -> dict[str, float]:
    """The starting player's win share minus 1/n, with the interval of that share."""
    start = by_position(d, w)[0] if d.rows.size else None
    if start is None:
        return {"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    e = 1.0 / w.players
    return {
        "estimate": start["win_share"] - e,
        "ci_low": start["ci_low"] - e,
        "ci_high": start["ci_high"] - e,
    }


def _round_rows(d: AlhambraData, groups: list[tuple[Any, np.ndarray]], key: str) -> list[dict]:
    """Mean majority and wall points per scoring round for each group of seat cells."""
    out = []
    for name, mask in groups:
        cells = d.points[mask]  # (K, 3, 2)
        for r in range(ROUNDS):
            row = {key: name, "round": r + 1, "seats": int(cells.shape[0])}
            for k, src in enumerate(SOURCES):
                row[src] = _mean(cells[:, r, k])
            out.append(row)
    return out


def _agent_groups(d: AlhambraData, w: Wide) -> list[tuple[Any, np.ndarray]]:
    seats_of = w.agent[d.rows] if d.rows.size else np.zeros((0, w.players), np.int64)
    return [(w.labels[a], seats_of == a) for a in np.unique(seats_of)]


def tiles_by_agent(d: AlhambraData, w: Wide) -> list[dict[str, Any]]:
    """Per agent: mean Alhambra tiles of each type, reserve size, longest wall, money left,
    exact purchases per game."""
    out = []
    for name, mask in _agent_groups(d, w):
        row: dict[str, Any] = {"agent": name, "seats": int(mask.sum())}
        for t, kind in enumerate(TYPES):
            row[kind] = _mean(d.tiles[mask][:, t])
        row["reserve"] = _mean(d.reserve[mask].sum(axis=1))
        for f, figure in enumerate(SEAT_FIGURES):
            row[figure] = _mean(d.figures[mask][:, f])
        out.append(row)
    return out


def _units(d: AlhambraData, w: Wide) -> np.ndarray:
    """The unit of sampling of each parsed match (``analysis.units``)."""
    return w.unit[d.rows] if d.rows.size else np.zeros(0, np.int64)


def collector_points(d: AlhambraData, w: Wide) -> dict[str, Any] | None:
    """The two-player collector's points: mean per round and in all, with a t interval over
    units of sampling (``stats.clustered_mean``)."""
    known = ~np.isnan(d.collector[:, ROUNDS])
    if not known.any():
        return None
    values = d.collector[known]
    mean = stats.clustered_mean(values[:, ROUNDS], _units(d, w)[known])
    return {
        "matches": int(values.shape[0]),
        "mean_points": mean.estimate,
        "ci_low": mean.ci_low,
        "ci_high": mean.ci_high,
        "rounds": [float(values[:, r].mean()) for r in range(ROUNDS)],
    }


def short_games(d: AlhambraData, w: Wide) -> dict[str, Any]:
    """Games that ended before every scoring card was drawn — fewer than three scorings under
    the literal rule (decision H7, docs/rules/alhambra.md) — for this batch's player count: the
    count, the share with its 95 %
    interval over units of sampling (``stats.share_from_sums``), and how many scoring cards
    were never drawn in all."""
    sums = _ended_short(d, w)
    share = stats.share_from_sums(sums)
    return {
        "players": w.players,
        "matches": sums.matches,
        "short": round(sums.total),
        "share": share.estimate,
        "ci_low": share.ci_low,
        "ci_high": share.ci_high,
        "interval": share.interval,
        "missed_cards": int(np.nansum(d.missed)),
    }


def _ended_short(d: AlhambraData, w: Wide) -> stats.UnitSums:
    """1 for each match that ended with a scoring card never drawn, 0 for the others (matches
    whose stats do not say are left out), summed over units of sampling."""
    known = ~np.isnan(d.missed)
    return stats.unit_sums((d.missed[known] > 0).astype(float), _units(d, w)[known])


def alhambra_section(
    match_stats: pd.DataFrame, w: Wide, missed_scoring: str = SKIP
) -> dict[str, Any]:
    """The whole Alhambra section of a report (``missed_scoring``: the batch's option)."""
    d = parse_stats(match_stats, w)
    positions = [(p, d.position == p) for p in range(w.players)]
    return {
        "name": "alhambra",
        "matches": int(d.rows.size),
        "turn_positions": by_position(d, w),
        "start_advantage": start_advantage(d, w),
        "rounds_by_position": _round_rows(d, positions, "position"),
        "rounds_by_agent": _round_rows(d, _agent_groups(d, w), "agent"),
        "tiles_by_agent": tiles_by_agent(d, w),
        "collector": collector_points(d, w),
        "short_games": {**short_games(d, w), "missed_scoring": missed_scoring},
    }


# --------------------------------------------------------------------------- the report


def build(engine: Engine, batch: Any, w: Wide) -> dict[str, Any] | None:
    """The section of a stored batch (None before any match is played)."""
    if not w.matches:
        return None
    option = (batch.options or {}).get("missed_scoring", SKIP)
    return alhambra_section(frames.match_stats(engine, batch.id), w, option)


def shares(engine: Engine, batch: Any, w: Wide) -> dict[str, stats.UnitSums]:
    """Per-match shares ``compare`` sets side by side: the games that ended before every
    scoring card was drawn."""
    return {SHORT_FIGURE: _ended_short(parse_stats(frames.match_stats(engine, batch.id), w), w)}


SHORT_FIGURE = "ended with a scoring card never drawn"
"""Under the literal rule (``missed_scoring=skip``): fewer than three scorings."""


def _position_name(p: int) -> str:
    return "start" if p == 0 else f"+{p}"


def tables(g: Mapping[str, Any]) -> list[TextTable]:
    """Win share by turn position, points per round by position and by agent, tiles by type,
    and the collector in two-player games."""
    adv = g["start_advantage"]
    out = [
        TextTable(
            "Win share by turn position (0 = starting player)",
            ("position", "games", "win share", "95% CI", "expected", "mean points"),
            [
                [
                    _position_name(t["position"]),
                    num(t["games"], 0),
                    pct(t["win_share"]),
                    span(t["ci_low"], t["ci_high"]),
                    pct(t["expected"]),
                    num(t["mean_points"]),
                ]
                for t in g["turn_positions"]
            ],
            css_class="turn-positions",
            note=(
                f"starting player's advantage {pct(adv['estimate'])} "
                f"(95% CI {span(adv['ci_low'], adv['ci_high'])})"
            ),
        ),
    ]
    for key, label in (("position", "turn position"), ("agent", "agent")):
        rows = g[f"rounds_by_{key}"]
        out.append(
            TextTable(
                f"Points per scoring round by {label}: majorities + walls",
                (key, "round", "majorities", "walls"),
                [
                    [
                        _position_name(r[key]) if key == "position" else str(r[key]),
                        str(r["round"]),
                        num(r["majorities"]),
                        num(r["walls"]),
                    ]
                    for r in rows
                ],
                css_class=f"rounds-{key}",
            )
        )
    out.append(
        TextTable(
            "Tiles by type in the Alhambra at the end, per agent",
            ("agent", *TYPES),
            [[str(t["agent"]), *(num(t[k]) for k in TYPES)] for t in g["tiles_by_agent"]],
            css_class="tiles",
        )
    )
    out.append(
        TextTable(
            "At the end, per agent",
            ("agent", "reserve tiles", "longest wall", "money left", "exact purchases"),
            [
                [
                    str(t["agent"]),
                    num(t["reserve"]),
                    num(t["longest_wall"]),
                    num(t["money_left"]),
                    num(t["exact_purchases"]),
                ]
                for t in g["tiles_by_agent"]
            ],
            css_class="seat-figures",
        )
    )
    short = g.get("short_games")
    if short:
        late = short.get("missed_scoring") != SKIP
        out.append(
            TextTable(
                "Games that ended before every scoring card was drawn",
                ("players", "matches", "ended short", "share", "95% CI", "cards never drawn"),
                [
                    [
                        num(short["players"], 0),
                        num(short["matches"], 0),
                        num(short["short"], 0),
                        pct(short["share"]),
                        span(short["ci_low"], short["ci_high"]),
                        num(short["missed_cards"], 0),
                    ]
                ],
                css_class="short-games",
                note=(
                    "missed_scoring=before_final: each card never drawn was scored just before "
                    "the final scoring"
                    if late
                    else "missed_scoring=skip (the literal rule): these games had fewer than "
                    "three scorings"
                ),
            )
        )
    collector = g.get("collector")
    if collector:
        out.append(
            TextTable(
                "The two-player collector",
                ("matches", "mean points", "95% CI", "round 1", "round 2", "round 3"),
                [
                    [
                        num(collector["matches"], 0),
                        num(collector["mean_points"]),
                        span(collector["ci_low"], collector["ci_high"], num),
                        *(num(v) for v in collector["rounds"]),
                    ]
                ],
                css_class="collector",
            )
        )
    return out


REPORT = GameReport(
    name="alhambra",
    title="Alhambra: turn position, scoring rounds, tiles",
    build=build,
    tables=tables,
    shares=shares,
)
