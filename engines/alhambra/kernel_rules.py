"""Alhambra's moves and everything between two turns, compiled: the legal set, ``apply``,
refills, the three scorings, the collector and the end of the game (:mod:`flow` and
:mod:`table` of the rules, over the array of :mod:`kernel_layout`).

Actions are the rules' action numbers (:mod:`engines.alhambra.notation`), so a legal set
compares with the rules' directly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.alhambra import kernel_build
from engines.alhambra.kernel_build import CELLS, EMPTY, MAX_FRONT, NOWHERE, TILE_IDS
from engines.alhambra.kernel_layout import (
    ACTION,
    BAG,
    BAG_N,
    BEFORE_FINAL,
    BUILT,
    COLLECTOR,
    COLLECTOR_N,
    COLLECTOR_POINTS,
    COLLECTOR_TYPES,
    DECK,
    DECK_N,
    DISCARD,
    DISCARD_N,
    DISPLAY,
    DISPLAY_N,
    EXACT,
    FINAL,
    FINAL_SEAT,
    FINAL_TILE,
    GRID,
    HAND,
    MARKET,
    MISSED,
    NUM_TYPES,
    OVER,
    PENDING,
    PENDING_N,
    PHASE,
    PLACE,
    PLAYER,
    PLAYERS,
    POINTS,
    RANGES,
    RESERVED,
    RNG,
    SCORINGS,
    SEAT_SIZE,
    SEATS,
    TURNS,
    TYPE_COUNTS,
    WHERE,
)
from engines.alhambra.money import TAKE_LIMIT
from engines.alhambra.notation import BUY, GIVE, PAYMENT_CODES, REMOVE, RESERVE, SWAP, TILE_SPAN
from engines.alhambra.notation import PLACE as PLACE_ACTION
from engines.alhambra.scoring import MAJORITY_POINTS
from engines.alhambra.tiles import COST, TYPE_OF, WALLS
from engines.kernel_cache import track
from engines.kernel_rng import rand_below

_COST = np.array(COST, dtype=np.int64)
_TYPE = np.array(TYPE_OF, dtype=np.int64)
_WALLS = np.array(WALLS, dtype=np.int64)
_MAJORITY = np.zeros((3, NUM_TYPES, 3), dtype=np.int64)
for _r, _rows in enumerate(MAJORITY_POINTS):
    for _t, _row in enumerate(_rows):
        _MAJORITY[_r, _t, : len(_row)] = _row
del _r, _rows, _t, _row
COLLECTOR_SETUP = 6
COLLECTOR_AFTER_FIRST = 6
MAX_PAYMENT_CARDS = 30


@njit(cache=True)
def seat_at(seat: int) -> int:
    return SEATS + seat * SEAT_SIZE


@njit(cache=True)
def grid_at(seat: int) -> int:
    return GRID + seat * CELLS


# --------------------------------------------------------------------------- legal set
@njit(cache=True)
def takes(state: np.ndarray, out: np.ndarray, n: int) -> int:
    """Display-slot masks, one per distinct set of cards (the first such mask); several cards
    only up to ``TAKE_LIMIT``."""
    size = state[DISPLAY_N]
    keys = np.empty(16, dtype=np.int64)
    found = 0
    for mask in range(1, 1 << size):
        count = 0
        total = 0
        key = 0
        for i in range(size):
            if mask >> i & 1:
                c = state[DISPLAY + i]
                count += 1
                total += c % 10
                key = key * 64 + c + 1  # the display is sorted: equal picks, equal keys
        if count > 1 and total > TAKE_LIMIT:
            continue
        repeat = False
        for j in range(found):
            if keys[j] == key:
                repeat = True
                break
        if not repeat:
            keys[found] = key
            found += 1
            out[n] = mask
            n += 1
    return n


@njit(cache=True)
def payments(counts: np.ndarray, price: int, slot: int, out: np.ndarray, n: int) -> int:
    """Buy actions of every minimal payment of ``price`` from ``counts`` (cards of each value
    1–9): card sets that cover the price and from which no card can be left out."""
    have = 0
    for v in range(1, 10):
        have += v * counts[v]
    if have < price:
        return n
    chosen = np.empty(MAX_PAYMENT_CARDS, dtype=np.int64)
    cand = np.empty(MAX_PAYMENT_CARDS + 1, dtype=np.int64)
    left = counts.copy()
    depth = 0
    total = 0
    cand[0] = 9
    # Values chosen in descending order (each multiset once); the last one is the smallest.
    while depth >= 0:
        v = cand[depth]
        while v >= 1 and left[v] == 0:
            v -= 1
        if v < 1:
            depth -= 1
            if depth >= 0:
                u = chosen[depth]
                left[u] += 1
                total -= u
                cand[depth] = u - 1
            continue
        chosen[depth] = v
        if total + v >= price:
            if total < price:
                code = 0
                for i in range(depth + 1):
                    code += 1 << (2 * (chosen[i] - 1))
                out[n] = BUY + slot * PAYMENT_CODES + code
                n += 1
            cand[depth] = v - 1
        else:
            left[v] -= 1
            total += v
            depth += 1
            cand[depth] = v
    return n


@njit(cache=True)
def _placements(
    state: np.ndarray,
    g: int,
    tile: int,
    front: np.ndarray,
    nf: int,
    sides: np.ndarray,
    box: tuple[int, int, int, int],
    seen: np.ndarray,
    todo: np.ndarray,
    out: np.ndarray,
    n: int,
) -> int:
    walls = _WALLS[tile]
    base = PLACE_ACTION + tile * CELLS
    for i in range(nf):
        if kernel_build.placeable(state, g, front, sides, i, walls, box, seen, todo):
            out[n] = base + front[i]
            n += 1
    return n


@njit(cache=True)
def legal_actions(state: np.ndarray, out: np.ndarray) -> int:
    """The legal action numbers into ``out`` (no repeats; ``pass`` alone when nothing else
    is legal); 0 once the game is over."""
    phase = state[PHASE]
    if phase == OVER:
        return 0
    seat = state[PLAYER]
    s = seat_at(seat)
    g = grid_at(seat)
    w = s + WHERE
    front = np.empty(MAX_FRONT, dtype=np.int64)
    nf = kernel_build.frontier(state, g, w, front)
    sides = np.empty((nf, 3), dtype=np.int64)
    kernel_build.survey(state, g, front, nf, sides)
    box = kernel_build.bounds(state, w)
    seen, todo = kernel_build.scratch(box)
    n = 0
    if phase != ACTION:
        for i in range(state[PENDING_N]):
            tile = state[PENDING + i]
            n = _placements(state, g, tile, front, nf, sides, box, seen, todo, out, n)
            out[n] = RESERVE + tile
            n += 1
            if phase == PLACE and state[COLLECTOR] == 1:
                out[n] = GIVE + tile
                n += 1
        return n
    n = takes(state, out, n)
    for tile in range(1, TILE_IDS):
        if state[s + RESERVED + tile]:
            n = _placements(state, g, tile, front, nf, sides, box, seen, todo, out, n)
    marks = np.zeros(TILE_IDS, dtype=np.int64)
    stack = np.empty(TILE_IDS, dtype=np.int64)
    built = state[s + BUILT]
    for tile in range(1, TILE_IDS):
        cell = state[w + tile]
        if cell == NOWHERE:
            continue
        if kernel_build.can_remove(state, g, w, tile, built, marks, stack):
            out[n] = REMOVE + tile
            n += 1
        # An exchange keeps the old tile's walls on every side with a neighbour.
        sides_here = kernel_build.touching_sides(state, g, cell)
        old = _WALLS[tile]
        for r in range(1, TILE_IDS):
            if state[s + RESERVED + r] and not (_WALLS[r] ^ old) & sides_here:
                out[n] = SWAP + r * TILE_SPAN + tile
                n += 1
    counts = np.zeros(10, dtype=np.int64)
    for slot in range(4):
        tile = state[MARKET + slot]
        if tile:
            for v in range(1, 10):
                counts[v] = state[s + HAND + slot * 10 + v]
            n = payments(counts, _COST[tile], slot, out, n)
    if n == 0:
        out[0] = 0  # pass: only when nothing else is legal
        return 1
    return n


# --------------------------------------------------------------------------- moves
@njit(cache=True)
def _build(state: np.ndarray, seat: int, tile: int, cell: int) -> None:
    s = seat_at(seat)
    state[grid_at(seat) + cell] = tile
    state[s + WHERE + tile] = cell
    state[s + TYPE_COUNTS + _TYPE[tile]] += 1
    state[s + BUILT] += 1


@njit(cache=True)
def _unbuild(state: np.ndarray, seat: int, tile: int) -> int:
    s = seat_at(seat)
    cell = state[s + WHERE + tile]
    state[grid_at(seat) + cell] = EMPTY
    state[s + WHERE + tile] = NOWHERE
    state[s + TYPE_COUNTS + _TYPE[tile]] -= 1
    state[s + BUILT] -= 1
    return cell


@njit(cache=True)
def _drop_pending(state: np.ndarray, tile: int) -> None:
    n = state[PENDING_N]
    k = 0
    for i in range(n):
        t = state[PENDING + i]
        if t != tile:
            state[PENDING + k] = t
            k += 1
    state[PENDING_N] = k


@njit(cache=True)
def apply(state: np.ndarray, action: int) -> None:
    """Play legal ``action`` for the seat to move, then whatever follows it (placements, the
    end of the turn, scorings, the end of the game)."""
    seat = state[PLAYER]
    s = seat_at(seat)
    if state[PHASE] != ACTION:
        if action >= PLACE_ACTION:
            tile = (action - PLACE_ACTION) // CELLS
            _drop_pending(state, tile)
            _build(state, seat, tile, (action - PLACE_ACTION) % CELLS)
        elif action < REMOVE:
            tile = action - RESERVE
            _drop_pending(state, tile)
            state[s + RESERVED + tile] = 1
        else:
            tile = action - GIVE
            _drop_pending(state, tile)
            state[COLLECTOR_TYPES + _TYPE[tile]] += 1
            state[COLLECTOR_N] += 1
        if state[PENDING_N] == 0:
            if state[PHASE] == PLACE:
                end_turn(state)
            else:
                next_gift(state)
        return
    if action >= BUY:
        slot = (action - BUY) // PAYMENT_CODES
        code = (action - BUY) % PAYMENT_CODES
        paid = 0
        for v in range(1, 10):
            for _ in range(code >> (2 * (v - 1)) & 3):
                state[s + HAND + slot * 10 + v] -= 1
                state[DISCARD + state[DISCARD_N]] = slot * 10 + v
                state[DISCARD_N] += 1
                paid += v
        tile = state[MARKET + slot]
        state[MARKET + slot] = 0
        state[PENDING + state[PENDING_N]] = tile
        state[PENDING_N] += 1
        if paid == _COST[tile]:
            state[s + EXACT] += 1
            return  # another action
    elif action >= PLACE_ACTION:
        tile = (action - PLACE_ACTION) // CELLS
        state[s + RESERVED + tile] = 0
        _build(state, seat, tile, (action - PLACE_ACTION) % CELLS)
    elif action >= SWAP:
        r = (action - SWAP) // TILE_SPAN
        built = (action - SWAP) % TILE_SPAN
        cell = _unbuild(state, seat, built)
        state[s + RESERVED + r] = 0
        _build(state, seat, r, cell)
        state[s + RESERVED + built] = 1
    elif action >= REMOVE:
        tile = action - REMOVE
        _unbuild(state, seat, tile)
        state[s + RESERVED + tile] = 1
    elif action > 0:
        size = state[DISPLAY_N]
        k = 0
        for i in range(size):
            c = state[DISPLAY + i]
            if action >> i & 1:
                state[s + HAND + c] += 1
            else:
                state[DISPLAY + k] = c
                k += 1
        state[DISPLAY_N] = k
    # Any action but an exact purchase ends the action phase.
    if state[PENDING_N] > 0:
        state[PHASE] = PLACE
    else:
        end_turn(state)


# --------------------------------------------------------------------------- between turns
@njit(cache=True)
def _shuffle(state: np.ndarray, at: int, n: int) -> None:
    """Shuffle ``n`` entries at ``at`` with the position's own generator."""
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = np.uint64(state[RNG])
    for i in range(n - 1, 0, -1):
        j = rand_below(rng, i + 1)
        state[at + i], state[at + j] = state[at + j], state[at + i]
    state[RNG] = np.int64(rng[0])


