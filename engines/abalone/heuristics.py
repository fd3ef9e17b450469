"""What the computer players know about Abalone: the evaluation, move ordering, playouts.

The evaluation is decision B7 of docs/rules/abalone.md (after Lemmens 2005 and Ozcan &
Hulagu): marbles pushed off, distance of the marbles from the centre, cohesion (adjacent
friendly pairs) and marbles on the edge that the opponent could push off at once. Every term
is computed on whole bitboards.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from engines.abalone.board import (
    CENTRE_GAIN,
    KIND_BROAD2,
    KIND_INLINE2,
    OFFSETS,
    RINGS,
    STRIDE,
    VALID,
    Bitboard,
    shift,
)
from engines.core import Action, Seat


class Rules(Protocol):
    """What the heuristics read of the game (:class:`engines.abalone.rules.AbaloneGame`)."""

    num_players: int
    marbles_to_win: int


class AbaloneState(Protocol):
    """What the heuristics read of a position: the state's read API
    (:class:`engines.abalone.rules.AbaloneState`)."""

    @property
    def game(self) -> Rules: ...

    @property
    def pushed_off(self) -> Sequence[int]: ...

    @property
    def lost(self) -> Sequence[int]: ...

    @property
    def placing(self) -> bool: ...

    def board(self, seat: Seat) -> Bitboard: ...

    def opponents(self, seat: Seat) -> Bitboard: ...

    def legal_actions(self) -> list[Action]: ...

    def current_player(self) -> Seat: ...


EDGE_OUT: tuple[Bitboard, ...] = tuple(VALID & ~shift(VALID, -k) for k in OFFSETS)
"""Per direction, the cells whose next cell that way is off the board."""
_INLINE_LOW = KIND_INLINE2 * STRIDE
_INLINE_HIGH = KIND_BROAD2 * STRIDE  # moves of 2 or 3 along their line: the only pushes


@dataclass(frozen=True)
class Weights:
    """Weights of the evaluation's four terms (each term lies in about [-1, 1])."""

    marbles: float = 1.0
    centre: float = 0.3
    cohesion: float = 0.15
    danger: float = 0.2


DEFAULT_WEIGHTS = Weights()


_R1, _R2, _R3, _R4 = RINGS[1], RINGS[2], RINGS[3], RINGS[4]


def centre_distance(board: Bitboard) -> float:
    """Mean distance of the marbles from the centre E5 (0 … 4)."""
    count = board.bit_count()
    if not count:
        return 4.0
    total = (
        (board & _R1).bit_count()
        + 2 * (board & _R2).bit_count()
        + 3 * (board & _R3).bit_count()
        + 4 * (board & _R4).bit_count()
    )
    return total / count


def cohesion(board: Bitboard) -> float:
    """Adjacent friendly pairs per marble (0 … 3)."""
    count = board.bit_count()
    if not count:
        return 0.0
    pairs = (
        (board & (board >> 1)).bit_count()
        + (board & (board >> 11)).bit_count()
        + (board & (board >> 10)).bit_count()
    )
    return pairs / count


_EDGE_STEPS = tuple(zip(OFFSETS, EDGE_OUT, strict=True))


def threatened(own: Bitboard, enemy: Bitboard) -> int:
    """Marbles of ``own`` on the edge that ``enemy`` could push off with its next move.

    A line of two or three enemy marbles facing an own marble with the board's edge right
    behind it (2 v 1, 3 v 1), or three facing two own marbles with the edge behind them (3 v 2).
    """
    hit = 0
    for k, edge in _EDGE_STEPS:
        if k > 0:
            heads2 = enemy & (enemy << k)
            front = (heads2 << k) & own
            if front:
                hit |= front & edge
                second = ((front & (heads2 << 2 * k)) << k) & own
                hit |= second & edge
        else:
            heads2 = enemy & (enemy >> -k)
            front = (heads2 >> -k) & own
            if front:
                hit |= front & edge
                second = ((front & (heads2 >> -2 * k)) >> -k) & own
                hit |= second & edge
    return hit.bit_count()


_BOARD_TERMS: dict[Bitboard, tuple[float, float]] = {}
"""(−centre distance, cohesion) by bitboard: a search meets the same board of one side in many
leaves. Exact values, so a hit changes nothing; cleared when it grows past ``_CACHE_SIZE``."""
_CACHE_SIZE = 200_000


def _board_terms(board: Bitboard) -> tuple[float, float]:
    terms = _BOARD_TERMS.get(board)
    if terms is None:
        if len(_BOARD_TERMS) >= _CACHE_SIZE:
            _BOARD_TERMS.clear()
        terms = _BOARD_TERMS[board] = (-centre_distance(board), cohesion(board))
    return terms


