"""A game's ladder from its results file: Bradley–Terry strengths anchored at the reference,
CPU seconds a game per level, each pairing's score, and the strongest level within a budget.

Strengths are ``analysis.strengths``' model on every pairing of the game at once: every
meeting of two different levels in a match is one comparison (with three players, the single
``A`` against each copy of ``B``), fitted by choix's ILSR with the same small ridge. The
interval is that module's cluster-robust sandwich over units of sampling, taken for the
difference from the reference (its variance ``V_ii + V_rr − 2 V_ir``), with Student's t on
``G − 1`` degrees of freedom, ``G`` the units of all pairings together. A unit is a round of
a pairing's seating design (``analysis.units``): two seat-swapped games for two players, a
deal played six ways for three. Each round draws its opening independently, so two rounds that
drew the same opening stay two units.

Where some levels won, or lost, every comparison against the rest (a sweep), their Elo is
unbounded and the fit only orders them: intervals are given inside the group of levels that
the reference reaches both ways (the strongly connected part of the "scored against" graph),
and every other level gets its ridge-held estimate with a note and no interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import choix
import numpy as np
from scipy.sparse.csgraph import connected_components

from analysis.clustered import MIN_UNITS
from analysis.ladder.ladders import Ladder, pairing_name
from analysis.stats import UnitMean, clustered_share, t_quantile
from analysis.strengths import BT_ALPHA, ELO_PER_NAT, sandwich_covariance, unit_comparisons
from analysis.tidy import Wide, meeting_results
from analysis.units import sampling_units

BUDGETS = (1.0, 10.0, 60.0)
"""CPU seconds a game a study might afford a level (the strongest within each is named)."""


@dataclass(frozen=True)
class LevelRow:
    level: str
    games: int
    cpu_per_game: float
    """Mean CPU seconds of this level's own moves in one game (one seat)."""
    elo: float
    ci_low: float
    ci_high: float
    note: str | None


@dataclass(frozen=True)
class PairingRow:
    a: str
    b: str
    games: int
    units: int
    score: UnitMean
    """``a``'s mean score in its meetings with ``b`` (1 won, ½ drawn or tied, 0 lost)."""
    win_share: UnitMean
    """``a``'s win share of whole games (ties shared): with three players, against 1/3."""
    plies: float
    cpu_per_game: float
    """Mean CPU seconds of the whole match, both levels and the rules."""


@dataclass(frozen=True)
class LadderTable:
    ladder: Ladder
    levels: list[LevelRow]
    pairings: list[PairingRow]
    units: int
    games: int

    def strongest_within(self, budget: float) -> LevelRow | None:
        """The level of highest Elo whose own moves take at most ``budget`` CPU s a game."""
        fitting = [r for r in self.levels if r.games and r.cpu_per_game <= budget]
        return max(fitting, key=lambda r: r.elo, default=None)


