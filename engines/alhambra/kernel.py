"""Alhambra compiled: the rules again over one flat ``int64`` array, for the compiled search.

:mod:`engines.alhambra.rules` stays the reference (notation, validation, ``stats()``); this
kernel plays the same game at machine speed and ``tests/engines/test_kernels_alhambra.py``
proves the two equal on every ply of random games for 2–6 players. The position's layout is in
:mod:`kernel_layout`, the building rules over each Alhambra's outline (row bitmaps kept in
the position) and the longest wall in :mod:`kernel_build`, takes and payments in
:mod:`kernel_money`, the moves, refills and scorings in :mod:`kernel_rules`; this module is
the kernel's contract
(ARCHITECTURE.md, "A game kernel"), the playout policies, and :func:`redraw`, the compiled
re-draw of what the seat to move cannot see.

Alhambra has chance and hidden information. The position carries the true order of the bag
and of the money deck, and its own generator for the one draw made during play (the spent
cards reshuffled into a new deck). A search must never read those: it plays on copies passed
through :func:`redraw`, which keeps only what a seat knows (the contents of the bag and the
deck, and the pile each scoring card still sits in) and draws the rest afresh.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from engines import kernel_rng
from engines.alhambra import kernel_build
from engines.alhambra.building import ORIGIN, STRIDE, cell_of
from engines.alhambra.kernel_build import EMPTY, MAX_FRONT, NOWHERE, ROW_HI, ROW_LO, TILE_IDS
from engines.alhambra.kernel_layout import (
    ACTION,
    BAG,
    BAG_N,
    BEFORE_FINAL,
    BUILT,
    CARD_SPAN,
    CELLS,
    COLLECTOR,
    COLLECTOR_N,
    COLLECTOR_POINTS,
    COLLECTOR_TYPES,
    CURRENCY_COUNT,
    DECK,
    DECK_N,
    DISCARD,
    DISCARD_N,
    DISPLAY,
    DISPLAY_N,
    EXACT,
    FINAL_SEAT,
    FINAL_SLOTS,
    FINAL_TILE,
    GRID,
    HAND,
    HOLDERS,
    LAST_ROUND,
    MARKET,
    MARKET_SLOTS,
    MAX_PLAYERS,
    MISSED,
    NUM_TYPES,
    OUTLINE,
    OVER,
    PENDING,
    PENDING_N,
    PHASE,
    PLAYER,
    PLAYERS,
    POINTS,
    RANGES,
    RESERVE,
    RNG,
    ROUNDS,
    SCORING_COUNT,
    SCORINGS,
    SKIP,
    START,
    TILES,
    TOP_VALUE,
    TURNS,
    TYPE_COUNTS,
    WHERE,
    seat_base,
    state_size,
)
from engines.alhambra.kernel_money import (
    MONEY_WORK,
    TAKE_MASKS,
    buy_actions,
    card_value,
    paid_count,
    takes,
)
from engines.alhambra.kernel_rules import (
    apply,
    grid_at,
    holder_counts,
    legal_actions,
    longest_wall,
    majority_points,
    range_at,
    seat_at,
)
from engines.alhambra.notation import BUY, PASS, PAYMENT_CODES
from engines.alhambra.notation import PLACE as PLACE_ACTION
from engines.alhambra.notation import RESERVE as RESERVE_ACTION
from engines.alhambra.policy import LEAD_SCALE, OVERPAY_TOLERANCE
from engines.alhambra.tiles import COST, TYPE_OF, WALLS
from engines.kernel_bits import popcount
from engines.kernel_cache import track
from engines.kernel_rng import rand_below, rand_unit

__all__ = ["apply", "legal_actions"]

MAX_ACTIONS = 8192
"""More than any legal set: takes, every reserve tile on every frontier cell, removals,
exchanges and payments together stay far below it."""
_COST = np.array(COST, dtype=np.int64)
_WALLS = np.array(WALLS, dtype=np.int64)
GREEDY_TEMPERATURE = 1.0
"""Quick-score points that make a move e times likelier in a greedy-weighted playout: an
exact purchase (10) is then about 20 times likelier than one overpaid by 3 coins."""


def encode(state: Any) -> np.ndarray:
    """The kernel position of a rules position (an ``AlhambraState``), hidden order included.

    Reads the table the rules keep (:mod:`engines.alhambra.table`); the generator for the
    position's own later chance is seeded from the turn count, since the rules' generator
    cannot be carried over (a search re-seeds it in every determinisation anyway).
    """
    players = state.players
    out = np.zeros(state_size(players), dtype=np.int64)
    out[kernel_layout_grid(0) :] = EMPTY
    out[PLAYERS] = players
    out[COLLECTOR] = 1 if state.has_collector else 0
    out[MISSED] = BEFORE_FINAL if state.score_missed else SKIP
    out[PHASE] = state.phase
    out[PLAYER] = state.player
    out[START] = state.start
    out[TURNS] = state.turns
    out[SCORINGS] = state.scorings
    out[RNG] = 0x5DEECE66D + 7919 * state.turns
    out[MARKET : MARKET + MARKET_SLOTS] = state.market
    _put(out, BAG, BAG_N, state.bag)
    _put(out, DECK, DECK_N, state.deck)
    _put(out, DISCARD, DISCARD_N, state.discard)
    _put(out, DISPLAY, DISPLAY_N, state.display)
    _put(out, PENDING, PENDING_N, state.pending)
    out[RANGES : RANGES + 2 * SCORING_COUNT] = -1
    for card, (lo, hi) in state.ranges.items():
        out[range_at(card)] = lo
        out[range_at(card) + 1] = hi
    out[FINAL_SEAT : FINAL_SEAT + FINAL_SLOTS] = -1
    k = 0
    for seat, tiles in state.final_queue:
        for tile in tiles:
            out[FINAL_SEAT + k] = seat
            out[FINAL_TILE + k] = tile
            k += 1
    for tile in state.collector_tiles:
        out[COLLECTOR_TYPES + TYPE_OF[tile]] += 1
    out[COLLECTOR_N] = len(state.collector_tiles)
    out[COLLECTOR_POINTS : COLLECTOR_POINTS + ROUNDS] = state.collector_points
    for seat in range(players):
        s = seat_base(seat)
        for c in state.hand(seat):
            out[s + HAND + c] += 1
        out[s + WHERE : s + WHERE + TILE_IDS] = NOWHERE
        out[s + OUTLINE + ROW_LO] = out[s + OUTLINE + ROW_HI] = ORIGIN // STRIDE
        grid = kernel_layout_grid(seat)
        for (x, y), tile in state.alhambra(seat).items():
            cell = cell_of(x, y)
            out[grid + cell] = tile
            out[s + WHERE + tile] = cell
            out[s + TILES] |= 1 << tile
            if tile:
                out[s + TYPE_COUNTS + TYPE_OF[tile]] += 1
            out[s + BUILT] += 1
            kernel_build.mark(out, s + OUTLINE, cell, WALLS[tile])
        for tile in state.reserve(seat):
            out[s + RESERVE] |= 1 << tile
        for r, (majority, wall) in enumerate(state.round_points[seat]):
            out[s + POINTS + 2 * r] = majority
            out[s + POINTS + 2 * r + 1] = wall
        out[s + EXACT] = state.exact[seat]
    return out


def kernel_layout_grid(seat: int) -> int:
    """Offset of ``seat``'s Alhambra in a position."""
    return GRID + seat * CELLS


