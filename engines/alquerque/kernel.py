"""Alquerque compiled: the rules again over one flat ``int64`` array, for the compiled search.

:mod:`engines.alquerque.rules` stays the reference (notation, validation, ``stats()``); this
module plays the same game at machine speed and ``tests/engines/test_kernels.py`` proves the two
equal on every ply of thousands of random games. Every function is ``@njit(cache=True)``.

A position is one array: the two bitboards, the side to move, the draw counters, the outcome,
then the repetition history (keys of the positions since the last move that cannot be undone,
as in the rules). Only sideways moves can be undone and each one counts towards the
no-capture limit, so the history never holds more than ``limit + 1`` keys: the array is
``HISTORY + limit + 1`` long. Actions are the rules' codes (landing points in base 26).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.alquerque.board import (
    BASE,
    JUMPS,
    NEIGHBOURS,
    POINTS,
    SIZE,
    START_BLACK,
    START_WHITE,
    WHITE,
)
from engines.alquerque.rules import AlquerqueState
from engines.core import TERMINAL
from engines.kernel_cache import track
from engines.kernel_rng import rand_below

WHITE_BITS = 0
BLACK_BITS = 1
TO_MOVE = 2
NO_CAPTURE = 3
PLIES = 4
ENDED = 5
"""0 = playing, then the reason: ``ENDED_NORMAL``, ``ENDED_NO_CAPTURE``, ``ENDED_REPETITION``."""
WINNER = 6
"""Winning seat, -1 for a draw or an unfinished game."""
LIMIT = 7
HISTORY_LEN = 8
HISTORY = 9
ENDED_NORMAL, ENDED_NO_CAPTURE, ENDED_REPETITION = 1, 2, 3
ENDINGS = ("", "normal", "no_capture", "repetition")

MAX_ACTIONS = 512
"""Room for the legal actions of any position (capture trees included), far above real ones."""
_STACK = 256
"""Depth-first capture search: at most 12 jumps deep, at most 8 branches each."""
_SIDE_SHIFT = 2 * POINTS

_JUMP_OVER = np.full((POINTS, 8), -1, dtype=np.int64)
_JUMP_LAND = np.full((POINTS, 8), -1, dtype=np.int64)
for _p, _jumps in enumerate(JUMPS):
    for _k, (_over, _land, _q) in enumerate(_jumps):
        _JUMP_OVER[_p, _k] = _over.bit_length() - 1
        _JUMP_LAND[_p, _k] = _q
_STEP_TO = np.full((2, POINTS, 8), -1, dtype=np.int64)
"""Simple moves per colour: the neighbours forward or sideways (White forward = up)."""
for _p in range(POINTS):
    for _colour, _forward in ((0, 1), (1, -1)):
        _targets = sorted(q for q in NEIGHBOURS[_p] if (q // SIZE - _p // SIZE) * _forward >= 0)
        for _k, _q in enumerate(_targets):
            _STEP_TO[_colour, _p, _k] = _q
del _p, _jumps, _k, _over, _land, _q, _colour, _forward, _targets


def new_state(no_capture_limit: int) -> np.ndarray:
    """The start position, White to move, for the given draw limit."""
    state = np.zeros(HISTORY + no_capture_limit + 1, dtype=np.int64)
    state[WHITE_BITS] = START_WHITE
    state[BLACK_BITS] = START_BLACK
    state[WINNER] = TERMINAL
    state[LIMIT] = no_capture_limit
    return state


def encode(state: AlquerqueState) -> np.ndarray:
    """The kernel position of a rules position, repetition history included."""
    out = new_state(state.limit)
    out[WHITE_BITS] = state.white
    out[BLACK_BITS] = state.black
    out[TO_MOVE] = state.to_move
    out[NO_CAPTURE] = state.no_capture
    out[PLIES] = state.plies
    out[ENDED] = ENDINGS.index(state.ended)
    if state.ended:
        r = state.returns()
        out[WINNER] = TERMINAL if r[0] == r[1] else (0 if r[0] > r[1] else 1)
    history = state.repetition_history
    out[HISTORY_LEN] = len(history)
    out[HISTORY : HISTORY + len(history)] = history
    return out


@njit(cache=True)
def current_player(state: np.ndarray) -> int:
    return TERMINAL if state[ENDED] else state[TO_MOVE]


@njit(cache=True)
def _captures(own: int, enemy: int, out: np.ndarray, count: int) -> int:
    """Append every complete capture sequence of ``own`` to ``out`` from ``count``; return the
    new count. The mover leaves each point it jumps from (it may land there again later) and
    each jumped piece goes at once, as in the rules."""
    empty = ((1 << POINTS) - 1) ^ own ^ enemy
    st_at = np.empty(_STACK, dtype=np.int64)
    st_code = np.empty(_STACK, dtype=np.int64)
    st_enemy = np.empty(_STACK, dtype=np.int64)
    st_empty = np.empty(_STACK, dtype=np.int64)
    st_depth = np.empty(_STACK, dtype=np.int64)
    for p in range(POINTS):
        if not own >> p & 1:
            continue
        st_at[0] = p
        st_code[0] = p + 1
        st_enemy[0] = enemy
        st_empty[0] = empty
        st_depth[0] = 0
        top = 1
        while top > 0:
            top -= 1
            q = st_at[top]
            code = st_code[top]
            foes = st_enemy[top]
            free = st_empty[top]
            depth = st_depth[top]
            extended = False
            for k in range(8):
                over = _JUMP_OVER[q, k]
                if over < 0:
                    break
                land = _JUMP_LAND[q, k]
                if foes >> over & 1 and free >> land & 1:
                    extended = True
                    st_at[top] = land
                    st_code[top] = code * BASE + land + 1
                    st_enemy[top] = foes ^ (1 << over)
                    st_empty[top] = (free | (1 << over) | (1 << q)) & ~(1 << land)
                    st_depth[top] = depth + 1
                    top += 1
            if not extended and depth > 0:
                out[count] = code
                count += 1
    return count


@njit(cache=True)
def _can_capture(own: int, enemy: int) -> bool:
    """Whether some piece of ``own`` has a first jump (then it must capture)."""
    empty = ((1 << POINTS) - 1) ^ own ^ enemy
    for p in range(POINTS):
        if not own >> p & 1:
            continue
        for k in range(8):
            over = _JUMP_OVER[p, k]
            if over < 0:
                break
            if enemy >> over & 1 and empty >> _JUMP_LAND[p, k] & 1:
                return True
    return False


@njit(cache=True)
def _moves(own: int, enemy: int, colour: int, out: np.ndarray) -> int:
    """Captures when there are any, else simple moves, into ``out`` (unordered)."""
    if _can_capture(own, enemy):
        return _captures(own, enemy, out, 0)
    count = 0
    empty = ((1 << POINTS) - 1) ^ own ^ enemy
    for p in range(POINTS):
        if not own >> p & 1:
            continue
        for k in range(8):
            q = _STEP_TO[colour, p, k]
            if q < 0:
                break
            if empty >> q & 1:
                out[count] = (p + 1) * BASE + q + 1
                count += 1
    return count


@njit(cache=True)
def _has_move(own: int, enemy: int, colour: int) -> bool:
    """Whether the side with ``own`` has any legal move (a first jump or a simple move)."""
    empty = ((1 << POINTS) - 1) ^ own ^ enemy
    for p in range(POINTS):
        if not own >> p & 1:
            continue
        for k in range(8):
            q = _STEP_TO[colour, p, k]
            if q < 0:
                break
            if empty >> q & 1:
                return True
        for k in range(8):
            over = _JUMP_OVER[p, k]
            if over < 0:
                break
            if enemy >> over & 1 and empty >> _JUMP_LAND[p, k] & 1:
                return True
    return False


@njit(cache=True)
def legal_actions(state: np.ndarray, out: np.ndarray) -> int:
    """Write the legal actions into ``out`` (unordered); return how many (0 once over)."""
    if state[ENDED]:
        return 0
    if state[TO_MOVE] == WHITE:
        return _moves(state[WHITE_BITS], state[BLACK_BITS], 0, out)
    return _moves(state[BLACK_BITS], state[WHITE_BITS], 1, out)


@njit(cache=True)
def _walk(action: int) -> tuple[int, int, int, bool]:
    """What a legal action does: the mover's points that change (its start and end, 0 when a
    capture ends where it began), the pieces it takes, its jumps, and whether it can be undone
    (a sideways slide)."""
    # Walk the landing points from the last one back.
    code = action
    last = code % BASE - 1
    code //= BASE
    previous = last
    taken = 0
    jumps = 0
    reversible = False
    while code:
        digit = code % BASE - 1
        code //= BASE
        dr = previous // SIZE - digit // SIZE
        dc = previous % SIZE - digit % SIZE
        if -1 <= dr <= 1 and -1 <= dc <= 1:
            reversible = dr == 0  # a simple move; only a sideways one can be undone
        else:
            taken |= 1 << ((digit + previous) >> 1)
            jumps += 1
        previous = digit
    return (1 << previous) ^ (1 << last), taken, jumps, reversible


@njit(cache=True)
def capture_result(own: int, enemy: int, action: int) -> tuple[int, int]:
    """The mover's and the other side's pieces after the mover's ``action``."""
    moved, taken, _, _ = _walk(action)
    return own ^ moved, enemy & ~taken


