"""Les Alvéoles compiled: the rules again over one flat ``int64`` array, for the compiled search.

:mod:`engines.alveoles.rules` stays the reference (notation, validation, ``stats()``); this
module plays the same game at machine speed and ``tests/test_kernels.py`` proves the two equal
on every ply of thousands of random games. Every function is ``@njit(cache=True)``, so a worker
compiles it once and later processes load it from numba's on-disk cache.

A position is one array (``STATE_SIZE`` ints) holding the game's constants too (square values,
player count, bonus rule), so every function takes the array alone and a search copies a
position with one ``copyto``. The empty grooves and the unclaimed 3-sided squares are kept as
lists with a position index each, so a plate is removed from them in constant time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.alveoles.layouts import CELLS
from engines.alveoles.notation import GROOVE_SQUARES, GROOVE_SUM, NUM_GROOVES
from engines.alveoles.rules import AlveolesState
from engines.alveoles.scoring import BLOCK_MASKS, DISJOINT
from engines.core import TERMINAL
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
"""0 = overlapping windows, 1 = disjoint."""
STATE_SIZE = BONUS_MODE + 1

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


def new_state(values: tuple[int, ...], players: int, square_bonus: str) -> np.ndarray:
    """The empty board: ``values`` in square order (a1, b1, …), seat 0 to move."""
    state = np.zeros(STATE_SIZE, dtype=np.int64)
    state[OWNER : OWNER + CELLS] = -1
    state[VALUE : VALUE + CELLS] = values
    state[EMPTY : EMPTY + NUM_GROOVES] = np.arange(NUM_GROOVES)
    state[EMPTY_AT : EMPTY_AT + NUM_GROOVES] = np.arange(NUM_GROOVES)
    state[FORCED_AT : FORCED_AT + CELLS] = -1
    state[N_EMPTY] = NUM_GROOVES
    state[PLAYERS] = players
    state[BONUS_MODE] = 1 if square_bonus == DISJOINT else 0
    return state


def encode(state: AlveolesState) -> np.ndarray:
    """The kernel position of a rules position (replay counts are not carried over)."""
    game = state.game
    out = new_state(game.values, game.num_players, game.square_bonus)
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
def _cheapest_sacrifice(state: np.ndarray, rng: np.ndarray) -> int:
    """With no safe groove left: a groove giving away the least square value (the values of
    the squares it makes 3-sided), ties at random."""
    n = state[N_EMPTY]
    best = -1
    ties = 0
    choice = state[EMPTY]
    for i in range(n):
        g = state[EMPTY + i]
        exposed = 0
        for k in range(2):
            sq = _GROOVE_SQ[g, k]
            if sq >= 0:
                exposed += state[VALUE + sq]
        if best < 0 or exposed < best:
            best = exposed
            ties = 1
            choice = g
        elif exposed == best:
            ties += 1
            if rand_below(rng, ties) == 0:
                choice = g
    return choice


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
        return _cheapest_sacrifice(state, rng)
    pick = rand_below(rng, safe)
    for i in range(n):
        g = state[EMPTY + i]
        if _is_safe(state, g):
            if pick == 0:
                return g
            pick -= 1
    return state[EMPTY]  # not reached: ``pick`` < the number of safe grooves


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
    for seat in range(players):
        lines = 0
        for r in range(8):
            full = True
            for c in range(8):
                if state[OWNER + 8 * r + c] != seat:
                    full = False
                    break
            if full:
                lines += 1
        for c in range(8):
            full = True
            for r in range(8):
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
    """Square-point lead over the best opponent, squashed by tanh into (-1, 1); the rules'
    ``evaluate`` without the forced-closing look-ahead (the playouts end where it would)."""
    players = state[PLAYERS]
    best_other = -1
    for s in range(players):
        if s != seat and state[POINTS + s] > best_other:
            best_other = state[POINTS + s]
    return np.tanh((state[POINTS + seat] - best_other) / EVAL_SCALE)


@njit(cache=True)
def num_players(state: np.ndarray) -> int:
    return state[PLAYERS]