def _put(out: np.ndarray, at: int, count_at: int, items: list[int]) -> None:
    out[at : at + len(items)] = items
    out[count_at] = len(items)


def new_state(players: int, seed: int = 0, missed_scoring: str = "skip") -> np.ndarray:
    """The opening of the rules' game with ``seed`` (its deal and hidden order)."""
    from engines.registry import load_game

    game = load_game("alhambra", players=players, missed_scoring=missed_scoring)
    return encode(game.new_initial_state(seed))


def load_money(out: np.ndarray, state: Any) -> None:
    """Copy the rules' deck, spent cards and display into ``out`` (after the rules reshuffled
    the spent cards, whose order the kernel draws with its own generator)."""
    _put(out, DECK, DECK_N, state.deck)
    _put(out, DISCARD, DISCARD_N, state.discard)
    _put(out, DISPLAY, DISPLAY_N, state.display)


# --------------------------------------------------------------------------- contract
@njit(cache=True)
def current_player(state: np.ndarray) -> int:
    """Seat to move, -1 once the game is over."""
    return -1 if state[PHASE] == OVER else state[PLAYER]


@njit(cache=True)
def num_players(state: np.ndarray) -> int:
    return state[PLAYERS]


@njit(cache=True)
def scores(state: np.ndarray, out: np.ndarray) -> None:
    """Each seat's points so far, majorities and walls of every round."""
    for seat in range(state[PLAYERS]):
        s = seat_at(seat)
        total = 0
        for k in range(2 * ROUNDS):
            total += state[s + POINTS + k]
        out[seat] = total