@njit(cache=True)
def apply(state: np.ndarray, action: int) -> None:
    """Play a legal ``action`` (unchecked), then the end checks in the rules' order."""
    white = state[WHITE_BITS]
    black = state[BLACK_BITS]
    mover = state[TO_MOVE]
    before = white | black << POINTS | mover << _SIDE_SHIFT
    moved, taken, jumps, reversible = _walk(action)
    if mover == WHITE:
        white ^= moved
        black &= ~taken
    else:
        black ^= moved
        white &= ~taken
    no_capture = 0 if jumps else state[NO_CAPTURE] + 1
    to_move = 1 - mover
    state[WHITE_BITS] = white
    state[BLACK_BITS] = black
    state[TO_MOVE] = to_move
    state[NO_CAPTURE] = no_capture
    state[PLIES] += 1
    repeated = 0
    if reversible:
        n = state[HISTORY_LEN]
        if n == 0:
            state[HISTORY] = before
            n = 1
        key = white | black << POINTS | to_move << _SIDE_SHIFT
        state[HISTORY + n] = key
        n += 1
        state[HISTORY_LEN] = n
        for i in range(n):
            if state[HISTORY + i] == key:
                repeated += 1
    else:
        state[HISTORY_LEN] = 0
    can_move = _has_move(white, black, 0) if to_move == WHITE else _has_move(black, white, 1)
    if not can_move:
        state[ENDED] = ENDED_NORMAL
        state[WINNER] = mover
    elif no_capture >= state[LIMIT]:
        state[ENDED] = ENDED_NO_CAPTURE
    elif repeated >= 3:
        state[ENDED] = ENDED_REPETITION