def _rows_by_pairing(ladder: Ladder, rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    names = [pairing_name(a, b) for a, b in ladder.pairings()]
    found = {name: [] for name in names} | {r["pairing"]: [] for r in rows if r["pairing"]}
    for row in rows:
        found[row["pairing"]].append(row)
    return [sorted(found[n], key=lambda r: int(r["index"])) for n in found]


def ladder_wide(ladder: Ladder, rows: list[dict[str, Any]]) -> tuple[Wide, list[str]]:
    """Every match of the game as one ``Wide``: agent index = level, a unit per round of a
    pairing, match indices made distinct across pairings."""
    levels = list(ladder.levels) + sorted(
        {s for r in rows for s in r["seats"]} - set(ladder.levels)
    )
    index = {level: i for i, level in enumerate(levels)}
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    offset, unit_offset = 0, 0
    for group in _rows_by_pairing(ladder, rows):
        if not group:
            continue
        match = np.array([int(r["index"]) for r in group], dtype=np.int64)
        # The stored round is the unit's round: units of size one over it.
        rounds = np.array([int(r["round"]) for r in group], dtype=np.int64)
        units = sampling_units(rounds, np.array([r["opening"] for r in group], object), 1)
        parts.append(
            (
                match + offset,
                np.array([r["returns"] for r in group], dtype=float),
                np.array([[index[s] for s in r["seats"]] for r in group], dtype=np.int64),
                units.label + unit_offset,
            )
        )
        offset += int(match.max()) + 1
        unit_offset += units.count
    if not parts:
        empty = np.zeros((0, ladder.players))
        return Wide(np.zeros(0, np.int64), empty, empty, empty.astype(np.int64), ()), levels
    match, win, agent, unit = (np.concatenate(p) for p in zip(*parts, strict=True))
    return Wide(match, win, np.zeros_like(win), agent, tuple(levels), unit=unit), levels


def _group_units(w: Wide, comp: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Comparisons among ``inside`` players, keeping only the units that hold some."""
    sub = comp[:, inside][:, :, inside]
    return sub[sub.sum(axis=(1, 2)) > 0]


def fit_strengths(
    w: Wide, levels: list[str], reference: str
) -> tuple[dict[str, tuple[float, float, float, str | None]], int]:
    """Elo of every level that played, anchored at ``reference`` = 0, with its 95 % interval
    (nan where none), a note where the Elo is unbounded, and the units the intervals rest on."""
    players = np.unique(w.agent)
    if reference not in levels or levels.index(reference) not in players:
        return {}, 0
    comp = unit_comparisons(w, np.arange(len(levels)), players)
    total = comp.sum(axis=0)
    ref = int(np.flatnonzero(players == levels.index(reference))[0])
    _, group = connected_components(total > 0, directed=True, connection="strong")
    inside = np.flatnonzero(group == group[ref])
    whole = np.asarray(choix.ilsr_pairwise_dense(total, alpha=BT_ALPHA))
    out: dict[str, tuple[float, float, float, str | None]] = {}
    for p in np.flatnonzero(group != group[ref]):
        side = "above" if whole[p] > whole[ref] else "below"
        elo = (whole[p] - whole[ref]) * ELO_PER_NAT
        sweep = f"unbounded: a sweep separates it from the reference ({side})"
        out[levels[players[p]]] = (float(elo), math.nan, math.nan, sweep)
    sub = _group_units(w, comp, inside)
    theta = np.asarray(choix.ilsr_pairwise_dense(sub.sum(axis=0), alpha=BT_ALPHA))
    r = int(np.flatnonzero(inside == ref)[0])
    units = int(sub.shape[0])
    if inside.size > 1 and units >= max(MIN_UNITS, inside.size):
        cov = sandwich_covariance(sub, theta)
        var = np.diag(cov) + cov[r, r] - 2 * cov[:, r]
        half = t_quantile(units - 1) * np.sqrt(np.clip(var, 0.0, None)) * ELO_PER_NAT
    else:
        half = np.full(inside.size, math.nan)
    for k, p in enumerate(inside):
        elo = (theta[k] - theta[r]) * ELO_PER_NAT
        if k == r:
            out[reference] = (0.0, math.nan, math.nan, "the reference")
            continue
        note = None if not math.isnan(half[k]) else "too few units for an interval"
        out[levels[players[p]]] = (float(elo), float(elo - half[k]), float(elo + half[k]), note)
    return out, units


def _pairing_row(a: str, b: str, group: list[dict[str, Any]]) -> PairingRow:
    rounds = np.array([int(r["round"]) for r in group], dtype=np.int64)
    unit = sampling_units(rounds, np.array([r["opening"] for r in group], object), 1).label
    win = np.array([r["returns"] for r in group], dtype=float)
    seat_a = np.array([r["seats"].index(a) for r in group], dtype=np.int64)
    rows = np.arange(len(group))
    meetings = meeting_results(win)[rows, seat_a]  # (M, n): a against each seat
    others = win.shape[1] - 1
    score = (meetings.sum(axis=1) - 0.5) / others  # a's own diagonal counts ½
    return PairingRow(
        a=a,
        b=b,
        games=len(group),
        units=int(np.unique(unit).size),
        score=clustered_share(score, unit),
        win_share=clustered_share(win[rows, seat_a], unit),
        plies=float(np.mean([r["plies"] for r in group])),
        cpu_per_game=float(np.mean([r["match_cpu"] for r in group])),
    )


def cpu_by_level(rows: list[dict[str, Any]]) -> dict[str, tuple[int, float]]:
    """Games played and mean CPU seconds a game of each level's own moves (one seat)."""
    seconds: dict[str, list[float]] = {}
    games: dict[str, int] = {}
    for row in rows:
        for level in set(row["seats"]):
            games[level] = games.get(level, 0) + 1
        for level, cpu in zip(row["seats"], row["cpu"], strict=True):
            seconds.setdefault(level, []).append(float(cpu))
    return {level: (games[level], float(np.mean(seconds[level]))) for level in games}


def ladder_table(ladder: Ladder, rows: list[dict[str, Any]]) -> LadderTable:
    """The whole table of ``ladder`` from its stored matches."""
    w, levels = ladder_wide(ladder, rows)
    strengths, units = fit_strengths(w, levels, ladder.reference)
    cpu = cpu_by_level(rows)
    level_rows = []
    for level in levels:
        games, seconds = cpu.get(level, (0, math.nan))
        elo, low, high, note = strengths.get(level, (math.nan, math.nan, math.nan, "no games"))
        level_rows.append(LevelRow(level, games, seconds, elo, low, high, note))
    pairing_rows = []
    grouped = {g[0]["pairing"]: g for g in _rows_by_pairing(ladder, rows) if g}
    for a, b in ladder.pairings():
        group = grouped.get(pairing_name(a, b))
        if group:
            pairing_rows.append(_pairing_row(a, b, group))
    return LadderTable(ladder, level_rows, pairing_rows, units, len(rows))
