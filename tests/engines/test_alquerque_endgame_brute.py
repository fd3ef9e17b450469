"""Alquerque's endgame table against a brute-force minimax written apart from it.

The minimax takes its moves and their results only from the readable rules
(``engines.alquerque.rules``) and decides the endings itself, as the table defines them
(``engines/alquerque/endgame.py``; the repetition rule is left out): the side to move with no
legal move loses, even at budget 0; otherwise budget 0 is a draw; a capture gives the opponent
the whole ``limit`` again, a slide gives it ``budget - 1``. Small limits keep it fast.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from functools import cache

import numpy as np
import pytest

from engines.alquerque.endgame import build_table, outcome
from engines.alquerque.rules import AlquerqueState

POINTS = 25
NAMES = tuple("abcde"[p % 5] + str(p // 5 + 1) for p in range(POINTS))
WIN, DRAW, LOSS = 1, 0, -1

Child = tuple[int, int, bool]
"""White's and Black's bitboards after a move, and whether the move captured."""
Solver = Callable[[int, int, int, int], int]
"""(white, black, to_move, budget) -> the side to move's WIN, DRAW or LOSS."""


def names_of(bits: int) -> list[str]:
    return [NAMES[p] for p in range(POINTS) if bits >> p & 1]


def bits_of(names: list[str]) -> int:
    return sum(1 << NAMES.index(name) for name in names)


def describe(white: int, black: int, to_move: int, budget: int) -> str:
    side = "White" if to_move == 0 else "Black"
    return f"W {names_of(white)} B {names_of(black)}, {side} to move, budget {budget}"


@cache
def children(white: int, black: int, to_move: int) -> tuple[Child, ...]:
    """Every legal move's result, from the rules (they do not depend on the budget)."""
    state = AlquerqueState.from_board(names_of(white), names_of(black), to_move)
    result = []
    for action in state.legal_actions():
        after = state.clone()
        after.apply(action)
        # The rules' own ending flags are ignored: they carry repetition and their own counter.
        enemy_before, enemy_after = (black, after.black) if to_move == 0 else (white, after.white)
        captured = enemy_after.bit_count() < enemy_before.bit_count()
        result.append((after.white, after.black, captured))
    return tuple(result)


def make_solver(limit: int) -> Solver:
    """A memoised minimax for one no-capture ``limit``: the side to move's WIN, DRAW or LOSS."""

    @cache
    def value(white: int, black: int, to_move: int, budget: int) -> int:
        moves = children(white, black, to_move)
        if not moves:
            return LOSS  # checked before the draw, and a side with no piece has no move
        if budget == 0:
            return DRAW
        best = LOSS
        for after_white, after_black, captured in moves:
            # Every step lowers the budget or the piece count, so the recursion ends.
            next_budget = limit if captured else budget - 1
            best = max(best, -value(after_white, after_black, 1 - to_move, next_budget))
            if best == WIN:
                break
        return best

    return value


def piece_sets(count: int, taken: int = 0) -> Iterator[int]:
    """Every set of ``count`` points that avoids the points of ``taken``."""
    free = [p for p in range(POINTS) if not taken >> p & 1]
    for combo in itertools.combinations(free, count):
        yield sum(1 << p for p in combo)


def positions(max_pieces: int) -> Iterator[tuple[int, int, int]]:
    """Every (white, black, to_move) with both sides on the board, ``max_pieces`` at most."""
    for total in range(2, max_pieces + 1):
        for n_white in range(1, total):
            for white in piece_sets(n_white):
                for black in piece_sets(total - n_white, white):
                    yield white, black, 0
                    yield white, black, 1


def disagreements(limit: int, max_pieces: int) -> tuple[int, list[str]]:
    """Positions checked, and those where the table and the minimax differ."""
    table = build_table(limit=limit, max_pieces=max_pieces)
    value = make_solver(limit)
    checked = 0
    found = []
    for white, black, to_move in positions(max_pieces):
        for budget in range(limit + 1):
            expected = value(white, black, to_move, budget)
            got = outcome(table, white, black, to_move, budget)
            checked += 1
            if got != expected:
                found.append(
                    f"{describe(white, black, to_move, budget)}: table {got}, brute {expected}"
                )
    return checked, found


def report(found: list[str], checked: int) -> str:
    shown = "\n".join(found[:20])
    return f"{len(found)} of {checked} positions differ, the first:\n{shown}"


@pytest.mark.parametrize(("limit", "max_pieces"), [(1, 3), (6, 3), (50, 2)])
def test_table_matches_brute_force(limit: int, max_pieces: int) -> None:
    checked, found = disagreements(limit, max_pieces)
    assert checked > 0
    assert not found, report(found, checked)


# Positions worked out by hand from docs/rules/alquerque.md, each with its value for the side
# to move at budgets 0, 1, 2 and 3 of limit 6.
HAND_WORKED = [
    # White's a5 may only slide sideways, to b5, which is taken; c5 behind it blocks the jump,
    # and a4, b4 are empty: no move, lost even at budget 0.
    (["a5"], ["b5", "c5"], 0, [LOSS, LOSS, LOSS, LOSS]),
    # a1xc3 takes Black's last piece; at budget 0 the no-capture draw has already come.
    (["a1"], ["b2"], 0, [DRAW, WIN, WIN, WIN]),
    # a1xc3xe5 turns no corner but takes both pieces in one chain.
    (["a1"], ["b2", "d4"], 0, [DRAW, WIN, WIN, WIN]),
    # Black's sideways d5-c5 leaves White's a5 boxed in: it loses even on the draw's ply.
    (["a5"], ["b5", "d5"], 1, [DRAW, WIN, WIN, WIN]),
    # White's only move, a5-b5, walks into c5xa5: lost once Black has a ply left to capture.
    (["a5"], ["c5"], 0, [DRAW, DRAW, LOSS, LOSS]),
    # Black must take e5xc5 and the capture restarts the count, so White then meets the
    # position above with the whole limit: a win for Black from budget 1.
    (["a5", "d5"], ["e5"], 1, [DRAW, WIN, WIN, WIN]),
]


@pytest.fixture(scope="module")
def small_table() -> np.ndarray:
    return build_table(limit=6, max_pieces=3)


@pytest.mark.parametrize(("white", "black", "to_move", "values"), HAND_WORKED)
def test_hand_worked_positions(
    small_table: np.ndarray, white: list[str], black: list[str], to_move: int, values: list[int]
) -> None:
    brute = make_solver(6)
    w, b = bits_of(white), bits_of(black)
    for budget, expected in enumerate(values):
        where = describe(w, b, to_move, budget)
        assert brute(w, b, to_move, budget) == expected, f"brute force, {where}"
        assert outcome(small_table, w, b, to_move, budget) == expected, f"table, {where}"
