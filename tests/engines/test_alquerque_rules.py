"""Alquerque rules against the facts of docs/rules/alquerque.md, plus invariants of play."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from legal_moves import names, perft

from engines.alquerque.board import decode_path, point_of
from engines.alquerque.rules import AlquerqueState
from engines.core import IllegalActionError, NotationError
from engines.registry import load_game


def position(white: list[str], black: list[str], to_move: int = 0, **options: int):
    game = load_game("alquerque", **options)
    return AlquerqueState.from_board(white, black, to_move, game=game)


# --------------------------------------------------------------------------- facts


def test_opening_has_exactly_four_moves() -> None:
    state = load_game("alquerque").new_initial_state()
    assert names(state) == ["b2-c3", "c2-c3", "d2-c3", "d3-c3"]
    assert state.current_player() == 0


def test_after_any_opening_black_must_capture() -> None:
    start = load_game("alquerque").new_initial_state()
    for action in start.legal_actions():
        state = start.clone()
        state.apply_action(action)
        assert state.current_player() == 1
        moves = names(state)
        assert moves and all("x" in m and "-" not in m for m in moves)


def test_perft_depths_1_to_8() -> None:
    start = load_game("alquerque").new_initial_state()
    assert [perft(start, d) for d in range(1, 9)] == [4, 5, 6, 12, 27, 97, 426, 1924]


def test_start_board_text() -> None:
    text = str(load_game("alquerque").new_initial_state())
    assert "3  b b . w w" in text
    assert "white (seat 0) to move" in text


# --------------------------------------------------------------------------- moves


def test_multi_capture_changes_direction_and_removes_pieces() -> None:
    state = position(["a1"], ["b2", "d3"])
    assert names(state) == ["a1xc3xe3"]
    state.apply_string("A1XC3XE3")  # input is case-insensitive
    assert state.key() == (1 << point_of("e3"), 0, 1)
    assert state.is_terminal() and state.returns() == [1.0, 0.0]
    assert state.stats()["per_seat"][0] == {"pieces": 1, "captures": 2, "longest_chain": 2}


def test_no_longest_capture_rule_and_capture_is_compulsory() -> None:
    state = position(["a1", "e1", "a4"], ["b2", "d1"])
    # a4 has simple moves, but a capture exists, so only captures are legal, short or long.
    assert names(state) == ["a1xc3", "e1xc1xa3"]


def test_simple_moves_never_go_backwards() -> None:
    white = position(["c3"], ["a5"])
    assert sorted(names(white)) == ["c3-b3", "c3-b4", "c3-c4", "c3-d3", "c3-d4"]
    black = position(["a1"], ["c3"], to_move=1)
    assert sorted(names(black)) == ["c3-b2", "c3-b3", "c3-c2", "c3-d2", "c3-d3"]
    no_diagonals = position(["b3"], ["e5"])
    assert sorted(names(no_diagonals)) == ["b3-a3", "b3-b4", "b3-c3"]


def test_last_row_piece_only_slides_sideways() -> None:
    state = position(["c5"], ["a1"])
    assert sorted(names(state)) == ["c5-b5", "c5-d5"]


def test_captures_go_backwards() -> None:
    state = position(["c3"], ["c2", "e5"])
    assert names(state) == ["c3xc1"]


def test_notation_errors() -> None:
    state = load_game("alquerque").new_initial_state()
    assert state.string_to_action(" D2-C3 ") == state.string_to_action("d2-c3")
    for garbage in ["", "b2", "z9-a1", "b2-c3-d4", "b2--c3", "hello"]:
        with pytest.raises(NotationError):
            state.string_to_action(garbage)
    for illegal in ["b2xc3", "a1-a2", "c2-c4"]:
        with pytest.raises(IllegalActionError):
            state.string_to_action(illegal)


def test_from_board_rejects_bad_points() -> None:
    with pytest.raises(ValueError, match="twice"):
        AlquerqueState.from_board(["a1", "A1"], ["e5"])
    with pytest.raises(ValueError, match="not a point"):
        AlquerqueState.from_board(["f1"], ["e5"])


# --------------------------------------------------------------------------- endings


def test_loss_when_no_piece_left() -> None:
    state = position(["a1"], ["b1"])
    state.apply_string("a1xc1")
    assert state.is_terminal() and state.current_player() == -1
    assert state.returns() == [1.0, 0.0] and state.ended_by() == "normal"
    assert state.legal_actions() == [] and state.scores() == [1.0, 0.0]


def test_loss_when_blocked_comes_before_draw_rules() -> None:
    # Black's a1 is on its last row, boxed in; White's quiet move would hit the no-capture
    # limit of 1, but the side with no move loses first.
    state = position(["b1", "a2", "b2", "c1", "a3", "c3", "e3"], ["a1"], no_capture_limit=1)
    state.apply_string("e3-e4")
    assert state.is_terminal() and state.returns() == [1.0, 0.0]
    assert state.ended_by() == "normal"


def test_blocked_at_start_of_turn_is_terminal() -> None:
    state = position(["b1", "a2", "b2", "c1", "a3", "c3"], ["a1"], to_move=1)
    assert state.is_terminal() and state.returns() == [1.0, 0.0]


SHUFFLE = ["a1-b1", "e5-d5", "b1-a1", "d5-e5"]


def test_draw_after_no_capture_limit() -> None:
    state = position(["a1"], ["e5"], no_capture_limit=4)
    for move in SHUFFLE[:3]:
        state.apply_string(move)
        assert not state.is_terminal()
    state.apply_string(SHUFFLE[3])
    assert state.is_terminal() and state.ended_by() == "no_capture"
    assert state.returns() == [0.5, 0.5]


def test_draw_on_third_occurrence_counting_the_start() -> None:
    state = position(["a1"], ["e5"])
    for move in SHUFFLE + SHUFFLE[:3]:
        state.apply_string(move)
        assert not state.is_terminal()
    state.apply_string(SHUFFLE[3])  # the start position for the third time
    assert state.is_terminal() and state.ended_by() == "repetition"
    assert state.returns() == [0.5, 0.5]


def test_repetition_counts_again_after_forward_moves() -> None:
    state = position(["a1", "e1"], ["e5", "a5"])
    for move in SHUFFLE:
        state.apply_string(move)
    state.apply_string("e1-e2")  # irreversible: history restarts here
    state.apply_string("a5-a4")
    for move in SHUFFLE + SHUFFLE[:3]:
        state.apply_string(move)
        assert not state.is_terminal()
    state.apply_string(SHUFFLE[3])
    assert state.ended_by() == "repetition"


def test_no_capture_limit_option_is_validated() -> None:
    with pytest.raises(ValueError, match="no_capture_limit"):
        load_game("alquerque", no_capture_limit=0)


# --------------------------------------------------------------------------- properties


def rows(bits: int) -> list[int]:
    return [p // 5 for p in range(25) if bits >> p & 1]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(0, 80))
def test_play_invariants(seed: int, plies: int) -> None:
    rng = random.Random(seed)
    state = load_game("alquerque").new_initial_state()
    for _ in range(plies):
        if state.is_terminal():
            break
        mover = state.current_player()
        action = rng.choice(state.legal_actions())
        path = decode_path(action)
        own_before, enemy_before = (
            (state.white, state.black) if mover == 0 else (state.black, state.white)
        )
        state.apply(action)
        own_after, enemy_after = (
            (state.white, state.black) if mover == 0 else (state.black, state.white)
        )
        assert own_after & enemy_after == 0
        assert own_after.bit_count() == own_before.bit_count()
        assert own_after == own_before ^ (1 << path[0]) ^ (1 << path[-1])
        assert own_after >> path[-1] & 1
        jumped = {(a + b) // 2 for a, b in itertools.pairwise(path)}
        is_capture = "x" in state.action_to_string(action)
        if is_capture:
            expected = enemy_before
            for p in jumped:
                assert enemy_before >> p & 1
                expected &= ~(1 << p)
            assert enemy_after == expected
        else:
            assert enemy_after == enemy_before
            forward = (path[1] // 5 - path[0] // 5) * (1 if mover == 0 else -1)
            assert forward >= 0
    per_seat = state.stats()["per_seat"]
    for seat in (0, 1):
        assert per_seat[seat]["captures"] == 12 - per_seat[1 - seat]["pieces"]
        assert per_seat[seat]["longest_chain"] <= per_seat[seat]["captures"]
    returns = state.returns()
    assert sum(returns) == 1.0 and all(0.0 <= r <= 1.0 for r in returns)
    value = state.evaluate(0)
    assert -1.0 <= value <= 1.0
    assert state.ordered_actions() == sorted(state.legal_actions(), reverse=True)


# --------------------------------------------------------------------------- levels


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_levels_play_legal_reproducible_moves(level: str) -> None:
    from engines.core import agent_rng, play_match
    from engines.registry import make_agent

    game = load_game("alquerque")
    spec = {"name": level, "nodes": 400} if level == "hard" else {"name": level}

    def moves() -> tuple[str, ...]:
        agents = [make_agent(game, spec, agent_rng(8, s)) for s in range(2)]
        return play_match(game, agents, seed=8, max_plies=16).moves

    assert moves() == moves()


def test_greedy_easy_takes_the_winning_capture() -> None:
    from engines.alquerque.agents import EasyAgent

    state = position(["a1", "e1"], ["b2", "d1"])
    agent = EasyAgent(load_game("alquerque"), random.Random(0), greedy_share=1.0)
    assert state.action_to_string(agent.step(state)) == "e1xc1xa3"


def test_hard_evaluation_counts_ready_chains() -> None:
    from engines.alquerque.agents import capture_aware_evaluation

    # White's double capture is worth more when White is the one to move.
    white_to_move = position(["a1", "e5"], ["b2", "d3", "a5"], to_move=0)
    black_to_move = position(["a1", "e5"], ["b2", "d3", "a5"], to_move=1)
    assert capture_aware_evaluation(white_to_move, 0) > capture_aware_evaluation(black_to_move, 0)
    assert capture_aware_evaluation(white_to_move, 1) < capture_aware_evaluation(black_to_move, 1)
