"""Les Alvéoles against its exact values: how close a batch's players came to perfect play.

On a board the ``perfect`` agent takes (two players, ``square_bonus = none``, at most 24
grooves; decision V7 of ``docs/rules/alveoles.md``) every position has an exact value, and so
has every move from it. The section replays each stored match through the rules and asks of
every plate whether its value equals the best one from that position: the **optimal-move
share** of each agent, over the positions reached in its own games. It also sets the first
player's point margin, measured, beside the start position's exact value (the margin that
player can force, and the one two perfect players reach).

The moves of one game are not independent draws (a player who has gone wrong plays on from a
position it chose), so each share is a ratio of optimal moves to moves summed over the batch's
units of sampling (games, or rounds of games where they share an opening), with the
cluster-robust variance of ``analysis.stats``. Fed its moves as units, it is the same
design-adjusted exact interval every other share of the report has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from sqlalchemy import Engine, select

from analysis import stats
from analysis.batch_data import agent_groups
from analysis.tidy import Wide
from engines.alveoles.perfect import check_perfect
from engines.alveoles.rules import Alveoles, AlveolesState
from engines.core import OptionError
from engines.registry import load_game
from storage.models import MATCH

DECISIVE = "decisive"
"""Positions where the moves do not all have one value: where a player can go wrong."""


@dataclass(frozen=True)
class MoveCounts:
    """Per match (rows aligned with a ``Wide``) and seat: moves played, and how many were of
    the best value; the same for the decisive positions alone."""

    moves: np.ndarray  # (M, n)
    optimal: np.ndarray  # (M, n)
    decisive: np.ndarray  # (M, n)
    decisive_optimal: np.ndarray  # (M, n)


def solvable(game: Any) -> bool:
    """Whether ``game`` is one the exact values cover (the ``perfect`` agent's boards)."""
    try:
        check_perfect(game, {}, "")
    except OptionError:
        return False
    return True


@lru_cache(maxsize=4)
def _solved(rows: int, cols: int, values: tuple[int, ...]) -> tuple[Any, np.ndarray]:
    from engines.alveoles.solver import solve, solver_board

    board = solver_board(rows, cols, values)
    return board, solve(board)


def board_values(game: Alveoles) -> tuple[int, ...]:
    """The board's square values in the solver's order (bottom row first)."""
    return tuple(game.values[8 * r + c] for r in range(game.rows) for c in range(game.cols))


def exact_start_value(game: Alveoles) -> int:
    """The first player's forced margin of square points from the empty board."""
    _, table = _solved(game.rows, game.cols, board_values(game))
    return int(table[0])


def count_moves(game: Alveoles, moves: list[str], players: int) -> tuple[np.ndarray, ...]:
    """One match's ``MoveCounts`` rows (per seat) from its canonical move list."""
    from engines.alveoles.solver import move_values

    board, table = _solved(game.rows, game.cols, board_values(game))
    out = np.zeros((4, players))
    state = game.new_initial_state(seed=0)
    assert isinstance(state, AlveolesState)
    for text in moves:
        seat = state.current_player()
        action = state.string_to_action(text)
        values = move_values(board, table, board.set_of(state.filled_mask))
        best = max(values.values())
        played = values[action]
        decisive = min(values.values()) < best
        out[:, seat] += (1, played == best, decisive, decisive and played == best)
        state.apply_action(action)
    return tuple(out)


def match_moves(engine: Engine, batch_id: str) -> dict[int, list[str]]:
    """{match index: its canonical moves} for every successful match of the batch."""
    t = MATCH
    query = select(t.c.match_index, t.c.moves).where(t.c.batch_id == batch_id, t.c.ok.is_(True))
    with engine.connect() as conn:
        return {int(mi): (text or "").split() for mi, text in conn.execute(query)}


def move_counts(game: Alveoles, moves: Mapping[int, list[str]], w: Wide) -> MoveCounts:
    """Every match of ``w`` replayed against the exact values."""
    m, n = w.matches, w.players
    arrays = np.zeros((4, m, n))
    for row, mi in enumerate(w.match_index):
        for k, per_seat in enumerate(count_moves(game, moves[int(mi)], n)):
            arrays[k, row] = per_seat
    return MoveCounts(*arrays)


def ratio_share(hits: np.ndarray, trials: np.ndarray, unit: np.ndarray) -> stats.UnitMean:
    """Share of ``hits`` among ``trials`` (per match), the matches grouped by ``unit``: a ratio
    of sums over units, each trial a 0/1 value (so Σy² = Σy), with the report's design-adjusted
    exact interval (``stats.share_from_sums``)."""
    t, _ = stats.unit_totals(hits, unit)
    n, _ = stats.unit_totals(trials, unit)
    keep = n > 0
    t, n = t[keep], n[keep]
    total = float(t.sum())
    sums = stats.UnitSums(
        matches=round(float(n.sum())),
        units=int(n.size),
        total=total,
        squares=total,
        unit_squares=float((t * t).sum()),
        unit_size_squares=float((n * n).sum()),
        unit_cross=float((n * t).sum()),
    )
    return stats.share_from_sums(sums)


def _share_row(
    agent: str, hits: np.ndarray, trials: np.ndarray, unit: np.ndarray
) -> dict[str, Any]:
    u = ratio_share(hits, trials, unit)
    return {
        "agent": agent,
        "moves": int(trials.sum()),
        "optimal": int(hits.sum()),
        "share": u.estimate,
        "ci_low": u.ci_low,
        "ci_high": u.ci_high,
        "interval": u.interval,
        "units": u.units,
    }


def _summed(arr: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per match, ``arr`` summed over the seats ``mask`` picks."""
    return np.where(mask, arr, 0.0).sum(axis=1)


def _first_player_margin(w: Wide) -> np.ndarray:
    """Per match: the first mover's points minus the other's."""
    rows = np.arange(w.matches)
    first = w.points[rows, w.first_seat]
    return first - w.points[rows, 1 - w.first_seat]


def exact_section(engine: Engine, batch: Any, w: Wide) -> dict[str, Any] | None:
    """The batch against the exact values; None when its game has none or nothing is played."""
    game = load_game(batch.game, players=batch.players, **batch.options)
    if not w.matches or not isinstance(game, Alveoles) or not solvable(game):
        return None
    counts = move_counts(game, match_moves(engine, batch.id), w)
    start = exact_start_value(game)
    by_agent: list[dict[str, Any]] = []
    decisive: list[dict[str, Any]] = []
    groups = agent_groups(list(batch.agents))
    for a in sorted(set(groups)):
        # Copies of one spec (self-play: ``expert`` and ``expert#2``) are one player.
        label = w.labels[a]
        mask = np.isin(w.agent, [i for i, g in enumerate(groups) if g == a])
        if not mask.any():
            continue
        by_agent.append(
            _share_row(label, _summed(counts.optimal, mask), _summed(counts.moves, mask), w.unit)
        )
        decisive.append(
            _share_row(
                label,
                _summed(counts.decisive_optimal, mask),
                _summed(counts.decisive, mask),
                w.unit,
            )
        )
    margin = stats.clustered_mean(_first_player_margin(w), w.unit)
    outcome = 1.0 if start > 0 else 0.5 if start == 0 else 0.0
    return {
        "start_value": start,
        "board": f"{game.rows}x{game.cols}",
        "board_total": int(sum(board_values(game))),
        "exact_first_player_share": outcome,
        "first_player_margin": {
            "estimate": margin.estimate,
            "ci_low": margin.ci_low,
            "ci_high": margin.ci_high,
            "interval": margin.interval,
            "units": margin.units,
            "games_at_exact_value": int((_first_player_margin(w) == start).sum()),
            "games": w.matches,
        },
        "optimal_moves": by_agent,
        DECISIVE: decisive,
    }
