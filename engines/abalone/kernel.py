"""Abalone compiled: the rules again over one flat ``int64`` array, for the compiled searches.

:mod:`engines.abalone.rules` stays the reference (notation, validation, ``stats()``); this
module plays the same game at machine speed and ``tests/test_kernels_abalone.py`` proves the
two equal on every ply of thousands of random games. Every function is ``@njit(cache=True)``.

The 61 cells are bits 0..60 of one ``int64`` per seat, row by row (A1 = 0, A5 = 4, B1 = 5 …
I9 = 60). The rules' padded layout (``(row + 1) * 10 + number``) needs 100 bits; packed in 61,
a step NE or NW is a shift of 5 to 9 bits depending on the row, so a step in a direction is
the union of a few shifts, each over the cells of the rows that share it (``_step``: one shift
E or W, four for the diagonals), masked so that nothing wraps. Move generation is then the
rules' own: one mask per kind of move over all marbles at once.

A position is one array (its layout, the tables and ``new_state``/``encode`` are in
:mod:`engines.abalone.kernel_layout`): the boards, the game's options, counters, the outcome,
the Zobrist key of the position (marbles and side to move) and the repetition history (the
keys since the last marble left the board, as the rules keep them), ``HISTORY + move_limit +
1`` long. Actions are the rules' codes (``kind * 128 + cell`` in the rules' numbering).

Beyond the contract of every kernel, ``key``, ``action_class`` and ``evaluate_weighted``
serve the compiled alpha-beta (its transposition table, move ordering and evaluation).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines import kernel_rng
from engines.abalone import heuristics
from engines.abalone.board import (
    KIND_BROAD2,
    KIND_BROAD3,
    KIND_INLINE2,
    KIND_INLINE3,
    KIND_PLACE,
    STRIDE,
)
from engines.abalone.kernel_layout import (
    ALL,
    AXIS_DIRS,
    BIT_AT,
    BOARDS,
    DEBRUIJN,
    EDGE_OUT,
    ENDED,
    ENDED_MOVE_LIMIT,
    ENDED_NO_MOVE,
    ENDED_NORMAL,
    ENDED_REPETITION,
    ENDINGS,
    GAINS,
    GOAL,
    HISTORY,
    HISTORY_LEN,
    KERNEL_CELL,
    KEY,
    LIMIT,
    LOST,
    MOVE_BITS,
    NEXT,
    OFF_AXIS_DIRS,
    PLACED,
    PLACEMENTS,
    PLAYERS,
    PLIES,
    PUSHED,
    REPEAT,
    RING_BITS,
    RULES_CELL,
    STEP_GROUPS,
    STEP_LEFT,
    STEP_MASK,
    STEP_RIGHT,
    TO_MOVE,
    WINNER,
    ZOBRIST,
    encode,
    new_state,
)
from engines.core import TERMINAL
from engines.kernel_cache import track
from engines.kernel_rng import rand_below

MAX_ACTIONS = 600
"""Each of the 42 kinds of move has at most one action per own marble (14): 588 at most."""
ROLLOUT_SAMPLES = heuristics.ROLLOUT_SAMPLES

WEIGHT_NAMES = ("marbles", "centre", "cohesion", "danger")
"""The evaluation's weights in the order ``evaluate_weighted`` reads them (``hard``'s
parameters)."""
DEFAULT_WEIGHTS = np.array(
    [getattr(heuristics.DEFAULT_WEIGHTS, name) for name in WEIGHT_NAMES], dtype=np.float64
)


@njit(cache=True)
def _step(bits: int, d: int) -> int:
    """Every marble of ``bits`` moved one cell in direction ``d`` (those that would leave the
    board fall away)."""
    out = 0
    for g in range(STEP_GROUPS):
        out |= ((bits & STEP_MASK[d, g]) << STEP_LEFT[d, g]) >> STEP_RIGHT[d, g]
    return out


@njit(cache=True)
def _popcount(x: int) -> int:
    count = 0
    while x:
        x &= x - 1
        count += 1
    return count


@njit(cache=True)
def _lowest(x: int) -> int:
    """The index of the lowest set bit of ``x`` (non-zero)."""
    return BIT_AT[(((x & -x) * DEBRUIJN) >> 58) & 63]


@njit(cache=True)
def _emit(mask: int, base: int, out: np.ndarray, n: int) -> int:
    while mask:
        k = _lowest(mask)
        mask &= mask - 1
        out[n] = base + RULES_CELL[k]
        n += 1
    return n


@njit(cache=True)
def _moves(own: int, opp: int, out: np.ndarray) -> int:
    """Every legal move of ``own`` against ``opp`` (all opponents' marbles) into ``out``.

    As the rules generate them: ``nb[d]`` holds the cells whose neighbour in direction d is
    empty, ``t``/``h`` the heads of lines of two/three facing d; a line facing opponents
    pushes them when it outnumbers them and the cell after them is empty or off the board.
    """
    empty = ALL ^ own ^ opp
    nb = np.empty(6, dtype=np.int64)
    heads2 = np.empty(6, dtype=np.int64)
    heads3 = np.empty(6, dtype=np.int64)
    for d in range(6):
        nb[d] = _step(empty, (d + 3) % 6)
        t = own & _step(own, d)
        heads2[d] = t
        heads3[d] = t & _step(t, d)
    n = 0
    for d in range(6):
        back = (d + 3) % 6
        n = _emit(own & nb[d], d * STRIDE, out, n)
        t, h = heads2[d], heads3[d]
        i2 = t & nb[d]
        i3 = h & nb[d]
        facing = _step(opp, back)
        if t & facing:
            beyond = _step(nb[d] | EDGE_OUT[d], back)  # the cell two ahead is free
            one = facing & beyond
            two = facing & _step(facing, back) & _step(beyond, back)
            i2 |= t & one
            i3 |= h & (one | two)
        n = _emit(i2, (KIND_INLINE2 + d) * STRIDE, out, n)
        n = _emit(i3, (KIND_INLINE3 + d) * STRIDE, out, n)
    for axis in range(3):
        a = AXIS_DIRS[axis]
        t, h = heads2[a], heads3[a]
        for j in range(4):
            side = nb[OFF_AXIS_DIRS[axis, j]]
            pair = side & _step(side, a)
            n = _emit(t & pair, (KIND_BROAD2 + 4 * axis + j) * STRIDE, out, n)
            n = _emit(h & pair & _step(pair, a), (KIND_BROAD3 + 4 * axis + j) * STRIDE, out, n)
    return n


@njit(cache=True)
def _has_step(own: int, opp: int) -> bool:
    """Whether some marble of ``own`` has an empty neighbour (a sure sign of a legal move)."""
    empty = ALL ^ own ^ opp
    near = 0
    for d in range(6):
        near |= _step(empty, d)
    return (own & near) != 0


@njit(cache=True)
def _opponents(state: np.ndarray, seat: int) -> int:
    return (state[BOARDS] | state[BOARDS + 1] | state[BOARDS + 2]) ^ state[BOARDS + seat]


@njit(cache=True)
def _can_move(state: np.ndarray) -> bool:
    seat = state[TO_MOVE]
    own, opp = state[BOARDS + seat], _opponents(state, seat)
    if _has_step(own, opp):
        return True
    return _moves(own, opp, np.empty(MAX_ACTIONS, dtype=np.int64)) > 0


# -- the contract -----------------------------------------------------------------------
@njit(cache=True)
def current_player(state: np.ndarray) -> int:
    return TERMINAL if state[ENDED] else state[TO_MOVE]


@njit(cache=True)
def legal_actions(state: np.ndarray, out: np.ndarray) -> int:
    """Write the legal actions into ``out`` (unordered); return how many (0 once over)."""
    if state[ENDED]:
        return 0
    seat = state[TO_MOVE]
    if state[PLACED] < state[PLACEMENTS]:
        taken = state[BOARDS] | state[BOARDS + 1] | state[BOARDS + 2]
        return _emit(ALL ^ taken, KIND_PLACE * STRIDE, out, 0)
    return _moves(state[BOARDS + seat], _opponents(state, seat), out)


@njit(cache=True)
def _start_play(state: np.ndarray) -> None:
    """Play starts here: the position's first occurrence, then the no-move check."""
    state[HISTORY] = state[KEY]
    state[HISTORY_LEN] = 1
    if not _can_move(state):
        _no_move(state)


@njit(cache=True)
def _no_move(state: np.ndarray) -> None:
    """With two players the player to move loses; with three it is a draw among all."""
    if state[PLAYERS] == 2:
        state[ENDED] = ENDED_NORMAL
        state[WINNER] = 1 - state[TO_MOVE]
    else:
        state[ENDED] = ENDED_NO_MOVE


@njit(cache=True)
def _toggle(state: np.ndarray, seat: int, bits: int) -> None:
    """Flip ``bits`` of ``seat``'s board, keeping the Zobrist key in step."""
    state[BOARDS + seat] ^= bits
    key = state[KEY]
    while bits:
        key ^= ZOBRIST[seat, _lowest(bits)]
        bits &= bits - 1
    state[KEY] = key


@njit(cache=True)
def _owner(state: np.ndarray, cell: int) -> int:
    for seat in range(state[PLAYERS]):
        if state[BOARDS + seat] >> cell & 1:
            return seat
    return -1


@njit(cache=True)
def _push(state: np.ndarray, mover: int, target: int, d: int) -> bool:
    """Move the opponents' marbles from ``target`` on one cell in ``d``; True if one fell."""
    second = NEXT[target, d]
    last = second if second >= 0 and _owner(state, second) >= 0 else target
    end = NEXT[last, d]
    ejected = False
    cell = last
    while True:
        seat = _owner(state, cell)
        if end >= 0:
            _toggle(state, seat, (1 << cell) | (1 << end))
        else:
            _toggle(state, seat, 1 << cell)
            ejected = True
            state[PUSHED + mover] += 1
            state[LOST + seat] += 1
        if cell == target:
            return ejected
        end = cell
        cell = target


@njit(cache=True)
def apply(state: np.ndarray, action: int) -> None:
    """Play a legal ``action`` (unchecked), then the end checks in the rules' order."""
    kind = action >> 7
    head = KERNEL_CELL[action & 127]
    mover = state[TO_MOVE]
    players = state[PLAYERS]
    nxt = mover + 1 if mover + 1 < players else 0
    state[KEY] ^= ZOBRIST[3, mover] ^ ZOBRIST[3, nxt]
    state[TO_MOVE] = nxt
    if kind == KIND_PLACE:
        _toggle(state, mover, 1 << head)
        state[PLACED] += 1
        if state[PLACED] == state[PLACEMENTS]:
            _start_play(state)
        return
    ejected = False
    if KIND_INLINE2 <= kind < KIND_BROAD2:
        d = kind % 6
        target = NEXT[head, d]
        if _opponents(state, mover) >> target & 1:
            ejected = _push(state, mover, target, d)
    _toggle(state, mover, MOVE_BITS[action])
    state[PLIES] += 1
    if ejected:
        if state[PUSHED + mover] >= state[GOAL]:
            state[ENDED] = ENDED_NORMAL
            state[WINNER] = mover
            return
        state[HISTORY_LEN] = 0  # nothing before a marble left the board can recur
    if not _can_move(state):
        _no_move(state)
        return
    if state[REPEAT]:
        key = state[KEY]
        n = state[HISTORY_LEN]
        state[HISTORY + n] = key
        n += 1
        state[HISTORY_LEN] = n
        times = 0
        for i in range(n):
            if state[HISTORY + i] == key:
                times += 1
        if times >= 3:
            state[ENDED] = ENDED_REPETITION
            return
    if state[PLIES] >= state[LIMIT]:
        state[ENDED] = ENDED_MOVE_LIMIT


@njit(cache=True)
def returns(state: np.ndarray, out: np.ndarray) -> None:
    """Winners share 1.0: the winner alone, or every seat equally in a draw."""
    players = state[PLAYERS]
    winner = state[WINNER]
    for seat in range(players):
        if winner < 0:
            out[seat] = 1.0 / players
        else:
            out[seat] = 1.0 if seat == winner else 0.0


@njit(cache=True)
def scores(state: np.ndarray, out: np.ndarray) -> None:
    """Marbles each seat has pushed off the board."""
    for seat in range(state[PLAYERS]):
        out[seat] = state[PUSHED + seat]


@njit(cache=True)
def key(state: np.ndarray) -> int:
    """The Zobrist key of the marbles and the side to move (the repetition history's key)."""
    return state[KEY]


@njit(cache=True)
def action_class(state: np.ndarray, action: int) -> int:
    """2 if the legal ``action`` pushes a marble off the board, 1 if it pushes without ejecting,
    else 0 (the rules' ``push_class``)."""
    kind = action >> 7
    if not KIND_INLINE2 <= kind < KIND_BROAD2:
        return 0
    d = kind % 6
    enemy = _opponents(state, state[TO_MOVE])
    target = NEXT[KERNEL_CELL[action & 127], d]
    if target < 0 or not enemy >> target & 1:
        return 0
    after = NEXT[target, d]
    if after >= 0 and enemy >> after & 1:
        after = NEXT[after, d]
    return 1 if after >= 0 else 2


@njit(cache=True)
def perft(state: np.ndarray, depth: int) -> int:
    """The number of move sequences of exactly ``depth`` plies (≥ 1) from ``state``."""
    stack = np.empty((depth, state.shape[0]), dtype=np.int64)
    moves = np.empty((depth, MAX_ACTIONS), dtype=np.int64)
    count = np.zeros(depth, dtype=np.int64)
    at = np.zeros(depth, dtype=np.int64)
    stack[0] = state
    count[0] = legal_actions(stack[0], moves[0])
    if depth == 1:
        return count[0]
    total = 0
    level = 0
    while level >= 0:
        if at[level] == count[level]:
            level -= 1
            continue
        child = stack[level + 1]
        child[:] = stack[level]
        apply(child, moves[level, at[level]])
        at[level] += 1
        if level + 2 == depth:
            total += legal_actions(child, moves[level + 1])
        else:
            level += 1
            count[level] = legal_actions(child, moves[level])
            at[level] = 0
    return total


# -- evaluation -------------------------------------------------------------------------
@njit(cache=True)
def _centre(board: int) -> float:
    """Minus the mean distance of the marbles from E5 (-4 for no marble)."""
    count = _popcount(board)
    if count == 0:
        return -4.0
    total = 0
    for ring in range(1, 5):
        total += ring * _popcount(board & RING_BITS[ring])
    return -(total / count)


@njit(cache=True)
def _cohesion(board: int) -> float:
    """Adjacent friendly pairs per marble."""
    count = _popcount(board)
    if count == 0:
        return 0.0
    pairs = 0
    for d in range(3):
        pairs += _popcount(board & _step(board, d))
    return pairs / count


@njit(cache=True)
def _threatened(own: int, enemy: int) -> int:
    """Edge marbles of ``own`` that ``enemy`` could push off next move (2 v 1, 3 v 1, 3 v 2)."""
    hit = 0
    for d in range(6):
        heads2 = enemy & _step(enemy, d)
        front = _step(heads2, d) & own
        if front:
            hit |= front & EDGE_OUT[d]
            second = _step(front & _step(_step(heads2, d), d), d) & own
            hit |= second & EDGE_OUT[d]
    return _popcount(hit)


@njit(cache=True)
def _terminal_value(state: np.ndarray, seat: int) -> float:
    players = state[PLAYERS]
    winner = state[WINNER]
    share = 1.0 / players if winner < 0 else (1.0 if winner == seat else 0.0)
    return (share - 1.0 / players) * players / (players - 1)


@njit(cache=True)
def may_eject(state: np.ndarray) -> bool:
    """False only when no move of the side to move pushes a marble off the board (no
    ``action_class`` 2): no opponent's edge marble is under a 2 v 1, 3 v 1 or 3 v 2 threat."""
    mover = state[TO_MOVE]
    return _threatened(_opponents(state, mover), state[BOARDS + mover]) > 0


@njit(cache=True)
def evaluate_weighted(state: np.ndarray, seat: int, weights: np.ndarray) -> float:
    """The rules' evaluation (``heuristics.evaluate``) with ``weights`` in ``WEIGHT_NAMES``
    order, in [-0.99, 0.99]; ±1 (or the draw's share) once the game is over."""
    if state[ENDED]:
        return _terminal_value(state, seat)
    players = state[PLAYERS]
    goal = state[GOAL]
    own = state[BOARDS + seat]
    if players == 2:
        enemy = state[BOARDS + 1 - seat]
        own_d = -(0.0 + _threatened(own, enemy))
        enemy_d = -(0.0 + _threatened(enemy, own))
        material = (state[PUSHED + seat] - state[LOST + seat]) / goal
        value = (
            weights[0] * material
            + weights[1] * (_centre(own) - _centre(enemy)) / 4.0
            + weights[2] * (_cohesion(own) - _cohesion(enemy)) / 3.0
            + weights[3] * (own_d - enemy_d) / 3.0
        )
        return max(-0.99, min(0.99, value))
    mean_c = 0.0
    mean_h = 0.0
    mean_d = 0.0
    rival = 0
    for other in range(players):
        if other == seat:
            continue
        board = state[BOARDS + other]
        danger = 0.0
        for third in range(players):
            if third != other:
                danger += _threatened(board, state[BOARDS + third])
        mean_c += _centre(board)
        mean_h += _cohesion(board)
        mean_d += -danger
        rival = max(rival, state[PUSHED + other])
    mean_c /= players - 1
    mean_h /= players - 1
    mean_d /= players - 1
    own_danger = 0.0
    for other in range(players):
        if other != seat:
            own_danger += _threatened(own, state[BOARDS + other])
    material = (state[PUSHED + seat] - rival - 0.5 * state[LOST + seat]) / goal
    value = (
        weights[0] * material
        + weights[1] * (_centre(own) - mean_c) / 4.0
        + weights[2] * (_cohesion(own) - mean_h) / 3.0
        + weights[3] * (-own_danger - mean_d) / 3.0
    )
    return max(-0.99, min(0.99, value))


@njit(cache=True)
def evaluate(state: np.ndarray, seat: int) -> float:
    """The rules' evaluation with its default weights, in [-1, 1] (±1 = game over)."""
    return evaluate_weighted(state, seat, DEFAULT_WEIGHTS)


# -- playouts ---------------------------------------------------------------------------
@njit(cache=True)
def random_action(state: np.ndarray, rng: np.ndarray) -> int:
    """A uniformly random legal action."""
    buf = np.empty(MAX_ACTIONS, dtype=np.int64)
    n = legal_actions(state, buf)
    return buf[rand_below(rng, n)]


@njit(cache=True)
def _sampled(state: np.ndarray, rng: np.ndarray, buf: np.ndarray, n: int) -> int:
    """The rules' playout pick among ``buf[:n]``: the best of a few random draws by an
    ejection, then a push, then the gain toward the centre."""
    best = buf[rand_below(rng, n)]
    best_score = 10 * action_class(state, best) + GAINS[best]
    for _ in range(ROLLOUT_SAMPLES - 1):
        action = buf[rand_below(rng, n)]
        score = 10 * action_class(state, action) + GAINS[action]
        if score > best_score:
            best = action
            best_score = score
    return best


@njit(cache=True)
def rollout_action(state: np.ndarray, rng: np.ndarray) -> int:
    """As the rules' ``rollout_action``: uniform while placing, else the sampled pick."""
    buf = np.empty(MAX_ACTIONS, dtype=np.int64)
    n = legal_actions(state, buf)
    if state[PLACED] < state[PLACEMENTS]:
        return buf[rand_below(rng, n)]
    return _sampled(state, rng, buf, n)


@njit(cache=True)
def strong_rollout_action(state: np.ndarray, rng: np.ndarray) -> int:
    """An ejection whenever there is one (a random one), else the rules' playout pick."""
    buf = np.empty(MAX_ACTIONS, dtype=np.int64)
    n = legal_actions(state, buf)
    if state[PLACED] < state[PLACEMENTS]:
        return buf[rand_below(rng, n)]
    ejections = 0
    for i in range(n):
        if action_class(state, buf[i]) == 2:
            buf[ejections], buf[i] = buf[i], buf[ejections]
            ejections += 1
    if ejections:
        return buf[rand_below(rng, ejections)]
    return _sampled(state, rng, buf, n)


__all__ = [
    "DEFAULT_WEIGHTS",
    "ENDINGS",
    "MAX_ACTIONS",
    "WEIGHT_NAMES",
    "action_class",
    "apply",
    "current_player",
    "encode",
    "evaluate",
    "evaluate_weighted",
    "key",
    "legal_actions",
    "new_state",
    "perft",
    "random_action",
    "returns",
    "rollout_action",
    "scores",
    "strong_rollout_action",
]

track(globals(), kernel_rng)
