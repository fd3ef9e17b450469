"""Les Alvéoles on boards of 2 to 8 rows and columns (decisions V5 and V6 of
docs/rules/alveoles.md): the layout's shape, the classic values of a smaller board, the rules'
facts on it, and the compiled kernel against the rules there."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engines import IllegalActionError, OptionError, load_game
from engines.alveoles import kernel as alv
from engines.alveoles.layouts import CELLS, check_symmetry, classic_window, normalise_layout
from engines.alveoles.rules import Alveoles, AlveolesState
from engines.alveoles.scoring import (
    DISJOINT,
    NO_BONUS,
    OVERLAPPING,
    lines_of_square,
    seat_score,
)
from engines.core import play_match
from engines.registry import make_agent


def _game(players: int = 2, **options: object) -> Alveoles:
    game = load_game("alveoles", players=players, **options)
    assert isinstance(game, Alveoles)
    return game


def _grooves(rows: int, cols: int) -> int:
    """Plates of a board: rows + 1 lines of ``cols`` grooves, cols + 1 lines of ``rows``."""
    return (rows + 1) * cols + (cols + 1) * rows


CLASSIC_3X4 = [[20, 1, 1, 20], [1, 50, 50, 1], [1, 50, 50, 1]]
"""The 3 × 4 board as docs/rules/alveoles.md prints it (V5)."""


def test_the_classic_values_of_a_3x4_board_are_the_printed_ones() -> None:
    game = _game(layout="classic-3x4")
    assert (game.rows, game.cols) == (3, 4)
    assert game.options["layout"] == tuple(tuple(r) for r in CLASSIC_3X4)
    assert game.values[0:4] == (1, 50, 50, 1)  # a1 … d1: the bottom row
    assert game.values[16:20] == (20, 1, 1, 20)  # a3 … d3
    assert sum(game.values) == 246
    assert _game(layout=CLASSIC_3X4).layout_name == "classic-3x4"


def test_classic_8x8_is_the_classic_layout() -> None:
    assert normalise_layout("classic-8x8") == normalise_layout("classic")
    assert _game(layout="classic-8x8").layout_name == "classic"


@pytest.mark.parametrize(("rows", "cols"), [(2, 2), (2, 4), (4, 6), (6, 2), (8, 8)])
def test_even_windows_keep_the_half_turn(rows: int, cols: int) -> None:
    check_symmetry(classic_window(rows, cols), "half_turn")


def test_a_broken_symmetry_is_named() -> None:
    with pytest.raises(ValueError, match="square a2 is worth 5, its image b1 1"):
        check_symmetry([[5, 1], [1, 1]], "half_turn")


@pytest.mark.parametrize(("rows", "cols"), [(2, 2), (2, 3), (3, 4), (5, 2), (7, 8)])
def test_a_board_plays_its_own_grooves_to_the_end(rows: int, cols: int) -> None:
    rng = random.Random(rows * 10 + cols)
    layout = [[rng.choice((1, 1, 5, 20, 50)) for _ in range(cols)] for _ in range(rows)]
    game = _game(layout=layout)
    state = game.new_initial_state()
    assert len(state.legal_actions()) == _grooves(rows, cols)
    plates = 0
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
        plates += 1
    assert plates == state.placements == _grooves(rows, cols)
    assert sum(state.square_points()) == sum(map(sum, layout))
    assert state.owners_string().count(".") == CELLS - rows * cols
    assert state.stats()["board"] == f"{rows}x{cols}"


def test_forced_closing_on_a_small_board() -> None:
    state = _game(layout="classic-2x2").new_initial_state().play(["a1N", "a1E", "a1S"])
    assert [state.action_to_string(g) for g in state.legal_actions()] == ["a1W"]


def test_a_groove_off_the_board_is_refused_by_name() -> None:
    state = _game(layout="classic-2x3").new_initial_state()
    with pytest.raises(IllegalActionError, match="d1S is not on the 2 × 3 board"):
        state.apply_string("d1S")
    with pytest.raises(IllegalActionError, match="a3E is not on the 2 × 3 board"):
        state.apply_string("a3E")
    state.apply_string("c2N")  # the top border of a 2-row board is on it


def test_rows_and_columns_are_the_boards_own() -> None:
    # On 2 × 3 squares a row is 3 squares and a column 2: a1 b1 c1 is a row, a1 a2 a column.
    bottom_row = 1 << 0 | 1 << 1 | 1 << 2
    first_column = 1 << 0 | 1 << 8
    values = _game(layout=[[1, 1, 1], [1, 1, 1]]).values
    assert seat_score(bottom_row, values, OVERLAPPING, (2, 3)).rows == 1
    assert seat_score(first_column, values, OVERLAPPING, (2, 3)).columns == 1
    score = seat_score(bottom_row | first_column, values, OVERLAPPING, (2, 3))
    assert (score.rows, score.columns, score.total) == (1, 1, 4 + 200)
    assert seat_score(bottom_row | first_column, values, NO_BONUS, (2, 3)).total == 4


def test_no_bonus_scores_square_points_only() -> None:
    state = _game(layout="classic", square_bonus="none").new_initial_state()
    rng = random.Random(3)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    assert state.scores() == [float(p) for p in state.square_points()]
    assert sum(state.scores()) == 500


def test_a_layout_rebuilds_from_its_record() -> None:
    for layout in ("classic-3x4", [[3, 1, 4], [1, 5, 9]]):
        game = _game(layout=layout)
        again = _game(**game.params())
        assert (again.rows, again.cols, again.values) == (game.rows, game.cols, game.values)
    with pytest.raises(OptionError) as err:
        _game(layout=[[1, 2, 3], [4, 5]])
    assert err.value.field == "options.layout"


def _random_board(rng: random.Random) -> list[list[int]]:
    rows, cols = rng.randint(2, 8), rng.randint(2, 8)
    return [[rng.choice((1, 1, 2, 5, 20, 50)) for _ in range(cols)] for _ in range(rows)]


@pytest.mark.parametrize("players", [2, 3])
def test_kernel_equals_rules_on_smaller_boards(players: int) -> None:
    rng = random.Random(500 + players)
    buf = np.empty(alv.MAX_ACTIONS, dtype=np.int64)
    returns = np.zeros(4)
    totals = np.zeros(4, dtype=np.int64)
    for index in range(400):
        # Small boards often give one seat a whole row or column: the bonuses are exercised.
        bonus = (OVERLAPPING, DISJOINT, NO_BONUS)[index % 3]
        game = _game(players, layout=_random_board(rng), square_bonus=bonus)
        state: AlveolesState = game.new_initial_state()
        ks = alv.new_state(game.values, players, bonus, game.rows, game.cols)
        while True:
            assert alv.current_player(ks) == state.current_player()
            n = alv.legal_actions(ks, buf)
            legal = state.legal_actions()
            assert sorted(buf[:n].tolist()) == legal
            if not legal:
                break
            action = rng.choice(legal)
            state.apply(action)
            alv.apply(ks, action)
            if index % 50 == 0:
                # Codes, owners, values and points; the empty and forced lists' order differs.
                encoded = alv.encode(state)
                assert np.array_equal(encoded[: alv.EMPTY], ks[: alv.EMPTY])
                fields = [alv.POINTS, alv.N_EMPTY, alv.N_FORCED, alv.PLAYER, alv.ROWS, alv.COLS]
                assert encoded[fields].tolist() == ks[fields].tolist()
        alv.returns(ks, returns)
        alv.scores(ks, totals)
        assert totals[:players].tolist() == [int(s) for s in state.scores()]
        assert returns[:players].tolist() == state.returns()


def test_a_squares_bonus_lines_are_the_boards_own() -> None:
    def squares(*names: str) -> int:
        return sum(1 << (8 * (int(n[1]) - 1) + "abcdefgh".index(n[0])) for n in names)

    row = squares("a1", "b1", "c1", "d1")
    column = squares("a1", "a2", "a3")
    block = squares("a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3")
    assert sorted(lines_of_square(3, 4, OVERLAPPING)[0]) == sorted((row, column, block))
    assert lines_of_square(3, 4, NO_BONUS)[0] == ()
    assert lines_of_square(3, 4, OVERLAPPING)[63] == ()  # h8 is off the board


@pytest.mark.parametrize(
    "names", [("greedy", "value"), ("hunter", "bonus_builder"), ("white_pusher", "cautious")]
)
def test_the_games_own_players_finish_a_small_board(names: tuple[str, str]) -> None:
    game = _game(layout="classic-3x4")
    agents = [make_agent(game, name, random.Random(seat)) for seat, name in enumerate(names)]
    result = play_match(game, agents, 5)
    assert result.plies == _grooves(3, 4)
    assert sum(result.stats["per_seat"][s]["square_points"] for s in (0, 1)) == 246