@njit(cache=True)
def returns(state: np.ndarray, out: np.ndarray) -> None:
    winner = state[WINNER]
    if winner < 0:
        out[0] = 0.5
        out[1] = 0.5
    else:
        out[winner] = 1.0
        out[1 - winner] = 0.0


@njit(cache=True)
def _popcount(x: int) -> int:
    count = 0
    while x:
        x &= x - 1
        count += 1
    return count


@njit(cache=True)
def scores(state: np.ndarray, out: np.ndarray) -> None:
    """Pieces left on the board, per seat."""
    out[0] = _popcount(state[WHITE_BITS])
    out[1] = _popcount(state[BLACK_BITS])


@njit(cache=True)
def _hanging(attacker: int, victim: int, empty: int) -> int:
    """How many ``victim`` pieces ``attacker`` could jump now (first jumps only)."""
    hit = 0
    for p in range(POINTS):
        if not attacker >> p & 1:
            continue
        for k in range(8):
            over = _JUMP_OVER[p, k]
            if over < 0:
                break
            if victim >> over & 1 and empty >> _JUMP_LAND[p, k] & 1:
                hit |= 1 << over
    return _popcount(hit)


@njit(cache=True)
def _steps(own: int, empty: int, colour: int) -> int:
    total = 0
    for p in range(POINTS):
        if not own >> p & 1:
            continue
        for k in range(8):
            q = _STEP_TO[colour, p, k]
            if q < 0:
                break
            if empty >> q & 1:
                total += 1
    return total


