"""``perfect``: the player that plays from the exact values of :mod:`engines.alveoles.solver`.

It solves its board once per process (the table is kept for the next match on the same board
and values) and then, at every move, plays a legal groove of best exact value, equal ones
split by its generator. Exact values exist for two players without bonuses on a board small
enough to solve as a match starts (decision V7 of ``docs/rules/alveoles.md``); any other game
is refused when the batch is planned, naming the option at fault.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from engines.alveoles.notation import board_grooves
from engines.alveoles.rules import Alveoles, AlveolesState
from engines.alveoles.scoring import NO_BONUS
from engines.core import Action, AgentType, Game, OptionError, State

PERFECT_MAX_GROOVES = 24
"""The largest board ``perfect`` solves when a match starts: 3 × 3 squares, 2**24 margins
(32 MiB), about a second."""


def check_perfect(game: Game, params: Mapping[str, Any], prefix: str) -> None:
    """Refuse a game without exact values here, naming the game's option at fault."""
    del params, prefix
    if not isinstance(game, Alveoles):
        raise OptionError("perfect plays Les Alvéoles only", field="game")
    if game.square_bonus != NO_BONUS:
        raise OptionError(
            f"the perfect agent needs square_bonus 'none' (exact values count square points "
            f"only, decision V6), not {game.square_bonus!r}",
            field="options.square_bonus",
        )
    grooves = len(board_grooves(game.rows, game.cols))
    if grooves > PERFECT_MAX_GROOVES:
        raise OptionError(
            f"the perfect agent solves boards of at most {PERFECT_MAX_GROOVES} grooves (3 × 3 "
            f"squares); this layout's {game.rows} × {game.cols} board has {grooves}",
            field="options.layout",
        )


@lru_cache(maxsize=4)
def _solved(rows: int, cols: int, values: tuple[int, ...]) -> tuple[Any, np.ndarray]:
    # The solver is imported here: loading the registry must not load numba.
    from engines.alveoles.solver import solve, solver_board

    board = solver_board(rows, cols, values)
    return board, solve(board)


class PerfectAgent:
    """Plays a legal groove of best exact value (ties at random)."""

    def __init__(self, game: Game, rng: random.Random) -> None:
        check_perfect(game, {}, "")
        assert isinstance(game, Alveoles)
        self.rng = rng
        values = tuple(game.values[8 * r + c] for r in range(game.rows) for c in range(game.cols))
        self.board, self.table = _solved(game.rows, game.cols, values)

    def move_values(self, state: AlveolesState) -> dict[Action, int]:
        """{legal groove: the mover's exact margin from here on after it}."""
        from engines.alveoles.solver import move_values

        return move_values(self.board, self.table, self.board.set_of(state.filled_mask))

    def step(self, state: State) -> Action:
        if not isinstance(state, AlveolesState):
            raise TypeError(f"perfect cannot play {type(state).__name__}")
        values = self.move_values(state)
        best = max(values.values())
        choices = sorted(g for g, v in values.items() if v == best)
        return choices[0] if len(choices) == 1 else self.rng.choice(choices)


PERFECT = AgentType(
    name="perfect",
    description=(
        "Plays from the exact values (two players, square_bonus 'none', boards of at most "
        "3 × 3 squares): a move of best forced margin, equal ones at random."
    ),
    factory=PerfectAgent,
    games=("alveoles",),
    min_players=2,
    max_players=2,
    check=check_perfect,
)
