"""Kalah against its docs/rules.md, the engine contract, and hand-solved boards.

Every expected value here is worked out by hand from the rules, move by move, in the comments.
"""

from __future__ import annotations

import random

import pytest
from kalah.solver import margin

from engines.contract import (
    IllegalActionError,
    NotationError,
    OptionError,
    play_match,
    replay,
)
from engines.registry import load_game, make_agent
from engines.testing import assert_conforms


def test_a_move_into_ones_own_store_plays_again() -> None:
    # K2, K3: 6 houses of 4; seat 0's third house sows into houses 4, 5, 6 and its store.
    state = replay(load_game("kalah"), ["3"])
    assert state.pits == [4, 4, 0, 5, 5, 5, 1, 4, 4, 4, 4, 4, 4, 0]
    assert state.current_player() == 0
    # Its sixth house (5 seeds) then reaches the store and four of seat 1's houses.
    state.apply_string("6")
    assert state.pits == [4, 4, 0, 5, 5, 0, 2, 5, 5, 5, 5, 4, 4, 0]
    assert state.current_player() == 1


def test_sowing_skips_the_opponents_store_and_captures_into_an_empty_house() -> None:
    # K2, K4, K5: one house of 3 each. Seat 0 sows its store, seat 1's house, skips seat 1's
    # store, and its last seed lands in its own emptied house: it takes that seed and the
    # 4 opposite. Both rows are then empty: 6 to 0.
    state = replay(load_game("kalah", houses=1, seeds=3), ["1"])
    assert state.is_terminal()
    assert state.scores() == [6.0, 0.0] and state.returns() == [1.0, 0.0]


def test_an_empty_row_ends_the_game_and_the_rest_go_home() -> None:
    # 2 houses of 1: "2" ends in the store (another turn), "1" lands in the empty second
    # house and takes seat 1's opposite seed: 3 in the store, seat 0's row empty, seat 1's
    # remaining seed goes to its store: 3 to 1.
    state = replay(load_game("kalah", houses=2, seeds=1), ["2", "1"])
    assert state.is_terminal() and state.scores() == [3.0, 1.0]


def test_notation_and_illegal_moves() -> None:
    state = load_game("kalah", houses=3, seeds=2).new_initial_state()
    assert [state.action_to_string(a) for a in state.legal_actions()] == ["1", "2", "3"]
    for text in ["0", "4", "x", ""]:
        with pytest.raises(NotationError):
            state.string_to_action(text)
    # Seat 0's first house sows into its second and third (turn passes); seat 1's first the
    # same on its side; seat 0's first house is then empty, so "1" is not a move.
    state.apply_string("1")
    state.apply_string("1")
    assert state.pits == [0, 3, 3, 0, 0, 3, 3, 0] and state.current_player() == 0
    with pytest.raises(IllegalActionError):
        state.apply_string("1")


@pytest.mark.parametrize(("houses", "seeds"), [(6, 4), (3, 3), (1, 1), (8, 8)])
def test_kalah_follows_the_engine_contract(houses: int, seeds: int) -> None:
    assert_conforms("kalah", games=150, options={"houses": houses, "seeds": seeds})


@pytest.mark.parametrize(
    ("houses", "seeds", "value"),
    [
        (1, 1, 0),  # seat 0 sows into its store, its row is empty: 1 to 1
        (1, 2, -2),  # seat 0's 2 seeds: one stored, one to seat 1, which then holds 3: 1 to 3
        (2, 1, 2),  # "2" then "1" captures (above): 3 to 1, and "1" first gives 1 to 3
    ],
)
def test_the_solver_finds_the_hand_solved_values(houses: int, seeds: int, value: int) -> None:
    assert margin(load_game("kalah", houses=houses, seeds=seeds).new_initial_state()) == value


def test_perfect_play_secures_the_solved_margin_against_anyone() -> None:
    game = load_game("kalah", houses=3, seeds=2)
    solved = margin(game.new_initial_state())
    for seed in range(20):
        rng = random.Random(seed)
        agents = [make_agent(game, "perfect", rng), make_agent(game, "random", rng)]
        result = play_match(game, agents, seed)
        assert result.scores[0] - result.scores[1] >= solved


def test_perfect_refuses_a_board_too_big_to_solve() -> None:
    with pytest.raises(OptionError, match="up to 24 seeds"):
        make_agent(load_game("kalah"), "perfect")
