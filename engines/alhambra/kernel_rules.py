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
from engines.alhambra.building import STRIDE
from engines.alhambra.kernel_build import ALL_SIDES, CUT_WORK, EMPTY, NOWHERE
from engines.alhambra.kernel_layout import (
    ACTION,
    BAG,
    BAG_N,
    BEFORE_FINAL,
    BUILT,
    CARD_SPAN,
    CELLS,
    COLLECTOR,
    COLLECTOR_AFTER_FIRST,
    COLLECTOR_N,
    COLLECTOR_POINTS,
    COLLECTOR_SECOND_SHARE,
    COLLECTOR_TYPES,
    DECK,
    DECK_N,
    DISCARD,
    DISCARD_N,
    DISPLAY,
    DISPLAY_N,
    DISPLAY_SIZE,
    EXACT,
    FINAL,
    FINAL_SEAT,
    FINAL_SLOTS,
    FINAL_TILE,
    GRID,
    HAND,
    HOLDERS,
    LAST_ROUND,
    MARKET,
    MARKET_SLOTS,
    MISSED,
    NUM_TYPES,
    OUTLINE,
    OVER,
    PENDING,
    PENDING_N,
    PHASE,
    PLACE,
    PLAYER,
    PLAYERS,
    POINTS,
    RANGES,
    RESERVE,
    RNG,
    ROUNDS,
    SCORING_COUNT,
    SCORINGS,
    SEAT_SIZE,
    SEATS,
    TILES,
    TOP_VALUE,
    TURNS,
    TYPE_COUNTS,
    WHERE,
)
from engines.alhambra.kernel_money import MONEY_WORK, buy_actions, paid_count, takes
from engines.alhambra.notation import BUY, GIVE, PASS, PAYMENT_CODES, REMOVE, SWAP, TILE_SPAN
from engines.alhambra.notation import PLACE as PLACE_ACTION
from engines.alhambra.notation import RESERVE as RESERVE_ACTION
from engines.alhambra.scoring import MAJORITY_POINTS
from engines.alhambra.tiles import COST, TYPE_OF, WALLS
from engines.kernel_bits import trailing_zeros
from engines.kernel_cache import track
from engines.kernel_rng import rand_below

_COST = np.array(COST, dtype=np.int64)
_TYPE = np.array(TYPE_OF, dtype=np.int64)
_WALLS = np.array(WALLS, dtype=np.int64)
_MAJORITY = np.zeros((ROUNDS, NUM_TYPES, ROUNDS), dtype=np.int64)
"""Points of each place (up to one per round) by round and type."""
for _r, _rows in enumerate(MAJORITY_POINTS):
    for _t, _row in enumerate(_rows):
        _MAJORITY[_r, _t, : len(_row)] = _row
del _r, _rows, _t, _row
WALL_KINDS = ALL_SIDES + 1
"""Distinct wall sets of a tile (a bit per side)."""
_SAME_WALLS = np.zeros((WALL_KINDS, WALL_KINDS), dtype=np.int64)
"""``[walls, sides]``: the tile ids whose walls are ``walls`` on every one of ``sides``, as a
mask (the tiles an exchange may bring in for a tile with ``walls`` touching on ``sides``)."""
for _walls in range(WALL_KINDS):
    for _sides in range(WALL_KINDS):
        for _tile, _w in enumerate(WALLS):
            if not (_w ^ _walls) & _sides:
                _SAME_WALLS[_walls, _sides] |= 1 << _tile
del _walls, _sides, _tile, _w
NO_CARD = 0
FOUND_BASE = 10
"""Scoring cards met in one refill, packed as digits."""


@njit(cache=True)
def seat_at(seat: int) -> int:
    return SEATS + seat * SEAT_SIZE


@njit(cache=True)
def grid_at(seat: int) -> int:
    return GRID + seat * CELLS


# --------------------------------------------------------------------------- legal set
FITS = 0
"""Work of the legal set: per wall set, the cells a tile with those walls fits, a row a word."""
HOLE_KNOWN = FITS + WALL_KINDS * STRIDE
"""Work: the split cells whose hole check is done, a row a word."""
HOLE = HOLE_KNOWN + STRIDE
"""Work: the split cells that would cut an empty cell off, a row a word."""
SHARED = HOLE + STRIDE
"""Work the money part and the cut-vertex search use in turn."""
WORK = SHARED + max(MONEY_WORK, CUT_WORK)
"""Scratch entries :func:`legal_actions` allocates once and its parts share."""


