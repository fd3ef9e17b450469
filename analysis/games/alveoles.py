"""Les Alvéoles: square-value strategies, bonuses, tiers that decide games, ownership heat maps.

Works from each match's ``stats()`` (``per_seat`` dicts with ``points``, ``squares_by_value``
{"50": n, ...}, ``row_bonuses``/``column_bonuses``/``block_bonuses`` counts and ``replays``; and
``owners``, 64 characters a1..h1, a2..h2, ..., h8 naming the owner seat of each square).

Heat maps are 8 × 8 lists with ``heat[r][c]`` the probability for the square in column ``c``
(a = 0) and row ``r + 1``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis import frames, plots, stats
from analysis.clustered import clustered_difference
from analysis.formatting import TextTable, num, p_value, pct, span
from analysis.games import GameReport
from analysis.games.alveoles_exact import exact_section
from analysis.html_parts import figure, text_table
from analysis.tidy import Wide

BONUS_POINTS = 100
"""Points per row, column or 3 × 3 block bonus (docs/rules/alveoles.md, "End and score")."""
BONUS_KINDS = ("row", "column", "block")
SIDE = 8


@dataclass(frozen=True)
class AlveolesData:
    """Per-match, per-seat arrays aligned with a ``Wide`` (row m is ``wide.match_index[m]``)."""

    tiers: tuple[int, ...]  # descending square values
    squares: np.ndarray  # (M, n, T) squares taken per tier
    bonuses: np.ndarray  # (M, n, 3) row, column, block bonus counts
    replays: np.ndarray  # (M, n)
    owners: np.ndarray  # (M, 64) owner seat per square, -1 unclaimed
    rows: np.ndarray  # (M,) row of the Wide each match belongs to


def parse_stats(match_stats: pd.DataFrame, w: Wide) -> AlveolesData:
    """Collect the Alvéoles figures of the matches present in ``w`` from their stats dicts.

    ``match_stats`` has columns ``match_index`` and ``stats`` (a dict per match). Matches
    without usable stats are skipped.
    """
    pos = {int(mi): r for r, mi in enumerate(w.match_index)}
    entries: list[tuple[int, Mapping[str, Any]]] = []
    tier_set: set[int] = set()
    for mi, st in zip(match_stats["match_index"], match_stats["stats"], strict=True):
        row = pos.get(int(mi))
        if row is None or not isinstance(st, Mapping):
            continue
        per_seat = st.get("per_seat")
        if not isinstance(per_seat, list) or len(per_seat) != w.players:
            continue
        entries.append((row, st))
        for seat in per_seat:
            tier_set.update(int(k) for k in seat.get("squares_by_value", {}))
    tiers = tuple(sorted(tier_set, reverse=True))
    t_index = {t: i for i, t in enumerate(tiers)}
    m, n = len(entries), w.players
    squares = np.zeros((m, n, len(tiers)))
    bonuses = np.zeros((m, n, 3))
    replays = np.zeros((m, n))
    owners = np.full((m, SIDE * SIDE), -1, dtype=np.int64)
    rows = np.zeros(m, dtype=np.int64)
    for i, (row, st) in enumerate(entries):
        rows[i] = row
        for s, seat in enumerate(st["per_seat"]):
            for k, v in seat.get("squares_by_value", {}).items():
                squares[i, s, t_index[int(k)]] = v
            bonuses[i, s] = [seat.get(f"{kind}_bonuses", 0) for kind in BONUS_KINDS]
            replays[i, s] = seat.get("replays", 0)
        text = st.get("owners", "")
        if isinstance(text, str) and len(text) == SIDE * SIDE:
            codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8).astype(np.int64) - 48
            owners[i] = np.where((codes >= 0) & (codes < 10), codes, -1)
    return AlveolesData(tiers, squares, bonuses, replays, owners, rows)


def _heat(owned: np.ndarray) -> list[list[float]]:
    """Mean over matches of a (K, 64) 0/1 array, as 8 rows of 8 (row 1 first)."""
    if owned.shape[0] == 0:
        return [[math.nan] * SIDE for _ in range(SIDE)]
    return owned.mean(axis=0).reshape(SIDE, SIDE).tolist()


def heat_maps(d: AlveolesData, w: Wide) -> dict[str, Any]:
    """Probability that seat 0, and that each agent, owns each square."""
    seat0 = _heat((d.owners == 0).astype(float))
    by_agent: dict[str, list[list[float]]] = {}
    if d.rows.size:
        seat_agents = w.agent[d.rows]  # (M, n)
        safe = np.clip(d.owners, 0, w.players - 1)
        owner_agent = np.take_along_axis(seat_agents, safe, axis=1)
        owner_agent = np.where(d.owners >= 0, owner_agent, -1)
        for a in np.unique(seat_agents):
            # An agent may sit in several seats of one match; it owns the square if any does.
            by_agent[w.labels[a]] = _heat((owner_agent == a).astype(float))
    return {"seat0": seat0, "by_agent": by_agent}


def _tier_rows(
    d: AlveolesData, masks: Iterable[tuple[str, Any, np.ndarray]], key: str
) -> list[dict[str, Any]]:
    """Per group (mask over (M, n) seat cells) and tier: mean squares, points, share."""
    tier_totals = d.squares.sum(axis=1, keepdims=True)  # (M, 1, T)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(tier_totals > 0, d.squares / tier_totals, np.nan)
    values = np.array(d.tiers, dtype=float)
    out: list[dict[str, Any]] = []
    for _, name, mask in masks:
        cells = d.squares[mask]  # (K, T)
        shares = share[mask]
        for t, tier in enumerate(d.tiers):
            out.append(
                {
                    key: name,
                    "tier": tier,
                    "squares": float(cells[:, t].mean()) if cells.size else math.nan,
                    "points": float(cells[:, t].mean() * values[t]) if cells.size else math.nan,
                    "share": float(np.nanmean(shares[:, t])) if cells.size else math.nan,
                }
            )
    return out


def _bonus_rows(
    d: AlveolesData, masks: Iterable[tuple[str, Any, np.ndarray]], key: str
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _, name, mask in masks:
        counts = d.bonuses[mask]  # (K, 3)
        row: dict[str, Any] = {key: name, "seats": int(counts.shape[0])}
        for k, kind in enumerate(BONUS_KINDS):
            col = counts[:, k] if counts.size else np.zeros(0)
            row[f"{kind}_points"] = float(col.mean() * BONUS_POINTS) if col.size else math.nan
            row[f"{kind}_frequency"] = float((col > 0).mean()) if col.size else math.nan
        reps = d.replays[mask]
        row["replays"] = float(reps.mean()) if reps.size else math.nan
        out.append(row)
    return out


def deciding_tiers(d: AlveolesData, w: Wide) -> list[dict[str, Any]]:
    """Per tier: winners' mean tier share minus losers', with a 95 % interval clustered by unit.

    Winners are the seats with a share of the win (``returns()`` above 0), the rest losers.
    The seats of one match are not independent (their shares of a tier add up to 1), nor are
    matches that share an opening, so the standard error is cluster-robust over the matches'
    units (``analysis.clustered.clustered_difference``: the regression of the seat shares on a
    winner indicator with ``cov_type="cluster"``), t on ``stats.unit_df`` (units − 2 for units of
    one size);
    ``p_holm`` adjusts the tiers' p-values for their number (Holm).
    """
    if d.rows.size == 0:
        return []
    won = w.win[d.rows] > 0
    tier_totals = d.squares.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(tier_totals > 0, d.squares / tier_totals, np.nan)
    cell_unit = np.broadcast_to(w.unit[d.rows][:, None], won.shape)
    out: list[dict[str, Any]] = []
    for t, tier in enumerate(d.tiers):
        values = share[:, :, t]
        a_ok, b_ok = won & ~np.isnan(values), ~won & ~np.isnan(values)
        diff = clustered_difference(values[a_ok], cell_unit[a_ok], values[b_ok], cell_unit[b_ok])
        out.append({"tier": tier, "difference": diff.estimate, "se": diff.se,
                    "ci_low": diff.ci_low, "ci_high": diff.ci_high, "p_value": diff.p_value,
                    "p_holm": math.nan, "units": diff.units, "note": diff.note})  # fmt: skip
    for row, p in zip(out, stats.holm([r["p_value"] for r in out]), strict=True):
        row["p_holm"] = p
    return out


def alveoles_section(match_stats: pd.DataFrame, w: Wide) -> dict[str, Any]:
    """The whole Alvéoles section of a report."""
    d = parse_stats(match_stats, w)
    seats_of = w.agent[d.rows] if d.rows.size else np.zeros((0, w.players), np.int64)
    seat_grid = np.broadcast_to(np.arange(w.players), seats_of.shape)
    agent_masks = [("agent", w.labels[a], seats_of == a) for a in np.unique(seats_of)]
    seat_masks = [("seat", s, seat_grid == s) for s in range(w.players)]
    return {
        "name": "alveoles",
        "matches": int(d.rows.size),
        "tiers": list(d.tiers),
        "tiers_by_agent": _tier_rows(d, agent_masks, "agent"),
        "tiers_by_seat": _tier_rows(d, seat_masks, "seat"),
        "bonus_by_agent": _bonus_rows(d, agent_masks, "agent"),
        "bonus_by_seat": _bonus_rows(d, seat_masks, "seat"),
        "deciding_tiers": deciding_tiers(d, w),
        "heat_map": heat_maps(d, w),
    }


# --------------------------------------------------------------------------- the report


def build(engine: Engine, batch: Any, w: Wide) -> dict[str, Any] | None:
    """The section of a stored batch (None before any match is played)."""
    if not w.matches:
        return None
    section = alveoles_section(frames.match_stats(engine, batch.id), w)
    exact = exact_section(engine, batch, w)
    if exact is not None:
        # Boards small enough to solve: the players against the exact values.
        section["exact"] = exact
    return section


def tables(g: Mapping[str, Any]) -> list[TextTable]:
    """Tier shares by agent, the tiers that decide games, bonus points by agent."""
    return [
        TextTable(
            "Squares and points per value tier, by agent",
            ("agent", "tier", "squares", "points", "share"),
            [
                [
                    str(t["agent"]),
                    str(t["tier"]),
                    num(t["squares"], 2),
                    num(t["points"]),
                    pct(t["share"]),
                ]
                for t in g["tiers_by_agent"]
            ],
            css_class="tiers",
        ),
        TextTable(
            "Tiers that separate winners from losers",
            ("tier", "winners − losers (share)", "95% CI", "p-value", "Holm p", "units"),
            [
                [
                    str(d["tier"]),
                    pct(d["difference"]),
                    span(d["ci_low"], d["ci_high"]),
                    p_value(d["p_value"]),
                    p_value(d.get("p_holm")),
                    num(d.get("units")),
                ]
                for d in g["deciding_tiers"]
            ],
            note="standard errors clustered by match (by unit where matches share an opening)",
            css_class="deciding",
        ),
        TextTable(
            "Bonus points per game",
            ("agent", "rows", "columns", "3 × 3 blocks", "replays"),
            [
                [
                    str(b["agent"]),
                    num(b["row_points"]),
                    num(b["column_points"]),
                    num(b["block_points"]),
                    num(b["replays"]),
                ]
                for b in g["bonus_by_agent"]
            ],
            css_class="bonus",
        ),
    ]


def _heat_frame(grid: Iterable[Iterable[float | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        [[math.nan if v is None else v for v in row] for row in grid],
        index=range(1, 9),
        columns=list("abcdefgh"),
    )


def html(g: Mapping[str, Any]) -> str:
    """Heat maps of who takes each square, tier shares as a chart, then the tables."""
    heat = g["heat_map"]
    figs = [
        figure(
            "fig-heat-seat0",
            plots.to_svg(
                plots.heat_map(_heat_frame(heat["seat0"]), title="Seat 0 owns the square")
            ),
            "P(seat 0 owns square)",
            True,
        )
    ]
    for i, (agent, grid) in enumerate(heat["by_agent"].items()):
        svg = plots.to_svg(plots.heat_map(_heat_frame(grid), title=f"{agent} owns the square"))
        figs.append(figure(f"fig-heat-agent-{i}", svg, f"P({agent} owns square)", True))
    if g["tiers_by_agent"]:
        tiers = pd.DataFrame(g["tiers_by_agent"]).rename(columns={"agent": "group"})
        figs.append(
            figure(
                "fig-tiers",
                plots.to_svg(plots.tier_shares(tiers)),
                "Share of each value tier's squares taken, per agent",
            )
        )
    return "".join(figs) + "".join(text_table(t) for t in tables(g) if t.rows)


REPORT = GameReport(
    name="alveoles", title="Les Alvéoles: square values", build=build, tables=tables, html=html
)
