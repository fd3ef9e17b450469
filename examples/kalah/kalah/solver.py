"""Kalah solved exactly for small boards: the ``perfect`` agent.

``margin(state)`` is the final store difference the player to move secures against any
defence (negamax over every line, memoised on the position). A move that lands in one's own
store keeps the turn, so a child's value is added, not negated, when the mover is the same.
The agent plays a move of the best margin, drawn from its generator among equals. The search
is whole-game, so the agent refuses boards beyond ``MAX_SEEDS_SOLVED`` seeds in all.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from engines.contract import Action, AgentType, Game, OptionError, State
from kalah.rules import KalahState

MAX_SEEDS_SOLVED = 18
"""Seeds on the board (2 x houses x seeds) up to which the whole game is searched."""


def _child(pits: tuple[int, ...], to_move: int, action: Action, game: Game) -> KalahState:
    state = KalahState.__new__(KalahState)
    state.game = game
    state.houses = (len(pits) - 2) // 2
    state.pits = list(pits)
    state.to_move = to_move
    state.over = False
    state.apply(action)
    return state


def margin(state: KalahState) -> int:
    """The store margin the player to move secures with best play from ``state`` (for seat 0
    once the game is over)."""
    return _margin(tuple(state.pits), state.to_move, state.over, state.game)


@lru_cache(maxsize=2_000_000)
def _margin(pits: tuple[int, ...], to_move: int, over: bool, game: Game) -> int:
    houses = (len(pits) - 2) // 2
    if over:
        return pits[houses] - pits[2 * houses + 1]
    best = None
    for action in range(houses):
        if pits[action if to_move == 0 else houses + 1 + action] == 0:
            continue
        value = _value_for(_child(pits, to_move, action, game), to_move)
        best = value if best is None else max(best, value)
    assert best is not None  # a position not over has a legal move
    return best


def _value_for(child: KalahState, seat: int) -> int:
    """The child's solved margin from ``seat``'s side."""
    value = _margin(tuple(child.pits), child.to_move, child.over, child.game)
    if child.over:
        return value if seat == 0 else -value
    return value if child.to_move == seat else -value


def best_actions(state: KalahState) -> list[tuple[Action, int]]:
    """Every legal move with the margin it secures for the player to move."""
    seat = state.to_move
    return [
        (a, _value_for(_child(tuple(state.pits), seat, a, state.game), seat))
        for a in state.legal_actions()
    ]


class PerfectAgent:
    """Plays a move of the best solved margin (ties drawn from its generator)."""

    def __init__(self, game: Game, rng: random.Random) -> None:
        self.rng = rng

    def step(self, state: State) -> Action:
        assert isinstance(state, KalahState)
        valued = best_actions(state)
        top = max(v for _, v in valued)
        return self.rng.choice([a for a, v in valued if v == top])


def _check_small(game: Game, params: Mapping[str, Any], prefix: str) -> None:
    seeds = 2 * int(game.options["houses"]) * int(game.options["seeds"])
    if seeds > MAX_SEEDS_SOLVED:
        raise OptionError(
            f"perfect solves boards of up to {MAX_SEEDS_SOLVED} seeds; this one has {seeds}",
            field=f"{prefix}name",
        )


PERFECT = AgentType(
    name="perfect",
    description="Exact play from a whole-game search (boards of up to 18 seeds).",
    factory=PerfectAgent,
    games=("kalah",),
    check=_check_small,
)
