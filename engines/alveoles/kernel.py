"""Les Alvéoles compiled: the rules again over one flat ``int64`` array, for the compiled search.

:mod:`engines.alveoles.rules` stays the reference (notation, validation, ``stats()``); this
module plays the same game at machine speed and ``tests/engines/test_kernels.py`` proves the two
equal on every ply of thousands of random games. Every function is ``@njit(cache=True)``, so a
worker compiles it once and later processes load it from numba's on-disk cache.

A position is one array (``STATE_SIZE`` ints) holding the game's constants too (square values,
player count, bonus rule), so every function takes the array alone and a search copies a
position with one ``copyto``. The empty grooves and the unclaimed 3-sided squares are kept as
lists with a position index each, so a plate is removed from them in constant time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.alveoles.layouts import CELLS
from engines.alveoles.notation import GROOVE_SQUARES, GROOVE_SUM, NUM_GROOVES, board_grooves
from engines.alveoles.rules import AlveolesState
from engines.alveoles.scoring import BLOCK_MASKS, DISJOINT, NO_BONUS
from engines.core import TERMINAL
from engines.kernel_cache import track
from engines.kernel_rng import rand_below, rand_unit

# -- layout of a position ---------------------------------------------------------------
CODE = 0
"""64 square codes, as in the rules: plates in the low 3 bits, sum of their grooves above."""
OWNER = CODE + CELLS
"""64 owners (-1 = unclaimed)."""
VALUE = OWNER + CELLS
"""64 square values, square order."""
EMPTY = VALUE + CELLS
"""The empty grooves, in no particular order (``N_EMPTY`` of them)."""
EMPTY_AT = EMPTY + NUM_GROOVES
"""Each groove's index in the empty list, -1 once plated."""
FORCED = EMPTY_AT + NUM_GROOVES
"""The unclaimed 3-sided squares (``N_FORCED`` of them)."""
FORCED_AT = FORCED + CELLS
"""Each square's index in the forced list, -1 when not in it."""
POINTS = FORCED_AT + CELLS
"""Square points of seats 0–3."""
REPLAYS = POINTS + 4
N_EMPTY = REPLAYS + 4
N_FORCED = N_EMPTY + 1
PLAYER = N_FORCED + 1
PLAYERS = PLAYER + 1
BONUS_MODE = PLAYERS + 1
"""0 = overlapping windows, 1 = disjoint, 2 = no bonus (decision V6)."""
ROWS = BONUS_MODE + 1
"""Rows of squares on the board (decision V5: the lower-left corner of the 8 × 8 numbering)."""
COLS = ROWS + 1
"""Columns of squares on the board."""
STATE_SIZE = COLS + 1

MAX_ACTIONS = NUM_GROOVES
BONUS = 100
EVAL_SCALE = 60.0
ROLLOUT_SAMPLES = 6

_GROOVE_SQ = np.full((NUM_GROOVES, 2), -1, dtype=np.int64)
for _g, _squares in enumerate(GROOVE_SQUARES):
    for _k, _sq in enumerate(_squares):
        _GROOVE_SQ[_g, _k] = _sq
_GROOVE_SUM = np.array(GROOVE_SUM, dtype=np.int64)
_BLOCKS = np.array(
    [[sq for sq in range(CELLS) if mask >> sq & 1] for mask in BLOCK_MASKS], dtype=np.int64
)
"""The 36 3 × 3 windows, each as its 9 squares."""
_OVERLAP = np.array(
    [sum(1 << j for j, m2 in enumerate(BLOCK_MASKS) if m1 & m2) for m1 in BLOCK_MASKS],
    dtype=np.int64,
)
"""For each window, the windows (bits over the 36) sharing a square with it."""
del _g, _squares, _k, _sq
_ZOBRIST = np.random.default_rng(0x41_4C_56).integers(
    np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=NUM_GROOVES + 5 * CELLS + 5, dtype=np.int64
)
"""Zobrist numbers (fixed): one per plated groove, one per square and owner (seats 0–3),
one per seat to move (and the game's end)."""
_Z_OWNER = NUM_GROOVES
_Z_PLAYER = NUM_GROOVES + 5 * CELLS


def new_state(
    values: tuple[int, ...], players: int, square_bonus: str, rows: int = 8, cols: int = 8
) -> np.ndarray:
    """The empty ``rows`` × ``cols`` board: ``values`` in square order (a1, b1, …, 64 of them,
    0 off the board), seat 0 to move. The grooves off the board are never empty."""
    state = np.zeros(STATE_SIZE, dtype=np.int64)
    state[OWNER : OWNER + CELLS] = -1
    state[VALUE : VALUE + CELLS] = values
    grooves = board_grooves(rows, cols)
    state[EMPTY_AT : EMPTY_AT + NUM_GROOVES] = -1
    for i, g in enumerate(grooves):
        state[EMPTY + i] = g
        state[EMPTY_AT + g] = i
    state[FORCED_AT : FORCED_AT + CELLS] = -1
    state[N_EMPTY] = len(grooves)
    state[PLAYERS] = players
    state[BONUS_MODE] = {DISJOINT: 1, NO_BONUS: 2}.get(square_bonus, 0)
    state[ROWS] = rows
    state[COLS] = cols
    return state