@njit(cache=True)
def _draw_card(state: np.ndarray) -> int:
    """The top money card (an empty deck first rebuilt from the spent cards, shuffled); 0
    when there is none at all (0 is no card)."""
    if state[DECK_N] == 0:
        if state[DISCARD_N] == 0:
            return 0
        n = state[DISCARD_N]
        state[DECK : DECK + n] = state[DISCARD : DISCARD + n]
        state[DECK_N] = n
        state[DISCARD_N] = 0
        _shuffle(state, DECK, n)
    state[DECK_N] -= 1
    c = state[DECK + state[DECK_N]]
    if c < 0:
        state[RANGES + 2 * (-c - 1)] = -1
        state[RANGES + 2 * (-c - 1) + 1] = -1
    return c


@njit(cache=True)
def refill_display(state: np.ndarray) -> int:
    """Back to four cards; returns the scoring cards met on the way, in order, as
    ``first + 10 * second`` of their numbers (1, 2; 0 for none)."""
    found = 0
    shift = 1
    while state[DISPLAY_N] < 4:
        c = _draw_card(state)
        if c == 0:
            break
        if c < 0:
            found += -c * shift
            shift *= 10
            continue
        i = state[DISPLAY_N]
        while i > 0 and state[DISPLAY + i - 1] > c:
            state[DISPLAY + i] = state[DISPLAY + i - 1]
            i -= 1
        state[DISPLAY + i] = c
        state[DISPLAY_N] += 1
    return found