@njit(cache=True)
def returns(state: np.ndarray, out: np.ndarray) -> None:
    """Winners (top total, ties shared; never the collector) split 1.0; an unfinished game is
    even."""
    players = state[PLAYERS]
    if state[PHASE] != OVER:
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
def projected(state: np.ndarray, out: np.ndarray) -> None:
    """Points so far plus the next scoring's majorities and walls on the current Alhambras
    (the rules' ``policy.projected``)."""
    n = state[PLAYERS]
    counts = np.zeros((HOLDERS, NUM_TYPES), dtype=np.int64)
    holders = holder_counts(state, counts)
    points = np.zeros(HOLDERS, dtype=np.int64)
    majority_points(counts, holders, min(state[SCORINGS], LAST_ROUND), points)
    scores(state, out)
    for seat in range(n):
        out[seat] += points[seat] + longest_wall(state, seat)


@njit(cache=True)
def evaluate(state: np.ndarray, seat: int) -> float:
    """As the rules' ``evaluate``: the projected lead over the best opponent, through tanh."""
    if state[PHASE] == OVER:
        out = np.zeros(MAX_PLAYERS, dtype=np.float64)
        returns(state, out)
        return 2.0 * out[seat] - 1.0 if out[seat] < 1.0 else 1.0
    n = state[PLAYERS]
    totals = np.zeros(MAX_PLAYERS, dtype=np.int64)
    projected(state, totals)
    best_other = -(1 << 40)
    for s in range(n):
        if s != seat and totals[s] > best_other:
            best_other = totals[s]
    return math.tanh((totals[seat] - best_other) / LEAD_SCALE)


@njit(cache=True)
def random_action(state: np.ndarray, rng: np.ndarray) -> int:
    """A uniformly random legal action (not called once the game is over)."""
    buf = np.empty(MAX_ACTIONS, dtype=np.int64)
    return buf[rand_below(rng, legal_actions(state, buf))]


@njit(cache=True)
def _paid(action: int) -> int:
    code = (action - BUY) % PAYMENT_CODES
    total = 0
    for v in range(1, TOP_VALUE + 1):
        total += v * paid_count(code, v)
    return total


@njit(cache=True)
def _place_any(state: np.ndarray, rng: np.ndarray) -> int:
    """A placement of the first pending tile on a legal cell found from a random point of the
    frontier, else its reserve (the rules' playout does the same)."""
    seat = state[PLAYER]
    tile = state[PENDING]
    g = grid_at(seat)
    w = seat_at(seat) + WHERE
    o = seat_at(seat) + OUTLINE
    front = np.empty(MAX_FRONT, dtype=np.int64)
    nf = kernel_build.frontier(state, o, front)
    if nf > 0:
        start = rand_below(rng, nf)
        for i in range(nf):
            cell = front[(start + i) % nf]
            if kernel_build.can_place(state, g, w, o, cell, _WALLS[tile]):
                return PLACE_ACTION + tile * CELLS + cell
    return RESERVE_ACTION + tile