def encode(state: AlveolesState) -> np.ndarray:
    """The kernel position of a rules position (replay counts are not carried over)."""
    game = state.game
    out = new_state(game.values, game.num_players, game.square_bonus, game.rows, game.cols)
    out[CODE : CODE + CELLS] = state.square_codes
    out[OWNER : OWNER + CELLS] = [state.owner(sq) for sq in range(CELLS)]
    out[EMPTY_AT : EMPTY_AT + NUM_GROOVES] = -1
    empty = state.empty_grooves
    for i, g in enumerate(empty):
        out[EMPTY + i] = g
        out[EMPTY_AT + g] = i
    out[N_EMPTY] = len(empty)
    for i, sq in enumerate(state.forced):
        out[FORCED + i] = sq
        out[FORCED_AT + sq] = i
    out[N_FORCED] = len(state.forced)
    points = state.square_points()
    out[POINTS : POINTS + len(points)] = points
    out[PLAYER] = state.current_player()
    return out


@njit(cache=True)
def current_player(state: np.ndarray) -> int:
    """Seat to move, -1 once the game is over."""
    return state[PLAYER]


@njit(cache=True)
def missing_groove(state: np.ndarray, sq: int) -> int:
    """The empty groove of a 3-sided square."""
    return _GROOVE_SUM[sq] - (state[CODE + sq] >> 3)


@njit(cache=True)
def legal_actions(state: np.ndarray, out: np.ndarray) -> int:
    """Write the legal grooves into ``out`` (unordered, no repeats); return how many."""
    if state[PLAYER] < 0:
        return 0
    n_forced = state[N_FORCED]
    if n_forced > 0:
        count = 0
        for i in range(n_forced):
            g = missing_groove(state, state[FORCED + i])
            seen = False
            for j in range(count):
                if out[j] == g:
                    seen = True
                    break
            if not seen:
                out[count] = g
                count += 1
        return count
    n = state[N_EMPTY]
    out[:n] = state[EMPTY : EMPTY + n]
    return n


@njit(cache=True)
def _forced_add(state: np.ndarray, sq: int) -> None:
    n = state[N_FORCED]
    state[FORCED + n] = sq
    state[FORCED_AT + sq] = n
    state[N_FORCED] = n + 1


@njit(cache=True)
def _forced_remove(state: np.ndarray, sq: int) -> None:
    i = state[FORCED_AT + sq]
    n = state[N_FORCED] - 1
    last = state[FORCED + n]
    state[FORCED + i] = last
    state[FORCED_AT + last] = i
    state[FORCED_AT + sq] = -1
    state[N_FORCED] = n


@njit(cache=True)
def apply(state: np.ndarray, g: int) -> None:
    """Place a plate in the empty groove ``g`` (unchecked), as ``AlveolesState.apply`` does."""
    i = state[EMPTY_AT + g]
    n = state[N_EMPTY] - 1
    last = state[EMPTY + n]
    state[EMPTY + i] = last
    state[EMPTY_AT + last] = i
    state[EMPTY_AT + g] = -1
    state[N_EMPTY] = n
    player = state[PLAYER]
    replay = False
    inc = 1 + (g << 3)
    for k in range(2):
        sq = _GROOVE_SQ[g, k]
        if sq < 0:
            break
        c = state[CODE + sq] + inc
        state[CODE + sq] = c
        sides = c & 7
        if sides == 3:
            _forced_add(state, sq)
        elif sides == 4:
            _forced_remove(state, sq)
            state[OWNER + sq] = player
            value = state[VALUE + sq]
            state[POINTS + player] += value
            if value > 1:
                replay = True
    if replay:
        state[REPLAYS + player] += 1
        if n == 0:
            state[PLAYER] = TERMINAL
    elif n > 0:
        state[PLAYER] = (player + 1) % state[PLAYERS]
    else:
        state[PLAYER] = TERMINAL


@njit(cache=True)
def _closers(state: np.ndarray, g: int) -> int:
    """How many unclaimed 3-sided squares the empty groove ``g`` would close (0–2)."""
    count = 0
    for k in range(2):
        sq = _GROOVE_SQ[g, k]
        if sq >= 0 and state[CODE + sq] & 7 == 3:
            count += 1
    return count


