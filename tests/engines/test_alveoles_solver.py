"""The retrograde solver against a brute-force minimax over the reference rules.

The minimax here knows nothing of the solver's shortcut (that a position's value depends only
on its plated grooves): it plays whole games through ``AlveolesState``, remembers positions by
the rules' own key (plates, owners and the seat to move) and returns the final score margin
of seat 0 over seat 1, seat 0 maximising and seat 1 minimising it.
"""

from __future__ import annotations

import random

import pytest

from engines import load_game
from engines.alveoles.rules import Alveoles, AlveolesState
from engines.alveoles.solver import move_values, solve, solver_board


def _game(layout: list[list[int]]) -> Alveoles:
    game = load_game("alveoles", players=2, layout=layout, square_bonus="none")
    assert isinstance(game, Alveoles)
    return game


class Minimax:
    """Final (seat 0 − seat 1) points under best play, by plain minimax over whole games; one
    instance remembers every position it has walked, so the positions of one game are shared."""

    def __init__(self) -> None:
        self.memo: dict[object, int] = {}

    def final(self, s: AlveolesState) -> int:
        k = s.key()
        if k in self.memo:
            return self.memo[k]
        if s.is_terminal():
            points = s.square_points()
            value = points[0] - points[1]
        else:
            outcomes = []
            for g in s.legal_actions():
                child = s.clone()
                child.apply(g)
                outcomes.append(self.final(child))
            value = max(outcomes) if s.current_player() == 0 else min(outcomes)
        self.memo[k] = value
        return value


def solved(game: Alveoles):  # type: ignore[no-untyped-def]
    values = tuple(game.values[8 * r + c] for r in range(game.rows) for c in range(game.cols))
    board = solver_board(game.rows, game.cols, values)
    return board, solve(board)


def remaining(state: AlveolesState, final_margin: int) -> int:
    """The mover's margin still to come, from seat 0's final margin and the points so far."""
    points = state.square_points()
    to_come = final_margin - (points[0] - points[1])
    return to_come if state.current_player() == 0 else -to_come


LAYOUTS_2X2 = [[[50, 50], [50, 50]], [[1, 1], [1, 1]], [[5, 1], [20, 1]], [[50, 5], [15, 1]]]
LAYOUTS_2X3 = [[[1, 50, 50], [1, 50, 50]], [[15, 1, 5], [1, 30, 1]]]


@pytest.mark.parametrize("layout", LAYOUTS_2X2 + LAYOUTS_2X3)
def test_start_value_equals_brute_force_minimax(layout: list[list[int]]) -> None:
    game = _game(layout)
    _, table = solved(game)
    assert int(table[0]) == Minimax().final(game.new_initial_state())


@pytest.mark.parametrize("layout", [LAYOUTS_2X2[2], LAYOUTS_2X3[1]])
def test_positions_in_play_equal_brute_force_minimax(layout: list[list[int]]) -> None:
    game = _game(layout)
    board, table = solved(game)
    brute = Minimax()
    brute.final(game.new_initial_state())
    rng = random.Random(7)
    for _ in range(12):
        state = game.new_initial_state()
        for _ in range(rng.randrange(1, len(game.grooves) - 1)):
            state.apply(rng.choice(state.legal_actions()))
            if state.is_terminal():
                break
        if state.is_terminal():
            continue
        expected = remaining(state, brute.final(state))
        assert int(table[board.set_of(state.filled_mask)]) == expected
        for g, value in move_values(board, table, board.set_of(state.filled_mask)).items():
            child = state.clone()
            child.apply(g)
            final = brute.final(child)
            to_come = final - (state.square_points()[0] - state.square_points()[1])
            assert value == (to_come if state.current_player() == 0 else -to_come)


def _transposed(rows: list[list[int]]) -> list[list[int]]:
    """The layout turned a quarter: column a (bottom to top) becomes the top row."""
    height, width = len(rows), len(rows[0])
    return [[rows[height - 1 - r][width - 1 - c] for r in range(height)] for c in range(width)][
        ::-1
    ]


@pytest.mark.parametrize("seed", range(4))
def test_a_quarter_turn_of_the_board_keeps_the_value(seed: int) -> None:
    # Turning the board a quarter swaps rows and columns and changes no rule, so a 2 × 4
    # board and its 4 × 2 image start with the same value.
    rng = random.Random(seed)
    layout = [[rng.choice((1, 1, 5, 20, 50)) for _ in range(4)] for _ in range(2)]
    _, table = solved(_game(layout))
    _, turned = solved(_game(_transposed(layout)))
    assert int(table[0]) == int(turned[0])


def test_a_board_too_large_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 31"):
        solver_board(4, 4, (1,) * 16)
