"""Agent strength: score and Elo per agent, head-to-head pairings, each over units of sampling.

Scores between two agents come from the game result (``returns()``, stored as win share), never
from points: in a meeting of two seats of one match, the larger win share wins (1), equal
shares draw (½), a smaller one loses (0). With two players this is exactly the win share.

**Units, not matches.** The matches of one unit of sampling (``Wide.unit``,
``analysis.units``: a round of the seating design; matches sharing an opening only where the
batch declares its book a sample of openings or was stored before variations were declared)
count together, and a seat-swapped pair (matches 2k, 2k + 1) is always joined into one unit.
Every interval and test is computed over units with ``analysis.clustered`` (cluster-robust
variance of the unit totals, t on Kish's effective units − 2 degrees of freedom, a Wilson-type
interval on the score): where every unit is one seat-swapped pair this is the pentanomial
model, where every unit is one game the trinomial one, and where units hold more (rounds of
three or more seats, or linked openings) the variance comes from the unit totals and
``model`` says ``clustered``. Fewer than three units give no interval (``note`` says why), so a
single unit never shows an infinite Elo with a finite interval. A player whose copies hold
every seat scores 1/n by construction and gets no interval.

**Agents, not labels.** Copies of one agent spec (``easy`` and ``easy#2``) are one player: the
agent table pools them into one row (``labels`` lists the copies) whose field is every seat
held by another player, and pairings compare players. A pairing between two copies is kept
as a check: with seats that vary it should read level (``comparison`` ``same agent``); with
``fixed`` seats it measures the seats, not the agents, so it carries no Elo, LOS or p-value
(``comparison`` ``seat effect``). With ``fixed`` seats and different agents every comparison
also contains the seats' effect (``comparison`` ``agents and seats``).

``agent_table`` columns: agent, labels, games, score (mean win share), ci_low, ci_high,
interval, field_score (mean result against every seat of another player), elo, elo_low,
elo_high, elo_model, elo_games (the matches the Elo uses), units, comparison, note.

``pairings`` columns: agent_a, agent_b, games (matches the score uses), wins, draws, losses
(from a's side, over the same matches), score, elo, elo_low, elo_high, los (one-sided
confidence that a is stronger, from the same test), p_value (two-sided, score ½), p_holm
(Holm-adjusted over the pairings that have a p-value), model, pairs, pentanomial (five
pair-outcome counts or None), units, comparison, note.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from analysis import stats
from analysis.clustered import ShareEstimate, share_estimate
from analysis.stats import unit_totals
from analysis.tidy import Wide, meeting_results
from engines.seating import FIXED, seat_swapped_pairs

AGENTS = "agents"
AGENTS_AND_SEATS = "agents and seats"
SEAT_EFFECT = "seat effect"
SAME_AGENT = "same agent"
COMPARISON_NOTES = {
    AGENTS: None,
    AGENTS_AND_SEATS: "fixed seats: each agent always holds the same seat, so the comparison "
    "includes that seat's advantage",
    SEAT_EFFECT: "copies of one agent in fixed seats: the gap is the seats' effect (see the seat "
    "table), not a difference in strength",
    SAME_AGENT: "copies of one agent: expected level; a gap is chance",
}
"""What each kind of comparison measures, as shown beside it."""
NO_OTHER_AGENT = (
    "no other agent to compare with: its copies hold every seat, so its score is 1/n by "
    "construction and has no interval"
)
INTERVAL = "clustered wilson"
"""The score interval's name: Wilson-type over units (``analysis.clustered``)."""

AGENT_COLUMNS = (
    "agent", "labels", "games", "score", "ci_low", "ci_high", "interval", "field_score", "elo",
    "elo_low", "elo_high", "elo_model", "elo_games", "units", "comparison", "note",
)  # fmt: skip
PAIRING_COLUMNS = (
    "agent_a", "agent_b", "games", "wins", "draws", "losses", "score", "elo", "elo_low",
    "elo_high", "los", "p_value", "p_holm", "model", "pairs", "pentanomial", "units",
    "comparison", "note",
)  # fmt: skip


def player_of(w: Wide, groups: Sequence[int] | None) -> np.ndarray:
    """Agent index → index of the first agent with the same spec (its player)."""
    size = max(len(w.labels), int(w.agent.max()) + 1 if w.matches else 0)
    out = np.arange(size, dtype=np.int64)
    if groups is not None:
        out[: len(groups)] = np.asarray(groups, dtype=np.int64)
    return out


def pairwise_scores(w: Wide) -> np.ndarray:
    """(M, n) mean pairwise score of each seat against every other seat of its match."""
    n = w.players
    if n < 2:
        return np.full(w.win.shape, math.nan)
    # The diagonal (a seat against itself) counts ½ in the sum; take it back out.
    return np.asarray((meeting_results(w.win).sum(axis=2) - 0.5) / (n - 1), dtype=float)