@njit(cache=True)
def random_action(state: np.ndarray, rng: np.ndarray) -> int:
    """A uniformly random legal groove, drawn without listing the legal set."""
    n_forced = state[N_FORCED]
    if n_forced == 0:
        return state[EMPTY + rand_below(rng, state[N_EMPTY])]
    if n_forced == 1:
        return missing_groove(state, state[FORCED])
    # Pick a 3-sided square, then keep its groove with probability 1 / (squares it closes):
    # every distinct groove ends up equally likely.
    while True:
        g = missing_groove(state, state[FORCED + rand_below(rng, n_forced)])
        if _closers(state, g) == 1 or rand_unit(rng) < 0.5:
            return g


@njit(cache=True)
def _is_safe(state: np.ndarray, g: int) -> bool:
    """True when plating ``g`` gives no square its third plate."""
    for k in range(2):
        sq = _GROOVE_SQ[g, k]
        if sq >= 0 and state[CODE + sq] & 7 >= 2:
            return False
    return True


@njit(cache=True)
def rollout_action(state: np.ndarray, rng: np.ndarray) -> int:
    """Greedy playout move, as ``AlveolesState.rollout_action``: close a square (numbered
    first), else a random safe groove, else any groove."""
    n_forced = state[N_FORCED]
    if n_forced > 0:
        if n_forced == 1:
            return missing_groove(state, state[FORCED])
        numbered = 0
        for i in range(n_forced):
            if state[VALUE + state[FORCED + i]] > 1:
                numbered += 1
        if numbered > 0:
            pick = rand_below(rng, numbered)
            for i in range(n_forced):
                sq = state[FORCED + i]
                if state[VALUE + sq] > 1:
                    if pick == 0:
                        return missing_groove(state, sq)
                    pick -= 1
        return missing_groove(state, state[FORCED + rand_below(rng, n_forced)])
    n = state[N_EMPTY]
    for _ in range(ROLLOUT_SAMPLES):
        g = state[EMPTY + rand_below(rng, n)]
        if _is_safe(state, g):
            return g
    safe = 0
    for i in range(n):
        if _is_safe(state, state[EMPTY + i]):
            safe += 1
    if safe == 0:
        return state[EMPTY + rand_below(rng, n)]
    pick = rand_below(rng, safe)
    for i in range(n):
        g = state[EMPTY + i]
        if _is_safe(state, g):
            if pick == 0:
                return g
            pick -= 1
    return state[EMPTY]  # not reached: ``pick`` < the number of safe grooves


@njit(cache=True)
def _close_one(state: np.ndarray) -> int:
    """The closing a cascade plays, as the rules' heuristics do: the most valuable 3-sided
    square, the lowest groove among equals."""
    best_value = -1
    best_groove = -1
    for i in range(state[N_FORCED]):
        sq = state[FORCED + i]
        g = missing_groove(state, sq)
        value = state[VALUE + sq]
        if value > best_value or (value == best_value and g < best_groove):
            best_value = value
            best_groove = g
    return best_groove


@njit(cache=True)
def handover_balance(state: np.ndarray, g: int, scratch: np.ndarray) -> int:
    """Square points the seat to move gains minus what the others gain when it plates ``g``
    and every 3-sided square is then closed in turn (most valuable first) until none is left."""
    scratch[:] = state
    seat = state[PLAYER]
    apply(scratch, g)
    while scratch[N_FORCED] > 0 and scratch[PLAYER] >= 0:
        apply(scratch, _close_one(scratch))
    balance = 0
    for s in range(state[PLAYERS]):
        delta = scratch[POINTS + s] - state[POINTS + s]
        balance += delta if s == seat else -delta
    return balance


@njit(cache=True)
def strong_rollout_action(state: np.ndarray, rng: np.ndarray) -> int:
    """:func:`rollout_action`, except that with no safe groove left it opens the chain that
    costs least (the best :func:`handover_balance`, ties at random), as ``greedy`` does."""
    if state[N_FORCED] > 0:
        return rollout_action(state, rng)
    n = state[N_EMPTY]
    for _ in range(ROLLOUT_SAMPLES):
        g = state[EMPTY + rand_below(rng, n)]
        if _is_safe(state, g):
            return g
    for i in range(n):
        if _is_safe(state, state[EMPTY + i]):
            return rollout_action(state, rng)
    scratch = np.empty_like(state)
    best = 0
    ties = 0
    choice = state[EMPTY]
    for i in range(n):
        g = state[EMPTY + i]
        balance = handover_balance(state, g, scratch)
        if ties == 0 or balance > best:
            best = balance
            ties = 1
            choice = g
        elif balance == best:
            ties += 1
            if rand_below(rng, ties) == 0:
                choice = g
    return choice