def _terms(state: AbaloneState, seat: Seat) -> tuple[float, float, float]:
    """(centre, cohesion, danger) of ``seat``: larger is better for that seat."""
    own = state.board(seat)
    danger = 0.0
    for other in range(state.game.num_players):
        if other != seat:
            danger += threatened(own, state.board(other))
    centre, together = _board_terms(own)
    return centre, together, -danger


def evaluate(state: AbaloneState, seat: Seat, weights: Weights) -> float:
    """Heuristic value of a position in play for ``seat``, in [-0.99, 0.99].

    Each term is ``seat``'s figure minus the mean of its opponents': marbles (pushed off minus
    lost, over the marbles needed to win), centre distance (over 4), cohesion (over 3), edge
    marbles under threat (over 3).
    """
    n = state.game.num_players
    goal = state.game.marbles_to_win
    pushed, lost = state.pushed_off, state.lost
    if n == 2:
        # The same sums as below with one opponent, without the lists: the search's leaves.
        own_board, enemy_board = state.board(seat), state.board(1 - seat)
        own_c, own_h = _board_terms(own_board)
        enemy_c, enemy_h = _board_terms(enemy_board)
        own_d = -(0.0 + threatened(own_board, enemy_board))
        enemy_d = -(0.0 + threatened(enemy_board, own_board))
        material = (pushed[seat] - lost[seat]) / goal
        value = (
            weights.marbles * material
            + weights.centre * (own_c - enemy_c) / 4.0
            + weights.cohesion * (own_h - enemy_h) / 3.0
            + weights.danger * (own_d - enemy_d) / 3.0
        )
        return max(-0.99, min(0.99, value))
    own = _terms(state, seat)
    others = [_terms(state, s) for s in range(n) if s != seat]
    mean = [sum(t[i] for t in others) / len(others) for i in range(3)]
    rival = max(pushed[s] for s in range(n) if s != seat)
    material = (pushed[seat] - rival - 0.5 * lost[seat]) / goal
    value = (
        weights.marbles * material
        + weights.centre * (own[0] - mean[0]) / 4.0
        + weights.cohesion * (own[1] - mean[1]) / 3.0
        + weights.danger * (own[2] - mean[2]) / 3.0
    )
    return max(-0.99, min(0.99, value))


_PUSH_STEP: list[int] = [0] * (KIND_BROAD2 * STRIDE)
for _action in range(_INLINE_LOW, _INLINE_HIGH):
    _PUSH_STEP[_action] = OFFSETS[(_action >> 7) % 6]
del _action


def push_class(state: AbaloneState, action: Action, enemy: Bitboard) -> int:
    """2 if ``action`` pushes a marble off the board, 1 if it pushes without ejecting, else 0."""
    if not _INLINE_LOW <= action < _INLINE_HIGH:
        return 0
    k = _PUSH_STEP[action]
    target = (action & 127) + k
    if not enemy >> target & 1:
        return 0
    after = target + k
    if enemy >> after & 1:
        after += k
    return 1 if VALID >> after & 1 else 2


def ordered_actions(state: AbaloneState) -> list[Action]:
    """Ejections first, then other pushes, then the rest by how far they bring marbles
    toward the centre (ties in action order)."""
    legal = state.legal_actions()
    if state.placing or not legal:
        return legal
    enemy = state.opponents(state.current_player())
    ejections: list[Action] = []
    pushes: list[Action] = []
    step = _PUSH_STEP
    low, high = _INLINE_LOW, _INLINE_HIGH
    for action in legal:
        if low <= action < high:
            k = step[action]
            target = (action & 127) + k
            if enemy >> target & 1:
                after = target + k
                if enemy >> after & 1:
                    after += k
                (pushes if VALID >> after & 1 else ejections).append(action)
    legal.sort(key=CENTRE_GAIN.__getitem__, reverse=True)
    if not ejections and not pushes:
        return legal
    first = set(ejections) | set(pushes)
    return ejections + pushes + [a for a in legal if a not in first]


ROLLOUT_SAMPLES = 6
"""Moves a playout draws before keeping the best-looking one."""


def rollout_action(state: AbaloneState, rng: random.Random) -> Action:
    """Draw a few legal moves at random and keep the best by a quick score: an ejection,
    then a push, then the gain toward the centre. Cheap, and far from uniform: playouts
    push marbles off instead of wandering until the move limit."""
    legal = state.legal_actions()
    if state.placing:
        return legal[int(rng.random() * len(legal))]
    enemy = state.opponents(state.current_player())
    n = len(legal)
    best = legal[int(rng.random() * n)]
    best_score = 10 * push_class(state, best, enemy) + CENTRE_GAIN[best]
    for _ in range(ROLLOUT_SAMPLES - 1):
        action = legal[int(rng.random() * n)]
        score = 10 * push_class(state, action, enemy) + CENTRE_GAIN[action]
        if score > best_score:
            best, best_score = action, score
    return best