def swapped_pairs(w: Wide, seat_policy: str) -> np.ndarray | None:
    """Row indices (P, 2) of seat-swapped pairs (matches 2k, 2k+1), or None if not paired."""
    if not seat_swapped_pairs(w.players, seat_policy) or w.matches < 2:
        return None
    pos = np.full(int(w.match_index.max()) + 1, -1, dtype=np.int64)
    pos[w.match_index] = np.arange(w.matches)
    first = w.match_index[w.match_index % 2 == 0]
    first = first[first + 1 < pos.size]
    a, b = pos[first], pos[first + 1]
    ok = b >= 0
    a, b = a[ok], b[ok]
    swapped = (w.agent[a, 0] == w.agent[b, 1]) & (w.agent[a, 1] == w.agent[b, 0])
    swapped &= w.agent[a, 0] != w.agent[a, 1]
    if not swapped.any():
        return None
    return np.stack([a[swapped], b[swapped]], axis=1)


def comparison_units(w: Wide, pairs: np.ndarray | None) -> np.ndarray:
    """(M,) unit labels: ``w.unit`` with the two matches of every seat-swapped pair joined."""
    if pairs is None or w.matches == 0:
        return w.unit
    _, unit = np.unique(w.unit, return_inverse=True)
    g = int(unit.max()) + 1
    edges = unit[pairs]
    graph = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(g, g))
    _, joined = connected_components(graph, directed=False)
    return np.asarray(joined[unit], dtype=np.int64)