@njit(cache=True)
def _max_packing(windows: int) -> int:
    """Largest number of pairwise disjoint windows among ``windows`` (bits over the 36):
    exact, by branching on the lowest window (take it or not), depth first."""
    stack_w = np.empty(80, dtype=np.int64)
    stack_c = np.empty(80, dtype=np.int64)
    stack_w[0] = windows
    stack_c[0] = 0
    top = 1
    best = 0
    while top > 0:
        top -= 1
        w = stack_w[top]
        c = stack_c[top]
        if w == 0:
            best = max(best, c)
            continue
        left = 0
        rest = w
        while rest:
            rest &= rest - 1
            left += 1
        if c + left <= best:
            continue  # even taking every window left cannot beat the best
        low = w & -w
        first = 0
        while (low >> first) != 1:
            first += 1
        stack_w[top] = w & ~low
        stack_c[top] = c
        stack_w[top + 1] = w & ~_OVERLAP[first]
        stack_c[top + 1] = c + 1
        top += 2
    return best


@njit(cache=True)
def scores(state: np.ndarray, out: np.ndarray) -> None:
    """Each seat's total so far: square points and the bonuses of complete lines (``out[:n]``)."""
    players = state[PLAYERS]
    rows = state[ROWS]
    cols = state[COLS]
    for seat in range(players):
        if state[BONUS_MODE] == 2:
            out[seat] = state[POINTS + seat]
            continue
        lines = 0
        for r in range(rows):
            full = True
            for c in range(cols):
                if state[OWNER + 8 * r + c] != seat:
                    full = False
                    break
            if full:
                lines += 1
        for c in range(cols):
            full = True
            for r in range(rows):
                if state[OWNER + 8 * r + c] != seat:
                    full = False
                    break
            if full:
                lines += 1
        windows = 0
        for b in range(_BLOCKS.shape[0]):
            full = True
            for k in range(9):
                if state[OWNER + _BLOCKS[b, k]] != seat:
                    full = False
                    break
            if full:
                windows |= 1 << b
        if state[BONUS_MODE] == 1:
            lines += _max_packing(windows)
        else:
            while windows:
                windows &= windows - 1
                lines += 1
        out[seat] = state[POINTS + seat] + BONUS * lines


@njit(cache=True)
def returns(state: np.ndarray, out: np.ndarray) -> None:
    """Winners (top total, ties shared) split 1.0; an unfinished game is even (``out[:n]``)."""
    players = state[PLAYERS]
    if state[PLAYER] >= 0:
        for s in range(players):
            out[s] = 1.0 / players
        return
    totals = np.empty(players, dtype=np.int64)
    scores(state, totals)
    top = totals.max()
    winners = 0
    for s in range(players):
        if totals[s] == top:
            winners += 1
    for s in range(players):
        out[s] = 1.0 / winners if totals[s] == top else 0.0


@njit(cache=True)
def evaluate(state: np.ndarray, seat: int) -> float:
    """As the rules' ``evaluate``: the square-point lead over the best opponent once the pending
    forced closings are played (most valuable first), squashed by tanh into (-1, 1)."""
    players = state[PLAYERS]
    after = state
    if state[N_FORCED] > 0 and state[PLAYER] >= 0:
        after = state.copy()
        while after[N_FORCED] > 0 and after[PLAYER] >= 0:
            apply(after, _close_one(after))
    best_other = -1
    for s in range(players):
        if s != seat and after[POINTS + s] > best_other:
            best_other = after[POINTS + s]
    return np.tanh((after[POINTS + seat] - best_other) / EVAL_SCALE)


@njit(cache=True)
def key(state: np.ndarray) -> int:
    """Zobrist key of the position for a transposition table: the plated grooves, who owns
    each square (which fixes the square points) and the seat to move."""
    h = _ZOBRIST[_Z_PLAYER + 1 + state[PLAYER]]
    for g in range(NUM_GROOVES):
        if state[EMPTY_AT + g] < 0:
            h ^= _ZOBRIST[g]
    for sq in range(CELLS):
        owner = state[OWNER + sq]
        if owner >= 0:
            h ^= _ZOBRIST[_Z_OWNER + 5 * sq + owner]
    return h


CLOSING_CLASS = 2
"""``action_class`` of a groove that closes a square: the forcing moves a search's
quiescence follows."""


@njit(cache=True)
def may_close(state: np.ndarray) -> bool:
    """Whether some groove closes a square (some unclaimed square has three plates)."""
    return state[N_FORCED] > 0


@njit(cache=True)
def action_class(state: np.ndarray, g: int) -> int:
    """``CLOSING_CLASS`` when plating groove ``g`` closes a square, else 0."""
    return CLOSING_CLASS if _closers(state, g) > 0 else 0


@njit(cache=True)
def num_players(state: np.ndarray) -> int:
    return state[PLAYERS]


track(globals())