@njit(cache=True)
def score_found(state: np.ndarray, found: int) -> None:
    while found:
        score_round(state, found % 10 - 1)
        found //= 10


@njit(cache=True)
def end_turn(state: np.ndarray) -> None:
    """Refill the market (or end the game), refill the display, score any scoring card met,
    pass to the next seat."""
    state[TURNS] += 1
    state[PENDING_N] = 0
    full = True
    for slot in range(4):
        if state[MARKET + slot] == 0 and state[BAG_N] > 0:
            state[BAG_N] -= 1
            state[MARKET + slot] = state[BAG + state[BAG_N]]
        if state[MARKET + slot] == 0:
            full = False
    if not full:
        _start_end(state)
        return
    score_found(state, refill_display(state))
    state[PHASE] = ACTION
    state[PLAYER] = (state[PLAYER] + 1) % state[PLAYERS]


@njit(cache=True)
def _start_end(state: np.ndarray) -> None:
    """Each market tile goes to the one player holding the most money of its slot's currency
    (a tie: nobody), to be placed or reserved; then the last scoring."""
    n = state[PLAYERS]
    for slot in range(4):
        state[FINAL_SEAT + slot] = -1
        tile = state[MARKET + slot]
        if not tile:
            continue
        top = 0
        who = -1
        for seat in range(n):
            money = 0
            for v in range(1, 10):
                money += v * state[seat_at(seat) + HAND + slot * 10 + v]
            if money > top:
                top = money
                who = seat
            elif money == top:
                who = -1
        if top > 0 and who >= 0:
            state[FINAL_SEAT + slot] = who
            state[FINAL_TILE + slot] = tile
            state[MARKET + slot] = 0
    next_gift(state)


