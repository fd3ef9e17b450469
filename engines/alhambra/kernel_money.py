"""Alhambra's money, compiled: what the seat to move may take from the display and every
minimal payment it may make for a market tile (:mod:`engines.alhambra.money` and the takes
and purchases of :mod:`engines.alhambra.table`, over the array of :mod:`kernel_layout`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.alhambra.kernel_layout import (
    CARD_SPAN,
    CURRENCY_CARDS,
    DISPLAY,
    DISPLAY_N,
    DISPLAY_SIZE,
    HAND,
    MARKET,
    MARKET_SLOTS,
    PAY_BITS,
    PAY_DIGIT,
    TOP_VALUE,
)
from engines.alhambra.money import TAKE_LIMIT
from engines.alhambra.notation import BUY, PAYMENT_CODES
from engines.alhambra.tiles import COST
from engines.kernel_cache import track

_COST = np.array(COST, dtype=np.int64)
TAKE_MASKS = 1 << DISPLAY_SIZE
"""Subsets of the display."""


@njit(cache=True)
def card_value(c: int) -> int:
    return c % CARD_SPAN


@njit(cache=True)
def paid_count(code: int, value: int) -> int:
    """How many cards of ``value`` a payment code pays."""
    return code >> (PAY_BITS * (value - 1)) & PAY_DIGIT


@njit(cache=True)
def takes(state: np.ndarray, out: np.ndarray, n: int) -> int:
    """Display-slot masks, one per distinct set of cards (the first such mask); several cards
    only up to ``TAKE_LIMIT``.

    The display is sorted, so equal cards sit side by side and the first mask of a set picks
    the leftmost of each run of equal cards: a mask is skipped when it takes a card but not
    the equal card just left of it.
    """
    size = state[DISPLAY_N]
    repeats = 0  # slots holding the same card as the slot before
    for i in range(1, size):
        if state[DISPLAY + i] == state[DISPLAY + i - 1]:
            repeats |= 1 << i
    for mask in range(1, 1 << size):
        if mask & repeats & ~(mask << 1):
            continue
        if mask & (mask - 1):  # several cards
            total = 0
            for i in range(size):
                if mask >> i & 1:
                    total += card_value(state[DISPLAY + i])
            if total > TAKE_LIMIT:
                continue
        out[n] = mask
        n += 1
    return n


PAY_LEFT = 0
PAY_CHOSEN = PAY_LEFT + TOP_VALUE + 1
PAY_CANDIDATE = PAY_CHOSEN + CURRENCY_CARDS
PAY_WORK = PAY_CANDIDATE + CURRENCY_CARDS + 1
"""Scratch of :func:`payments`: the cards of each value left, the values chosen, the next
value to try at each depth."""
MONEY_WORK = PAY_WORK
"""Scratch entries the legal set's money part needs."""


@njit(cache=True)
def _digit(value: int) -> int:
    """One card of ``value`` in a payment code."""
    return 1 << (PAY_BITS * (value - 1))


@njit(cache=True)
def payments(
    state: np.ndarray, hand: int, price: int, slot: int, out: np.ndarray, n: int, work: np.ndarray
) -> int:
    """Buy actions of every minimal payment of ``price`` from the cards of values 1–9 counted
    at ``hand``: card sets that cover the price and from which no card can be left out.
    ``work``: ``PAY_WORK`` entries of scratch."""
    have = 0
    for v in range(1, TOP_VALUE + 1):
        work[PAY_LEFT + v] = state[hand + v]
        have += v * state[hand + v]
    if have < price:
        return n
    depth = 0
    total = 0
    code = 0  # the values chosen below ``depth``
    work[PAY_CANDIDATE] = TOP_VALUE
    # Values chosen in descending order (each multiset once); the last one is the smallest.
    while depth >= 0:
        v = work[PAY_CANDIDATE + depth]
        while v >= 1 and work[PAY_LEFT + v] == 0:
            v -= 1
        if v < 1:
            depth -= 1
            if depth >= 0:
                u = work[PAY_CHOSEN + depth]
                work[PAY_LEFT + u] += 1
                total -= u
                code -= _digit(u)
                work[PAY_CANDIDATE + depth] = u - 1
            continue
        work[PAY_CHOSEN + depth] = v
        if total + v >= price:
            if total < price:
                out[n] = BUY + slot * PAYMENT_CODES + code + _digit(v)
                n += 1
            work[PAY_CANDIDATE + depth] = v - 1
        else:
            work[PAY_LEFT + v] -= 1
            total += v
            code += _digit(v)
            depth += 1
            work[PAY_CANDIDATE + depth] = v
    return n


@njit(cache=True)
def buy_actions(state: np.ndarray, s: int, out: np.ndarray, n: int, work: np.ndarray) -> int:
    """Every minimal payment for each market tile by the seat at ``s``, slot by slot
    (``work``: ``PAY_WORK`` entries of scratch)."""
    for slot in range(MARKET_SLOTS):
        tile = state[MARKET + slot]
        if tile:
            n = payments(state, s + HAND + slot * CARD_SPAN, _COST[tile], slot, out, n, work)
    return n


track(globals())