@njit(cache=True)
def _take_worth(state: np.ndarray, mask: int) -> int:
    worth = 0
    for i in range(state[DISPLAY_N]):
        if mask >> i & 1:
            worth += card_value(state[DISPLAY + i])
    return worth


@njit(cache=True)
def rollout_action(state: np.ndarray, rng: np.ndarray) -> int:
    """The rules' playout move: bought tiles placed where they fit, exact purchases first,
    a close one half the time, else the better of two random takes, else any purchase."""
    if state[PHASE] != ACTION:
        return _place_any(state, rng)
    buf = np.empty(MAX_ACTIONS, dtype=np.int64)
    work = np.empty(MONEY_WORK, dtype=np.int64)
    nb = buy_actions(state, seat_at(state[PLAYER]), buf, 0, work)
    exact = 0
    close = 0
    for i in range(nb):
        over = _paid(buf[i]) - _COST[state[MARKET + (buf[i] - BUY) // PAYMENT_CODES]]
        if over == 0:
            exact += 1
        elif over <= OVERPAY_TOLERANCE:
            close += 1
    if exact > 0 or (close > 0 and rand_unit(rng) < 0.5):
        pick = rand_below(rng, exact if exact > 0 else close)
        for i in range(nb):
            over = _paid(buf[i]) - _COST[state[MARKET + (buf[i] - BUY) // PAYMENT_CODES]]
            if (over == 0) if exact > 0 else (0 < over <= OVERPAY_TOLERANCE):
                if pick == 0:
                    return buf[i]
                pick -= 1
    masks = np.empty(TAKE_MASKS, dtype=np.int64)
    nm = takes(state, masks, 0)
    if nm > 0:
        a = masks[rand_below(rng, nm)]
        b = masks[rand_below(rng, nm)]
        return a if _take_worth(state, a) >= _take_worth(state, b) else b
    if nb > 0:
        return buf[rand_below(rng, nb)]
    return random_action(state, rng)


@njit(cache=True)
def strong_rollout_action(state: np.ndarray, rng: np.ndarray) -> int:
    """The playout of the levels built on the search: :func:`rollout_action`."""
    return rollout_action(state, rng)


@njit(cache=True)
def greedy_rollout_action(state: np.ndarray, rng: np.ndarray) -> int:
    """A legal action drawn with weight ``exp(quick_score / GREEDY_TEMPERATURE)``: the playout
    of an ``expert`` with ``playout`` ``greedy``, which plays as greedy ranks the moves but
    keeps every move possible (an all-greedy playout would repeat the same line every time)."""
    buf = np.empty(MAX_ACTIONS, dtype=np.int64)
    n = legal_actions(state, buf)
    weights = np.empty(n, dtype=np.float64)
    top = -math.inf
    for i in range(n):
        weights[i] = quick_score(state, buf[i])
        top = max(top, weights[i])
    total = 0.0
    for i in range(n):
        # Relative to the best score, so no weight overflows and the best one is 1.
        weights[i] = math.exp((weights[i] - top) / GREEDY_TEMPERATURE)
        total += weights[i]
    left = rand_unit(rng) * total
    for i in range(n - 1):
        left -= weights[i]
        if left < 0.0:
            return buf[i]
    return buf[n - 1]


@njit(cache=True)
def quick_score(state: np.ndarray, action: int) -> float:
    """The rules' ``policy.quick_score``: exact purchases, then close ones, the largest takes,
    placements next to many tiles; redesigns last."""
    if action >= BUY:
        tile = state[MARKET + (action - BUY) // PAYMENT_CODES]
        return 10.0 - (_paid(action) - _COST[tile])
    if PASS < action < RESERVE_ACTION:
        return float(_take_worth(state, action))
    if action >= PLACE_ACTION:
        cell = (action - PLACE_ACTION) % CELLS
        sides = kernel_build.touching_sides(state, seat_at(state[PLAYER]) + OUTLINE, cell)
        near = popcount(sides)
        return 6.0 + near if state[PHASE] != ACTION else 2.0 + near
    if RESERVE_ACTION <= action < RESERVE_ACTION + TILE_IDS and state[PHASE] != ACTION:
        return 1.0
    return -1.0


# --------------------------------------------------------------------------- hidden order
@njit(cache=True)
def redraw(state: np.ndarray, rng: np.ndarray) -> None:
    """Re-draw the bag, the money deck and the position's own generator from ``rng``,
    consistently with what every seat knows (the rules' ``infostate.redraw``).

    The bag and the deck's money cards are sorted before they are shuffled, so the result
    depends on the seat's knowledge and ``rng`` alone, never on the true order. A scoring card
    not yet drawn goes to a uniform place in what is left of its pile.
    """
    state[RNG] = np.int64(kernel_rng.next_u64(rng) | np.uint64(1))
    n = state[BAG_N]
    state[BAG : BAG + n].sort()
    _shuffle_from(state, BAG, n, rng)
    size = state[DECK_N]
    money = np.empty(size, dtype=np.int64)
    m = 0
    for i in range(size):
        c = state[DECK + i]
        if c > 0:
            money[m] = c
            m += 1
    money[:m].sort()
    for i in range(m - 1, 0, -1):
        j = rand_below(rng, i + 1)
        money[i], money[j] = money[j], money[i]
    spot = np.full(SCORING_COUNT, -1, dtype=np.int64)
    for card in range(SCORING_COUNT):
        lo = state[RANGES + 2 * card]
        if lo >= 0:
            hi = min(state[RANGES + 2 * card + 1], size)
            spot[card] = lo + rand_below(rng, hi - lo)
            state[RANGES + 2 * card + 1] = hi
    k = 0
    for i in range(size):
        if i == spot[0]:
            state[DECK + i] = -1
        elif i == spot[1]:
            state[DECK + i] = -2
        else:
            state[DECK + i] = money[k]
            k += 1


@njit(cache=True)
def _shuffle_from(state: np.ndarray, at: int, n: int, rng: np.ndarray) -> None:
    for i in range(n - 1, 0, -1):
        j = rand_below(rng, i + 1)
        state[at + i], state[at + j] = state[at + j], state[at + i]


# --------------------------------------------------------------------------- read access
@njit(cache=True)
def tiles_in_play(state: np.ndarray) -> int:
    """Tiles in the bag, market, Alhambras, reserves, pending, gifts and the collector's."""
    total = state[BAG_N] + state[PENDING_N] + state[COLLECTOR_N]
    for slot in range(MARKET_SLOTS):
        if state[MARKET + slot]:
            total += 1
    for slot in range(FINAL_SLOTS):
        if state[FINAL_SEAT + slot] >= 0:
            total += 1
    for seat in range(state[PLAYERS]):
        s = seat_at(seat)
        total += state[s + BUILT] - 1 + popcount(state[s + RESERVE])
    return total


@njit(cache=True)
def money_in_play(state: np.ndarray) -> int:
    """Money cards in the deck, the spent pile, the display and the hands."""
    total = state[DISCARD_N] + state[DISPLAY_N]
    for i in range(state[DECK_N]):
        if state[DECK + i] > 0:
            total += 1
    for seat in range(state[PLAYERS]):
        s = seat_at(seat)
        for c in range(CURRENCY_COUNT * CARD_SPAN):
            total += state[s + HAND + c]
    return total


track(globals())