def _meetings(w: Wide, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows and results of every meeting of a seat held by ``first`` with one held by ``second``
    (boolean masks over agent indices), from the first side."""
    rows, scores = [], []
    held_a = first[w.agent]
    held_b = second[w.agent]
    for s in range(w.players):
        for t in range(w.players):
            if s == t:
                continue
            hit = np.flatnonzero(held_a[:, s] & held_b[:, t])
            if hit.size:
                ws, wt = w.win[hit, s], w.win[hit, t]
                rows.append(hit)
                scores.append(np.where(ws > wt, 1.0, np.where(ws == wt, 0.5, 0.0)))
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(rows), np.concatenate(scores)


def pairs_of(w: Wide, pairs: np.ndarray, a: int, b: int) -> np.ndarray:
    """The seat-swapped pairs (rows of ``pairs``) in which agents ``a`` and ``b`` meet."""
    first = w.agent[pairs[:, 0]]
    return pairs[
        ((first[:, 0] == a) & (first[:, 1] == b)) | ((first[:, 0] == b) & (first[:, 1] == a))
    ]


def pentanomial_counts(w: Wide, pairs: np.ndarray, a: int, b: int) -> np.ndarray:
    """Counts of agent ``a``'s points (0, ½, 1, 1½, 2) over its seat-swapped pairs with ``b``."""
    pairs = pairs_of(w, pairs, a, b)
    seat_a_first = np.where(w.agent[pairs[:, 0], 0] == a, 0, 1)
    seat_a_second = 1 - seat_a_first
    total = w.win[pairs[:, 0], seat_a_first] + w.win[pairs[:, 1], seat_a_second]
    idx = np.clip(np.rint(total * 2).astype(np.int64), 0, 4)
    return np.bincount(idx, minlength=5)


def unit_model(unit_of_value: np.ndarray, paired: bool) -> str:
    """``pentanomial`` (every unit one seat-swapped pair), ``trinomial`` (one game), else
    ``clustered``."""
    _, sizes = np.unique(unit_of_value, return_counts=True)
    if paired and sizes.size and bool(np.all(sizes == 2)):
        return "pentanomial"
    if sizes.size and bool(np.all(sizes == 1)):
        return "trinomial"
    return "clustered"


def elo_figures(est: ShareEstimate) -> dict[str, Any]:
    """Elo of a score estimate and the ends of its interval (an end at 0 or 1 is infinite)."""
    return {
        "elo": stats.elo_from_score(est.mean),
        "elo_low": stats.elo_from_score(est.ci_low) if math.isfinite(est.ci_low) else math.nan,
        "elo_high": stats.elo_from_score(est.ci_high) if math.isfinite(est.ci_high) else math.nan,
    }


def join_notes(*notes: str | None) -> str | None:
    """Non-empty notes joined by "; " (None when there is none)."""
    kept = [n for n in notes if n]
    return "; ".join(kept) if kept else None


def comparison_kind(seat_policy: str, same_player: bool) -> str:
    """What comparing two seats' holders measures (the module docstring's four kinds)."""
    if same_player:
        return SEAT_EFFECT if seat_policy == FIXED else SAME_AGENT
    return AGENTS_AND_SEATS if seat_policy == FIXED else AGENTS


def _pairing_row(
    w: Wide, units: np.ndarray, pairs: np.ndarray | None, a: int, b: int, kind: str,
    sides: tuple[np.ndarray, np.ndarray],
) -> dict[str, Any] | None:  # fmt: skip
    rows, sc = _meetings(w, *sides)
    if sc.size == 0:
        return None
    penta: list[int] | None = None
    paired = False
    single = bool(sides[0].sum() == 1 and sides[1].sum() == 1)
    if pairs is not None and kind != SEAT_EFFECT and single:
        counts = pentanomial_counts(w, pairs, a, b)
        if counts.sum() > 0:
            penta, paired = counts.tolist(), True
            # Every figure of the row uses the same matches: those of complete pairs.
            keep = np.isin(rows, pairs_of(w, pairs, a, b).ravel())
            rows, sc = rows[keep], sc[keep]
    est = share_estimate(*unit_totals(sc, units[rows]))
    row: dict[str, Any] = {
        "agent_a": w.labels[a],
        "agent_b": w.labels[b],
        "games": int(np.unique(rows).size),
        "wins": int((sc == 1).sum()),
        "draws": int((sc == 0.5).sum()),
        "losses": int((sc == 0).sum()),
        "score": est.mean,
        **elo_figures(est),
        "los": est.superiority,
        "p_value": est.p_value,
        "p_holm": math.nan,
        "model": unit_model(units[rows], paired),
        "pairs": sum(penta) if penta is not None else 0,
        "pentanomial": penta,
        "units": est.units,
        "comparison": kind,
        "note": join_notes(COMPARISON_NOTES[kind], est.note),
    }
    if kind == SEAT_EFFECT:
        row.update(elo=math.nan, elo_low=math.nan, elo_high=math.nan, los=math.nan,
                   p_value=math.nan)  # fmt: skip
    return row


def pairings(w: Wide, seat_policy: str, groups: Sequence[int] | None = None) -> pd.DataFrame:
    """Head-to-head record of every two players, and of every two copies of one player (see
    the module docstring); ``groups[i]`` is the first agent index with agent ``i``'s spec."""
    out: list[dict[str, Any]] = []
    if w.matches:
        player = player_of(w, groups)
        present = np.unique(w.agent)
        players = np.unique(player[present])
        pairs = swapped_pairs(w, seat_policy)
        units = comparison_units(w, pairs)
        size = player.size
        for i, p in enumerate(players):
            for q in players[i + 1 :]:
                sides = (player == p, player == q)
                row = _pairing_row(w, units, pairs, int(p), int(q),
                                   comparison_kind(seat_policy, False), sides)  # fmt: skip
                if row is not None:
                    out.append(row)
        for i, a in enumerate(present):
            for b in present[i + 1 :]:
                if player[a] != player[b]:
                    continue
                sides = (np.arange(size) == a, np.arange(size) == b)
                row = _pairing_row(w, units, pairs, int(a), int(b),
                                   comparison_kind(seat_policy, True), sides)  # fmt: skip
                if row is not None:
                    out.append(row)
        adjusted = stats.holm([r["p_value"] for r in out])
        for r, p_holm in zip(out, adjusted, strict=True):
            r["p_holm"] = p_holm
    return pd.DataFrame(out, columns=list(PAIRING_COLUMNS))


def agent_table(w: Wide, seat_policy: str, groups: Sequence[int] | None = None) -> pd.DataFrame:
    """One row per player (copies pooled): score with interval, Elo against the other players
    with interval, all over units (see the module docstring)."""
    rows: list[dict[str, Any]] = []
    if w.matches:
        player = player_of(w, groups)
        present = np.unique(w.agent)
        pairs = swapped_pairs(w, seat_policy)
        units = comparison_units(w, pairs)
        cell_unit = np.broadcast_to(units[:, None], w.win.shape)
        mine_all = player[w.agent]  # (M, n) player of each seat
        results = meeting_results(w.win)
        for p in np.unique(player[present]):
            mine = mine_all == p
            score = share_estimate(*unit_totals(w.win[mine], cell_unit[mine]))
            # Field: the mean result of each of p's seats against the seats of other players.
            others = mine_all != p
            count = others.sum(axis=1, keepdims=True).astype(float)
            with np.errstate(invalid="ignore", divide="ignore"):
                field = (results * others[:, None, :]).sum(axis=2) / count
            cells = mine & (count > 0)
            if pairs is not None:
                in_pair = np.zeros(w.matches, dtype=bool)
                in_pair[pairs.ravel()] = True
                cells &= in_pair[:, None]
            field_est = share_estimate(*unit_totals(field[cells], cell_unit[cells]))
            copies = [w.labels[a] for a in present if player[a] == p]
            same_only = not bool(others[mine.any(axis=1)].any())
            kind = comparison_kind(seat_policy, same_player=False)
            rows.append(
                {
                    "agent": w.labels[p],
                    "labels": copies,
                    "games": int(mine.sum()),
                    "score": score.mean,
                    # Holding every seat, the copies share each match's whole win: the score
                    # is 1/n by construction, not an estimate with an interval.
                    "ci_low": math.nan if same_only else score.ci_low,
                    "ci_high": math.nan if same_only else score.ci_high,
                    "interval": INTERVAL,
                    "field_score": field_est.mean,
                    **elo_figures(field_est),
                    "elo_model": unit_model(cell_unit[cells], pairs is not None),
                    "elo_games": int(cells.any(axis=1).sum()),
                    "units": field_est.units,
                    "comparison": None if same_only else kind,
                    "note": (
                        NO_OTHER_AGENT
                        if same_only
                        else join_notes(COMPARISON_NOTES[kind], field_est.note)
                    ),
                }
            )
    return pd.DataFrame(rows, columns=list(AGENT_COLUMNS))