@njit(cache=True)
def evaluate(state: np.ndarray, seat: int) -> float:
    """The rules' default evaluation (material 0.7, pieces en prise 0.2, mobility 0.1)."""
    if state[ENDED]:
        winner = state[WINNER]
        return 0.0 if winner < 0 else (1.0 if winner == seat else -1.0)
    if seat == WHITE:
        own, enemy = state[WHITE_BITS], state[BLACK_BITS]
    else:
        own, enemy = state[BLACK_BITS], state[WHITE_BITS]
    empty = ((1 << POINTS) - 1) ^ own ^ enemy
    material = (_popcount(own) - _popcount(enemy)) / 12.0
    own_hanging = _hanging(enemy, own, empty)
    enemy_hanging = _hanging(own, enemy, empty)
    if state[TO_MOVE] == seat:
        danger = (enemy_hanging - 0.5 * own_hanging) / 12.0
    else:
        danger = (0.5 * enemy_hanging - own_hanging) / 12.0
    mobility = (_steps(own, empty, seat) - _steps(enemy, empty, 1 - seat)) / 40.0
    value = 0.7 * material + 0.2 * danger + 0.1 * mobility
    return max(-1.0, min(1.0, value))


@njit(cache=True)
def _path_len(code: int) -> int:
    n = 0
    while code:
        code //= BASE
        n += 1
    return n


@njit(cache=True)
def _sides(state: np.ndarray) -> tuple[int, int, int]:
    """(pieces of the side to move, the other side's, the mover's colour)."""
    if state[TO_MOVE] == WHITE:
        return state[WHITE_BITS], state[BLACK_BITS], 0
    return state[BLACK_BITS], state[WHITE_BITS], 1


@njit(cache=True)
def _random_step(own: int, enemy: int, colour: int, rng: np.ndarray) -> int:
    """A uniformly random simple move, picked without listing them (no capture exists)."""
    empty = ((1 << POINTS) - 1) ^ own ^ enemy
    pick = rand_below(rng, _steps(own, empty, colour))
    for p in range(POINTS):
        if not own >> p & 1:
            continue
        for k in range(8):
            q = _STEP_TO[colour, p, k]
            if q < 0:
                break
            if empty >> q & 1:
                if pick == 0:
                    return (p + 1) * BASE + q + 1
                pick -= 1
    return -1  # not reached: ``pick`` < the number of simple moves


@njit(cache=True)
def random_action(state: np.ndarray, rng: np.ndarray) -> int:
    """A uniformly random legal action."""
    own, enemy, colour = _sides(state)
    if not _can_capture(own, enemy):
        return _random_step(own, enemy, colour, rng)
    buf = np.empty(MAX_ACTIONS, dtype=np.int64)
    n = legal_actions(state, buf)
    return buf[rand_below(rng, n)]


@njit(cache=True)
def rollout_action(state: np.ndarray, rng: np.ndarray) -> int:
    """As the rules' playout move: random, except that a capture takes as many pieces as it
    can (a longest capture at random)."""
    buf = np.empty(MAX_ACTIONS, dtype=np.int64)
    n = legal_actions(state, buf)
    if n == 1:
        return buf[0]
    longest = 0
    count = 0
    for i in range(n):
        length = _path_len(buf[i])
        if length > longest:
            longest = length
            count = 1
        elif length == longest:
            count += 1
    pick = rand_below(rng, count)
    for i in range(n):
        if _path_len(buf[i]) == longest:
            if pick == 0:
                return buf[i]
            pick -= 1
    return buf[0]  # not reached


@njit(cache=True)
def key(state: np.ndarray) -> int:
    """The position for a transposition table: both boards and the side to move, packed
    exactly (51 bits, the repetition rule's key), so two positions never share a key."""
    return state[WHITE_BITS] | state[BLACK_BITS] << POINTS | state[TO_MOVE] << _SIDE_SHIFT


CAPTURE_CLASS = 2
"""``action_class`` of a capture: the search's quiescence follows these."""


@njit(cache=True)
def may_capture(state: np.ndarray) -> bool:
    """Whether the side to move has a capture (then every legal move is one)."""
    own, enemy, _ = _sides(state)
    return _can_capture(own, enemy)


@njit(cache=True)
def action_class(state: np.ndarray, action: int) -> int:
    """``CAPTURE_CLASS`` for a capture, 0 for a simple move: a capture's last step is a jump,
    two points along a line, a simple move's one point."""
    last = action % BASE - 1
    previous = (action // BASE) % BASE - 1
    rows = abs(last // SIZE - previous // SIZE)
    cols = abs(last % SIZE - previous % SIZE)
    return CAPTURE_CLASS if rows > 1 or cols > 1 else 0


strong_rollout_action = rollout_action
"""Alquerque has one playout policy."""


track(globals())
