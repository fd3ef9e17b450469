"""Abalone compiled: the rules again over one flat ``int64`` array, for the compiled searches.

:mod:`engines.abalone.rules` stays the reference; ``tests/engines/test_kernels_abalone.py`` proves
the two equal on every ply of thousands of random games. Every function is ``@njit``.

The 61 cells are bits 0..62 of one ``int64`` per seat, row by row (A1 = 0 … I9 = 62, two spare
bits). Packed so, a step NE or NW shifts by 6 to 9 bits depending on the row: a step in a
direction is the union of a few masked shifts (``_step``: one E or W, three on the diagonals,
inlined so that they are constants), and move generation is the rules' own, one mask per kind
of move over all marbles at once. The position's layout, the tables, ``new_state`` and
``encode`` are in :mod:`engines.abalone.kernel_layout`; actions are the rules' codes. Beyond
the contract, ``key``, ``action_class``, ``may_eject`` and ``evaluate_weighted`` serve the
compiled alpha-beta.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.abalone.board import KIND_BROAD2, KIND_INLINE2, KIND_PLACE, STRIDE
from engines.abalone.kernel_layout import (
    ALL,
    BOARDS,
    DEFAULT_WEIGHTS,
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
    MAX_ACTIONS,
    MOVE_BITS,
    NEXT,
    PLACED,
    PLACEMENTS,
    PLAYERS,
    PLIES,
    PUSHED,
    REPEAT,
    RING_BITS,
    ROLLOUT_SAMPLES,
    RULES_CELL,
    SEEN,
    SEEN_WORDS,
    STEP_GROUPS,
    STEP_LEFT,
    STEP_MASK,
    STEP_RIGHT,
    TO_MOVE,
    WEIGHT_NAMES,
    WINNER,
    ZOBRIST,
    encode,
    new_state,
)
from engines.core import TERMINAL
from engines.kernel_bits import popcount, trailing_zeros
from engines.kernel_cache import track
from engines.kernel_rng import next_u64


@njit(cache=True, inline="always")
def _step(bits: int, d: int) -> int:
    """Every marble of ``bits`` moved one cell in direction ``d`` (leaving the board: gone)."""
    out = 0
    for g in range(STEP_GROUPS):
        out |= ((bits & STEP_MASK[d, g]) << STEP_LEFT[d, g]) >> STEP_RIGHT[d, g]
    return out


@njit(cache=True)
def _emit(mask: int, base: int, out: np.ndarray, n: int) -> int:
    while mask:
        out[n] = base + RULES_CELL[trailing_zeros(mask)]
        mask &= mask - 1
        n += 1
    return n


@njit(cache=True, inline="always")
def _inline(opp: int, nb: int, t: int, h: int, d: int) -> tuple[int, int]:
    """The heads of lines of two and of three moving along ``d``: into an empty cell (``nb``:
    the cells with an empty neighbour that way), or pushing fewer opponents on or off."""
    i2 = t & nb
    i3 = h & nb
    back = (d + 3) % 6
    facing = _step(opp, back)
    if t & facing:
        beyond = _step(nb | EDGE_OUT[d], back)  # the cell two ahead is free
        one = facing & beyond
        two = facing & _step(facing, back) & _step(beyond, back)
        i2 |= t & one
        i3 |= h & (one | two)
    return i2, i3


@njit(cache=True, inline="always")
def _side(pair: int, t: int, h: int, axis: int) -> tuple[int, int]:
    """The heads of lines of two and of three (along ``axis``) that can side-step where
    ``pair`` holds the heads whose own cell's and back cell's neighbours that way are empty."""
    return t & pair, h & pair & _step(pair, axis)


@njit(cache=True)
def _masks(own: int, opp: int) -> tuple[int, ...]:
    """The legal moves of ``own`` against ``opp`` (all opponents' marbles) as 42 masks: mask
    ``i`` holds the head cells of the moves of kind ``i``, so action = i * 128 + head. As the
    rules generate them: ``n<d>`` are the cells whose neighbour in direction d is empty,
    ``t<d>``/``h<d>`` the heads of lines of two/three facing d; written out direction by
    direction so that every step's direction is a constant."""
    empty = ALL ^ own ^ opp
    n0, n1, n2 = _step(empty, 3), _step(empty, 4), _step(empty, 5)
    n3, n4, n5 = _step(empty, 0), _step(empty, 1), _step(empty, 2)
    t0, t1, t2 = own & _step(own, 0), own & _step(own, 1), own & _step(own, 2)
    t3, t4, t5 = own & _step(own, 3), own & _step(own, 4), own & _step(own, 5)
    h0, h1, h2 = t0 & _step(t0, 0), t1 & _step(t1, 1), t2 & _step(t2, 2)
    h3, h4, h5 = t3 & _step(t3, 3), t4 & _step(t4, 4), t5 & _step(t5, 5)
    a0, a1, a2 = (
        _inline(opp, n0, t0, h0, 0),
        _inline(opp, n1, t1, h1, 1),
        _inline(opp, n2, t2, h2, 2),
    )
    a3, a4, a5 = (
        _inline(opp, n3, t3, h3, 3),
        _inline(opp, n4, t4, h4, 4),
        _inline(opp, n5, t5, h5, 5),
    )
    # Side-steps. A line's second marble's neighbour is the head's neighbour one step round
    # (on axis E: NE of the second is NW of the head, SE of it SW of the head), so two of the
    # four sides of each axis need no shift; the other two step the empty mask along the axis.
    b0, b3 = _side(n1 & n2, t0, h0, 0), _side(n5 & n4, t0, h0, 0)
    b1, b2 = _side(n2 & _step(n2, 0), t0, h0, 0), _side(n4 & _step(n4, 0), t0, h0, 0)
    b4, b5 = _side(n0 & n5, t1, h1, 1), _side(n2 & n3, t1, h1, 1)
    b6, b7 = _side(n3 & _step(n3, 1), t1, h1, 1), _side(n5 & _step(n5, 1), t1, h1, 1)
    b8, b9 = _side(n0 & _step(n0, 2), t2, h2, 2), _side(n1 & n0, t2, h2, 2)
    b10, b11 = _side(n3 & n4, t2, h2, 2), _side(n4 & _step(n4, 2), t2, h2, 2)
    return (
        own & n0, own & n1, own & n2, own & n3, own & n4, own & n5,
        a0[0], a1[0], a2[0], a3[0], a4[0], a5[0],
        a0[1], a1[1], a2[1], a3[1], a4[1], a5[1],
        b0[0], b1[0], b2[0], b3[0], b4[0], b5[0], b6[0], b7[0], b8[0], b9[0], b10[0], b11[0],
        b0[1], b1[1], b2[1], b3[1], b4[1], b5[1], b6[1], b7[1], b8[1], b9[1], b10[1], b11[1],
    )  # fmt: skip


@njit(cache=True, inline="always")
def _six(masks: tuple[int, ...], k: int) -> int:
    total = 0
    for i in range(k, k + 6):
        total += popcount(masks[i])
    return total


@njit(cache=True, inline="always")
def _counts(masks: tuple[int, ...]) -> tuple[int, ...]:
    """The moves of each six kinds (the 42 come in seven sixes), so a draw skips whole sixes."""
    return (
        _six(masks, 0), _six(masks, 6), _six(masks, 12), _six(masks, 18), _six(masks, 24),
        _six(masks, 30), _six(masks, 36),
    )  # fmt: skip


@njit(cache=True)
def _nth(masks: tuple[int, ...], sixes: tuple[int, ...], index: int) -> int:
    """The ``index``-th action of ``masks`` (kind by kind, cell by cell; ``sixes``: _counts)."""
    left = np.int64(index)  # the generator's draws are unsigned; signed arithmetic here
    kind = 0
    for count in sixes:
        if left < count:
            break
        left -= count
        kind += 6
    while True:
        mask = masks[kind]
        count = popcount(mask)
        if left < count:
            for _ in range(left):
                mask &= mask - 1
            return kind * STRIDE + RULES_CELL[trailing_zeros(mask)]
        left -= count
        kind += 1


@njit(cache=True)
def _has_step(own: int, opp: int) -> bool:
    """Whether some marble of ``own`` has an empty neighbour (a sure sign of a legal move)."""
    empty = ALL ^ own ^ opp
    if own & (_step(empty, 0) | _step(empty, 3)):  # E and W first: one shift each
        return True
    near = _step(empty, 1) | _step(empty, 2) | _step(empty, 4) | _step(empty, 5)
    return (own & near) != 0


@njit(cache=True)
def _opponents(state: np.ndarray, seat: int) -> int:
    return (state[BOARDS] | state[BOARDS + 1] | state[BOARDS + 2]) ^ state[BOARDS + seat]


@njit(cache=True)
def _can_move(state: np.ndarray) -> bool:
    seat = state[TO_MOVE]
    own, opp = state[BOARDS + seat], _opponents(state, seat)
    return _has_step(own, opp) or sum(_counts(_masks(own, opp))) > 0


# -- the contract -----------------------------------------------------------------------
@njit(cache=True, inline="always")
def current_player(state: np.ndarray) -> int:
    return TERMINAL if state[ENDED] else state[TO_MOVE]


@njit(cache=True)
def legal_actions(state: np.ndarray, out: np.ndarray) -> int:
    """Write the legal actions into ``out`` (unordered); return how many (0 once over)."""
    if state[ENDED]:
        return 0
    if state[PLACED] < state[PLACEMENTS]:
        taken = state[BOARDS] | state[BOARDS + 1] | state[BOARDS + 2]
        return _emit(ALL ^ taken, KIND_PLACE * STRIDE, out, 0)
    n = 0
    for kind, mask in enumerate(_mover_masks(state)):
        n = _emit(mask, kind * STRIDE, out, n)
    return n


@njit(cache=True)
def _start_play(state: np.ndarray) -> None:
    """Play starts here: the position's first occurrence, then the no-move check."""
    _occurrences(state, state[KEY])
    if not _can_move(state):
        _no_move(state)


@njit(cache=True)
def _occurrences(state: np.ndarray, key: int) -> int:
    """Log ``key`` in the repetition history; how many times it is there now."""
    n = state[HISTORY_LEN]
    state[HISTORY + n] = key
    state[HISTORY_LEN] = n + 1
    word = SEEN + ((key >> 6) & 63)
    bit = np.int64(1) << (key & 63)
    if not state[word] & bit:
        state[word] |= bit
        return 1
    times = 0
    for i in range(n + 1):
        if state[HISTORY + i] == key:
            times += 1
    return times


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
        key ^= ZOBRIST[seat, trailing_zeros(bits)]
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


@njit(cache=True, inline="always")
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
        state[SEEN : SEEN + SEEN_WORDS] = 0
    if not _can_move(state):
        _no_move(state)
        return
    if state[REPEAT] and _occurrences(state, state[KEY]) >= 3:
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
    """2 if legal ``action`` pushes a marble off, 1 if it pushes one on, else 0 (``push_class``)."""
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


# -- evaluation -------------------------------------------------------------------------
@njit(cache=True)
def _centre(board: int) -> float:
    """Minus the mean distance of the marbles from E5 (-4 for no marble)."""
    count = popcount(board)
    if count == 0:
        return -4.0
    total = 0
    for ring in range(1, 5):
        total += ring * popcount(board & RING_BITS[ring])
    return -(total / count)


@njit(cache=True)
def _cohesion(board: int) -> float:
    """Adjacent friendly pairs per marble."""
    count = popcount(board)
    if count == 0:
        return 0.0
    pairs = 0
    for d in range(3):
        pairs += popcount(board & _step(board, d))
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
    return popcount(hit)


@njit(cache=True)
def may_eject(state: np.ndarray) -> bool:
    """Whether the side to move (of two) may push off an edge marble (2 v 1, 3 v 1, 3 v 2)."""
    mover = state[TO_MOVE]
    return _threatened(state[BOARDS + 1 - mover], state[BOARDS + mover]) > 0


@njit(cache=True)
def _terminal_value(state: np.ndarray, seat: int) -> float:
    players = state[PLAYERS]
    winner = state[WINNER]
    share = 1.0 / players if winner < 0 else (1.0 if winner == seat else 0.0)
    return (share - 1.0 / players) * players / (players - 1)


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
def _draw(rng: np.ndarray, n: int) -> int:
    """A uniform int in ``[0, n)`` for a move list's small ``n``: a draw's top 32 bits scaled by
    ``n`` (bias below n / 2³²), not ``rand_below``'s division (a tenth of a random ply)."""
    return int(np.int64(((next_u64(rng) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32)))


@njit(cache=True)
def _placement(state: np.ndarray, rng: np.ndarray) -> int:
    """A uniformly random empty cell to place on."""
    free = ALL ^ (state[BOARDS] | state[BOARDS + 1] | state[BOARDS + 2])
    for _ in range(_draw(rng, popcount(free))):
        free &= free - 1
    return KIND_PLACE * STRIDE + RULES_CELL[trailing_zeros(free)]


@njit(cache=True)
def _mover_masks(state: np.ndarray) -> tuple[int, ...]:
    seat = state[TO_MOVE]
    return _masks(state[BOARDS + seat], _opponents(state, seat))


@njit(cache=True, inline="always")
def random_action(state: np.ndarray, rng: np.ndarray) -> int:
    """A uniformly random legal action, drawn from the move masks without listing them."""
    if state[PLACED] < state[PLACEMENTS]:
        return _placement(state, rng)
    masks = _mover_masks(state)
    sixes = _counts(masks)
    return _nth(masks, sixes, _draw(rng, sum(sixes)))


@njit(cache=True)
def _sampled(state: np.ndarray, rng: np.ndarray, masks: tuple[int, ...]) -> int:
    """The rules' playout pick: the best of a few random draws by an ejection, then a push,
    then the gain toward the centre (the first drawn among equals)."""
    sixes = _counts(masks)
    n = sum(sixes)
    best = _nth(masks, sixes, _draw(rng, n))
    best_score = 10 * action_class(state, best) + GAINS[best]
    for _ in range(ROLLOUT_SAMPLES - 1):
        action = _nth(masks, sixes, _draw(rng, n))
        score = 10 * action_class(state, action) + GAINS[action]
        if score > best_score:
            best = action
            best_score = score
    return best


@njit(cache=True, inline="always")
def rollout_action(state: np.ndarray, rng: np.ndarray) -> int:
    """As the rules' ``rollout_action``: uniform while placing, else the sampled pick."""
    if state[PLACED] < state[PLACEMENTS]:
        return _placement(state, rng)
    return _sampled(state, rng, _mover_masks(state))


@njit(cache=True)
def strong_rollout_action(state: np.ndarray, rng: np.ndarray) -> int:
    """An ejection whenever there is one (a random one), else the rules' playout pick."""
    if state[PLACED] < state[PLACEMENTS]:
        return _placement(state, rng)
    masks = _mover_masks(state)
    ejections = np.empty(MAX_ACTIONS, dtype=np.int64)
    found = 0
    for kind in range(KIND_INLINE2, KIND_BROAD2):  # only lines moving along themselves push
        heads = masks[kind]
        while heads:
            action = kind * STRIDE + RULES_CELL[trailing_zeros(heads)]
            heads &= heads - 1
            if action_class(state, action) == 2:
                ejections[found] = action
                found += 1
    if found:
        return ejections[_draw(rng, found)]
    return _sampled(state, rng, masks)


__all__ = [  # the contract, and what the kernel passes on from its layout module
    "DEFAULT_WEIGHTS", "ENDINGS", "MAX_ACTIONS", "WEIGHT_NAMES", "action_class", "apply",
    "current_player", "encode", "evaluate", "evaluate_weighted", "key", "legal_actions",
    "may_eject", "new_state", "random_action", "returns", "rollout_action", "scores",
    "strong_rollout_action",
]  # fmt: skip

track(globals())
