"""Alquerque's weighted evaluation: the kernel's ``features`` and ``evaluate_weighted`` equal the
readable Python of ``engines.alquerque.evaluation`` on every position of random games; the
features of positions worked out by hand from docs/rules/alquerque.md; the evaluation's symmetry
between the seats; and, with no weights, the kernel's default evaluation unchanged (what
``expert`` plays today)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from engines.alquerque import kernel, kernel_weighted
from engines.alquerque.board import longest_chain
from engines.alquerque.evaluation import (
    FEATURE_NAMES,
    TUNED_WEIGHTS,
    evaluate_weighted,
    features,
    rows_ahead,
    safe_moves,
)
from engines.alquerque.rules import AlquerqueState
from engines.registry import load_game

ALQUERQUE = load_game("alquerque")
NO_WEIGHTS = np.zeros(0, dtype=np.float64)


def random_positions(games: int, seed: int) -> list[AlquerqueState]:
    """Every position (finished ones included) of ``games`` uniformly random games."""
    rng = random.Random(seed)
    positions = []
    for _ in range(games):
        state = ALQUERQUE.new_initial_state()
        positions.append(state.clone())
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
            positions.append(state.clone())
    return positions


POSITIONS = random_positions(60, seed=46)


def test_the_longest_capture_is_counted_in_pieces_taken() -> None:
    # a1 jumps b2 to c3, then d4 to e5 (the long diagonal, docs/rules/alquerque.md): two pieces.
    two = AlquerqueState.from_board(["a1"], ["b2", "d4", "a5"])
    assert kernel_weighted._longest_chain(two.white, two.black) == 2
    # Black's a5 has no jump: nothing ready.
    assert kernel_weighted._longest_chain(two.black, two.white) == 0


def test_the_kernel_longest_capture_equals_the_python_one_on_random_positions() -> None:
    for state in POSITIONS:
        for own, enemy in ((state.white, state.black), (state.black, state.white)):
            assert kernel_weighted._longest_chain(own, enemy) == longest_chain(own, enemy)


def test_the_tuned_weights_value_a_piece_up_above_a_piece_down() -> None:
    assert len(TUNED_WEIGHTS) == len(FEATURE_NAMES)
    up = AlquerqueState.from_board(["a1", "e1"], ["c5"], to_move=1)
    assert evaluate_weighted(up, 0, TUNED_WEIGHTS) > 0 > evaluate_weighted(up, 1, TUNED_WEIGHTS)


def test_the_kernel_features_equal_the_python_ones_on_random_positions() -> None:
    out = np.empty(len(FEATURE_NAMES), dtype=np.float64)
    checked = 0
    for state in POSITIONS:
        if state.is_terminal():
            continue
        encoded = kernel.encode(state)
        for seat in (0, 1):
            kernel_weighted.features(encoded, seat, out)
            assert out.tolist() == features(state, seat), (str(state), seat)
            checked += 1
    assert checked > 2000


@pytest.mark.parametrize("draw", range(3))
def test_the_kernel_weighted_evaluation_equals_the_python_one(draw: int) -> None:
    rng = np.random.default_rng(draw)
    weights = rng.normal(0.0, 0.5, len(FEATURE_NAMES))
    for state in POSITIONS:
        encoded = kernel.encode(state)
        for seat in (0, 1):
            expected = evaluate_weighted(state, seat, weights.tolist())
            assert kernel_weighted.evaluate_weighted(encoded, seat, weights) == pytest.approx(
                expected, abs=1e-12
            )


def test_without_weights_the_kernel_gives_its_default_evaluation() -> None:
    for state in POSITIONS[::7]:
        encoded = kernel.encode(state)
        for seat in (0, 1):
            assert kernel_weighted.evaluate_weighted(encoded, seat, NO_WEIGHTS) == kernel.evaluate(
                encoded, seat
            )


def test_a_position_is_worth_to_one_seat_what_it_costs_the_other() -> None:
    weights = [0.9, 0.1, 0.8, -0.4, -0.2, 0.05, -0.6, 0.03, 0.1, 0.05, -0.1, 0.3]
    for state in POSITIONS[::5]:
        assert evaluate_weighted(state, 0, weights) == pytest.approx(
            -evaluate_weighted(state, 1, weights), abs=1e-12
        )


def test_the_start_position() -> None:
    """Worked from docs/rules/alquerque.md: c3 is the only empty point; neither side can
    capture; White's four moves (b2-c3, c2-c3, d2-c3, d3-c3) each let Black capture, so none is
    safe; each side has four simple moves into c3; seven pieces each stand on a friend (rows 1
    and 2, d3 and e3 for White); b2 and d2 against b4 and d4 in the centre."""
    start = ALQUERQUE.new_initial_state()
    white = [0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
    assert features(start, 0) == white
    assert features(start, 1) == [-f if f else 0 for f in white]


def test_a_capture_ready_and_a_threat_waiting() -> None:
    """White to move; a1xc3xe3 takes b2 and d3 (a corner turned), d4xd2
    takes d3 alone: two ready. Were it Black's turn, e5xc3 and d3xd5 would each take d4 and
    stop there: a threat of one, with one White piece (d4) open to a first jump."""
    state = AlquerqueState.from_board(["a1", "d4"], ["b2", "d3", "e5"], to_move=0)
    white = dict(zip(FEATURE_NAMES, features(state, 0), strict=True))
    assert white["material"] == -1
    assert white["tempo"] == 1
    assert white["ready"] == 2
    assert white["threat"] == 1
    assert white["exposed"] == 1
    assert white["no_safe_move"] == 0
    black = dict(zip(FEATURE_NAMES, features(state, 1), strict=True))
    assert (black["material"], black["tempo"], black["ready"], black["threat"]) == (1, -1, -2, -1)


def test_safe_moves_and_a_side_with_none() -> None:
    """White c2 (no diagonals there) against Black c4: c2-c3 lets c4 jump back to c2, c2-b2 and
    c2-d2 leave Black nothing to jump: two safe moves. White c4 under Black's whole row 5: c5
    is full, so only b4 and d4, and a5xc3 or b5xb3 takes on b4, e5xc3 or d5xd3 on d4."""
    state = AlquerqueState.from_board(["c2"], ["c4"], to_move=0)
    assert safe_moves(state.white, state.black, 0) == 2
    f = dict(zip(FEATURE_NAMES, features(state, 0), strict=True))
    assert (f["safe_moves"], f["no_safe_move"]) == (2, 0)
    cornered = AlquerqueState.from_board(["c4"], ["a5", "b5", "c5", "d5", "e5"], to_move=0)
    assert safe_moves(cornered.white, cornered.black, 0) == 0
    g = dict(zip(FEATURE_NAMES, features(cornered, 0), strict=True))
    assert (g["safe_moves"], g["no_safe_move"], g["far_row"]) == (0, 1, 0)
    only_stuck = [0.0] * 6 + [-1.0] + [0.0] * 5
    assert evaluate_weighted(cornered, 0, only_stuck) == pytest.approx(math.tanh(-0.5))


def test_the_compiled_search_hands_alquerques_weights_to_the_weighted_evaluation() -> None:
    from engines.compiled import dispatch_alphabeta
    from engines.compiled.dispatch import ALQUERQUE as ALQUERQUE_ID

    weights = np.array(TUNED_WEIGHTS, dtype=np.float64)
    for state in POSITIONS[::7]:
        encoded = kernel.encode(state)
        for seat in (0, 1):
            searched = dispatch_alphabeta.evaluate_weighted(ALQUERQUE_ID, encoded, seat, weights)
            assert searched == pytest.approx(evaluate_weighted(state, seat, TUNED_WEIGHTS))
            plain = dispatch_alphabeta.evaluate_weighted(ALQUERQUE_ID, encoded, seat, NO_WEIGHTS)
            assert plain == kernel.evaluate(encoded, seat)


def test_spare_moves_count_the_rows_ahead_weighted_by_the_pieces_taken() -> None:
    """Pieces never move back (docs/rules/alquerque.md): White, moving up from row 1, has 5 - r
    rows ahead of a piece on row r, Black r - 1. White a1: 4. Black b2, d4, a5: 1 + 3 + 4 = 8.
    20 of the 24 starting pieces are gone, so White's spare term is (4 - 8) x 20 / 24."""
    state = AlquerqueState.from_board(["a1"], ["b2", "d4", "a5"], to_move=0)
    assert rows_ahead(state.white, 0) == 4
    assert rows_ahead(state.black, 1) == 8
    white = dict(zip(FEATURE_NAMES, features(state, 0), strict=True))
    black = dict(zip(FEATURE_NAMES, features(state, 1), strict=True))
    assert white["spare"] == pytest.approx(-10 / 3)
    assert black["spare"] == pytest.approx(10 / 3)
    # One piece each, White c2 (3 ahead) and Black c4 (3 ahead): level, however few are left.
    level = AlquerqueState.from_board(["c2"], ["c4"], to_move=0)
    assert dict(zip(FEATURE_NAMES, features(level, 0), strict=True))["spare"] == 0
    # The same one-against-one race with White a row further back: one slide more in reserve,
    # worth 22 / 24 of a slide with 22 pieces gone.
    behind = AlquerqueState.from_board(["c1"], ["c4"], to_move=0)
    spare = dict(zip(FEATURE_NAMES, features(behind, 0), strict=True))["spare"]
    assert spare == pytest.approx(22 / 24)
