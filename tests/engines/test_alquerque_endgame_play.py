"""The compiled search on Alquerque's solved endings (``engines.alquerque.endgame``): what the
table says of an ending happens on the board, under the full rules (the no-capture limit and
the repetition rule the table leaves out), with the search playing both sides from it.

The table's values themselves are checked against a brute force written apart
(``test_alquerque_endgame_brute.py``); here, its use by the search."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from repo_paths import REPO

from engines.alquerque.board import point_name
from engines.alquerque.endgame import (
    DRAW,
    LOSS,
    MAX_PIECES,
    WIN,
    build_table,
    index_of,
    outcome,
    probe,
    search_table,
    table_loader,
    table_size,
)
from engines.alquerque.evaluation import TUNED_WEIGHTS
from engines.alquerque.kernel import encode
from engines.alquerque.rules import AlquerqueState
from engines.compiled import search_negamax
from engines.compiled.agent_alphabeta import CompiledAlphaBetaAgent
from engines.compiled.kernels import kernel_id
from engines.registry import load_game

GAME = load_game("alquerque")
NUMBERS = {4: "four", 5: "five", 6: "six"}


def _names(bits: int) -> list[str]:
    return [point_name(p) for p in range(25) if bits >> p & 1]


def _random_endings(
    pieces: tuple[int, int], want: int, count: int, seed: int
) -> list[tuple[int, int, int]]:
    """``count`` positions of ``pieces`` (White's, Black's) that the table gives ``want`` for
    the side to move at a full budget, none over at once."""
    rng = random.Random(seed)
    found: list[tuple[int, int, int]] = []
    while len(found) < count:
        points = rng.sample(range(25), sum(pieces))
        white = sum(1 << p for p in points[: pieces[0]])
        black = sum(1 << p for p in points[pieces[0] :])
        to_move = rng.randrange(2)
        state = AlquerqueState.from_board(_names(white), _names(black), to_move)
        if state.is_terminal():
            continue
        if outcome(search_table(), white, black, to_move, 50) == want:
            found.append((white, black, to_move))
    return found


def _play_out(white: int, black: int, to_move: int, seed: int) -> AlquerqueState:
    """The search with the table plays both sides from the position to the game's end."""
    state = AlquerqueState.from_board(_names(white), _names(black), to_move)
    rng = random.Random(seed)
    agent = CompiledAlphaBetaAgent(
        GAME,
        rng,
        depth=16,
        nodes=5_000,
        quiescence=8,
        weights=TUNED_WEIGHTS,
        extend_single=True,
        compulsory=True,
        endgame=table_loader(GAME),
    )
    while not state.is_terminal():
        state.apply(agent.step(state))
    return state


@pytest.mark.parametrize("pieces", [(2, 1), (2, 2), (3, 2)])
def test_a_won_ending_is_won_on_the_board_against_the_best_defence(
    pieces: tuple[int, int],
) -> None:
    for i, (white, black, to_move) in enumerate(_random_endings(pieces, WIN, 6, seed=sum(pieces))):
        end = _play_out(white, black, to_move, seed=i)
        assert end.ended == "normal", (_names(white), _names(black), to_move, end.ended)
        assert end.returns()[to_move] == 1.0


@pytest.mark.parametrize("pieces", [(1, 2), (2, 2)])
def test_a_lost_ending_is_lost_and_a_drawn_one_is_not_lost(pieces: tuple[int, int]) -> None:
    for i, (white, black, to_move) in enumerate(_random_endings(pieces, LOSS, 4, seed=7)):
        assert _play_out(white, black, to_move, seed=i).returns()[to_move] == 0.0
    for i, (white, black, to_move) in enumerate(_random_endings(pieces, DRAW, 4, seed=8)):
        assert _play_out(white, black, to_move, seed=i).returns()[to_move] == 0.5


def test_the_probe_decides_wins_and_losses_by_the_plies_left_and_leaves_draws_to_the_search() -> (
    None
):
    table = search_table()
    (white, black, to_move) = _random_endings((2, 1), WIN, 1, seed=3)[0]
    state = AlquerqueState.from_board(_names(white), _names(black), to_move)
    encoded = encode(state)
    code = probe(table, encoded)
    assert code > 0
    # The code is the fewest plies left with which the side to move still wins.
    encoded[3] = 50 - code  # NO_CAPTURE: exactly ``code`` plies left
    assert probe(table, encoded) == code
    encoded[3] = 50 - code + 1
    assert probe(table, encoded) == 0
    assert outcome(table, white, black, to_move, code - 1) == DRAW
    # Positions of more pieces than the table holds are left to the search.
    start = encode(GAME.new_initial_state())
    assert probe(table, start) == 0


def test_only_the_default_no_capture_limit_gets_the_table() -> None:
    assert table_loader(GAME) is search_table
    assert table_loader(load_game("alquerque", no_capture_limit=30)) is None


def test_a_smaller_table_is_a_prefix_of_a_larger_one() -> None:
    small = build_table(50, 4)
    assert np.array_equal(small, search_table()[: small.shape[0]])


def test_the_alquerque_rules_doc_gives_the_tables_size() -> None:
    page = (REPO / "docs" / "rules" / "alquerque.md").read_text()
    assert f"every position of up to {NUMBERS[MAX_PIECES]} pieces" in page
    assert f"{table_size(MAX_PIECES):,} entries" in page


def test_at_the_horizon_the_root_seat_s_solved_wins_take_the_table_s_value() -> None:
    """One ply deep, a root move whose position the table loses for the opponent is worth
    ``SOLVED`` less the plies the win needs; every other move keeps its evaluation (a table's
    draw or a loss of the root's seat is searched, not taken from it)."""
    table = search_table()
    checked = 0
    for white, black, to_move in _random_endings((2, 2), WIN, 8, seed=11):
        state = AlquerqueState.from_board(_names(white), _names(black), to_move)
        moves, values, _, _ = search_negamax.search(
            kernel_id("alquerque"), encode(state), 1, 0, 0, np.asarray(TUNED_WEIGHTS),
            0.0, 0, math.inf, 14, 0.0, True, True, table,
        )  # fmt: skip
        for action, value in zip(moves.tolist(), values.tolist(), strict=True):
            child = state.clone()
            child.apply(action)
            if child.is_terminal():
                continue
            assert isinstance(child, AlquerqueState)
            budget = child.limit - child.no_capture
            theirs = outcome(table, child.white, child.black, child.to_move, budget)
            if theirs == LOSS:
                code = int(table[index_of(child.white, child.black, child.to_move)])
                # Lost from ``-code - 1`` plies left: the win needs that many more.
                assert value == search_negamax.SOLVED - (-code - 1)
                checked += 1
            else:
                assert abs(value) < 1.0
    assert checked > 0