@njit(cache=True)
def next_gift(state: np.ndarray) -> None:
    """Hand the lowest seat's end-of-game gifts over, or score the end once none is left."""
    seat = -1
    for slot in range(4):
        who = state[FINAL_SEAT + slot]
        if who >= 0 and (seat < 0 or who < seat):
            seat = who
    if seat >= 0:
        k = 0
        for slot in range(4):
            if state[FINAL_SEAT + slot] == seat:
                state[PENDING + k] = state[FINAL_TILE + slot]
                state[FINAL_SEAT + slot] = -1
                k += 1
        state[PENDING : PENDING + k].sort()
        state[PENDING_N] = k
        state[PLAYER] = seat
        state[PHASE] = FINAL
        return
    if state[MISSED] == BEFORE_FINAL:
        # The scoring cards never drawn, in order (the bag is empty: the collector's gifts
        # after them are nothing).
        for card in range(2):
            if state[RANGES + 2 * card] >= 0:
                score_round(state, card)
    score_round(state, 2)
    state[PENDING_N] = 0
    state[PHASE] = OVER


@njit(cache=True)
def majority_points(counts: np.ndarray, holders: int, round_index: int, out: np.ndarray) -> None:
    """Majority points of each of ``holders`` rows of ``counts`` (tiles by type) into ``out``:
    tied holders share the places they occupy, rounded down; no tile, no points."""
    out[:holders] = 0
    places = round_index + 1
    for t in range(NUM_TYPES):
        place = 0
        level = 1 << 30
        while place < places:
            best = 0
            for h in range(holders):
                c = counts[h, t]
                if best < c < level:
                    best = c
            if best == 0:
                break
            tied = 0
            pool = 0
            for h in range(holders):
                if counts[h, t] == best:
                    if place + tied < places:
                        pool += _MAJORITY[round_index, t, place + tied]
                    tied += 1
            for h in range(holders):
                if counts[h, t] == best:
                    out[h] += pool // tied
            place += tied
            level = best