@njit(cache=True)
def placements(
    state: np.ndarray, seat: int, tiles: int, out: np.ndarray, n: int, work: np.ndarray
) -> int:
    """Every legal placement of each tile of ``tiles`` (a mask, ascending ids) in ``seat``'s
    Alhambra, cells ascending. The cells fitting each wall set are worked out once per wall
    set, and each split cell's hole check once, in ``work`` (``FITS`` to ``SHARED``)."""
    g = grid_at(seat)
    w = seat_at(seat) + WHERE
    o = seat_at(seat) + OUTLINE
    lo, hi = kernel_build.rows(state, o)
    done = 0
    checked = False
    while tiles:
        tile = trailing_zeros(tiles)
        tiles &= tiles - 1
        walls = _WALLS[tile]
        fits = FITS + walls * STRIDE
        if not done >> walls & 1:
            done |= 1 << walls
            for y in range(lo, hi + 1):
                work[fits + y] = kernel_build.fitting_row(state, o, y, walls)
        base = PLACE_ACTION + tile * CELLS
        for y in range(lo, hi + 1):
            m = work[fits + y]
            while m:
                x = trailing_zeros(m)
                m &= m - 1
                cell = y * STRIDE + x
                if kernel_build.splits(state, o, cell):
                    if not checked:
                        work[HOLE_KNOWN + lo : HOLE_KNOWN + hi + 1] = 0
                        checked = True
                    bit = np.int64(1) << x
                    if not work[HOLE_KNOWN + y] & bit:
                        work[HOLE_KNOWN + y] |= bit
                        if kernel_build.no_hole(state, g, w, o, cell):
                            work[HOLE + y] &= ~bit
                        else:
                            work[HOLE + y] |= bit
                    if work[HOLE + y] & bit:
                        continue
                out[n] = base + cell
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
    work = np.empty(WORK, dtype=np.int64)
    n = 0
    if phase != ACTION:
        for i in range(state[PENDING_N]):
            tile = state[PENDING + i]
            n = placements(state, seat, np.int64(1) << tile, out, n, work)
            out[n] = RESERVE_ACTION + tile
            n += 1
            if phase == PLACE and state[COLLECTOR] == 1:
                out[n] = GIVE + tile
                n += 1
        return n
    rest = work[SHARED:]
    n = takes(state, out, n)
    reserve = state[s + RESERVE]
    n = placements(state, seat, reserve, out, n, work)
    o = s + OUTLINE
    built = state[s + TILES]
    leaving = kernel_build.removable(
        state, grid_at(seat), s + WHERE, o, built, state[s + BUILT], rest
    )
    m = built & ~np.int64(1)  # the fountain stays
    while m:
        tile = trailing_zeros(m)
        m &= m - 1
        if leaving >> tile & 1:
            out[n] = REMOVE + tile
            n += 1
        # An exchange keeps the old tile's walls on every side with a neighbour.
        sides = kernel_build.touching_sides(state, o, state[s + WHERE + tile])
        swaps = reserve & _SAME_WALLS[_WALLS[tile], sides]
        while swaps:
            r = trailing_zeros(swaps)
            swaps &= swaps - 1
            out[n] = SWAP + r * TILE_SPAN + tile
            n += 1
    n = buy_actions(state, s, out, n, rest)
    if n == 0:
        out[0] = PASS  # only when nothing else is legal
        return 1
    return n


# --------------------------------------------------------------------------- moves
@njit(cache=True)
def build(state: np.ndarray, seat: int, tile: int, cell: int) -> None:
    s = seat_at(seat)
    state[grid_at(seat) + cell] = tile
    state[s + WHERE + tile] = cell
    state[s + TILES] |= np.int64(1) << tile
    state[s + TYPE_COUNTS + _TYPE[tile]] += 1
    state[s + BUILT] += 1
    kernel_build.mark(state, s + OUTLINE, cell, _WALLS[tile])


@njit(cache=True)
def _unbuild(state: np.ndarray, seat: int, tile: int) -> int:
    s = seat_at(seat)
    cell = state[s + WHERE + tile]
    state[grid_at(seat) + cell] = EMPTY
    state[s + WHERE + tile] = NOWHERE
    state[s + TILES] &= ~(np.int64(1) << tile)
    state[s + TYPE_COUNTS + _TYPE[tile]] -= 1
    state[s + BUILT] -= 1
    kernel_build.unmark(state, s + OUTLINE, cell)
    return cell


@njit(cache=True)
def _to_reserve(state: np.ndarray, s: int, tile: int) -> None:
    state[s + RESERVE] |= np.int64(1) << tile


@njit(cache=True)
def _from_reserve(state: np.ndarray, s: int, tile: int) -> None:
    state[s + RESERVE] &= ~(np.int64(1) << tile)


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
            build(state, seat, tile, (action - PLACE_ACTION) % CELLS)
        elif action < REMOVE:
            tile = action - RESERVE_ACTION
            _drop_pending(state, tile)
            _to_reserve(state, s, tile)
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
        hand = s + HAND + slot * CARD_SPAN
        for v in range(1, TOP_VALUE + 1):
            for _ in range(paid_count(code, v)):
                state[hand + v] -= 1
                state[DISCARD + state[DISCARD_N]] = slot * CARD_SPAN + v
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
        _from_reserve(state, s, tile)
        build(state, seat, tile, (action - PLACE_ACTION) % CELLS)
    elif action >= SWAP:
        r = (action - SWAP) // TILE_SPAN
        built = (action - SWAP) % TILE_SPAN
        cell = _unbuild(state, seat, built)
        _from_reserve(state, s, r)
        build(state, seat, r, cell)
        _to_reserve(state, s, built)
    elif action >= REMOVE:
        tile = action - REMOVE
        _unbuild(state, seat, tile)
        _to_reserve(state, s, tile)
    elif action > PASS:
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
def range_at(card: int) -> int:
    """Where the pile range of scoring card ``card`` (-1, -2) is kept."""
    return RANGES + 2 * (-card - 1)


@njit(cache=True)
def _draw_card(state: np.ndarray) -> int:
    """The top money card (an empty deck first rebuilt from the spent cards, shuffled); 0
    when there is none at all (0 is no card)."""
    if state[DECK_N] == 0:
        if state[DISCARD_N] == 0:
            return NO_CARD
        n = state[DISCARD_N]
        state[DECK : DECK + n] = state[DISCARD : DISCARD + n]
        state[DECK_N] = n
        state[DISCARD_N] = 0
        _shuffle(state, DECK, n)
    state[DECK_N] -= 1
    c = state[DECK + state[DECK_N]]
    if c < 0:
        state[range_at(c)] = -1
        state[range_at(c) + 1] = -1
    return c


@njit(cache=True)
def refill_display(state: np.ndarray) -> int:
    """Back to four cards; returns the rounds of the scoring cards met on the way, in order,
    each ``round + 1`` as a digit in base ``FOUND_BASE``, the first lowest (0 for none)."""
    found = 0
    shift = 1
    while state[DISPLAY_N] < DISPLAY_SIZE:
        c = _draw_card(state)
        if c == NO_CARD:
            break
        if c < 0:
            found += -c * shift  # scoring card -k scores round k - 1
            shift *= FOUND_BASE
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
        score_round(state, found % FOUND_BASE - 1)
        found //= FOUND_BASE


@njit(cache=True)
def end_turn(state: np.ndarray) -> None:
    """Refill the market (or end the game), refill the display, score any scoring card met,
    pass to the next seat."""
    state[TURNS] += 1
    state[PENDING_N] = 0
    full = True
    for slot in range(MARKET_SLOTS):
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
    for slot in range(MARKET_SLOTS):
        state[FINAL_SEAT + slot] = -1
        tile = state[MARKET + slot]
        if not tile:
            continue
        top = 0
        who = -1
        for seat in range(n):
            money = 0
            hand = seat_at(seat) + HAND + slot * CARD_SPAN
            for v in range(1, TOP_VALUE + 1):
                money += v * state[hand + v]
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
    for slot in range(FINAL_SLOTS):
        who = state[FINAL_SEAT + slot]
        if who >= 0 and (seat < 0 or who < seat):
            seat = who
    if seat >= 0:
        k = 0
        for slot in range(FINAL_SLOTS):
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
        for card in range(SCORING_COUNT):
            if state[RANGES + 2 * card] >= 0:
                score_round(state, card)
    score_round(state, LAST_ROUND)
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
    """Scoring round 0, 1 (the scoring cards) or ``LAST_ROUND`` (the end), with the
    collector's gifts."""
    counts = np.zeros((HOLDERS, NUM_TYPES), dtype=np.int64)
    holders = holder_counts(state, counts)
    points = np.zeros(HOLDERS, dtype=np.int64)
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
            _gift_collector(state, state[BAG_N] // COLLECTOR_SECOND_SHARE)


@njit(cache=True)
def _gift_collector(state: np.ndarray, count: int) -> None:
    for _ in range(min(count, state[BAG_N])):
        state[BAG_N] -= 1
        state[COLLECTOR_TYPES + _TYPE[state[BAG + state[BAG_N]]]] += 1
        state[COLLECTOR_N] += 1


track(globals())