@njit(cache=True)
def holder_counts(state: np.ndarray, counts: np.ndarray) -> int:
    """Tiles by type in each seat's Alhambra, and the collector's as one more row."""
    n = state[PLAYERS]
    for seat in range(n):
        for t in range(NUM_TYPES):
            counts[seat, t] = state[seat_at(seat) + TYPE_COUNTS + t]
    if state[COLLECTOR] == 1:
        for t in range(NUM_TYPES):
            counts[n, t] = state[COLLECTOR_TYPES + t]
        return n + 1
    return n


@njit(cache=True)
def longest_wall(state: np.ndarray, seat: int) -> int:
    return kernel_build.longest_wall(state, grid_at(seat), seat_at(seat) + WHERE)


@njit(cache=True)
def score_round(state: np.ndarray, round_index: int) -> None:
    """Scoring round 0, 1 (the scoring cards) or 2 (the end), with the collector's gifts."""
    counts = np.zeros((7, NUM_TYPES), dtype=np.int64)
    holders = holder_counts(state, counts)
    points = np.zeros(7, dtype=np.int64)
    majority_points(counts, holders, round_index, points)
    n = state[PLAYERS]
    for seat in range(n):
        s = seat_at(seat)
        state[s + POINTS + 2 * round_index] += points[seat]
        state[s + POINTS + 2 * round_index + 1] += longest_wall(state, seat)
    state[SCORINGS] += 1
    if state[COLLECTOR] == 1:
        state[COLLECTOR_POINTS + round_index] += points[n]
        if round_index == 0:
            _gift_collector(state, COLLECTOR_AFTER_FIRST)
        elif round_index == 1:
            _gift_collector(state, state[BAG_N] // 3)


@njit(cache=True)
def _gift_collector(state: np.ndarray, count: int) -> None:
    for _ in range(min(count, state[BAG_N])):
        state[BAG_N] -= 1
        state[COLLECTOR_TYPES + _TYPE[state[BAG + state[BAG_N]]]] += 1
        state[COLLECTOR_N] += 1


track(globals())
