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
    CURRENCY_COUNT,
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
CARD_KEYS = CURRENCY_COUNT * CARD_SPAN + 1
"""More than any card + 1: a display subset's cards as digits of one key."""


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
    only up to ``TAKE_LIMIT``."""
    size = state[DISPLAY_N]
    keys = np.empty(TAKE_MASKS, dtype=np.int64)
    found = 0
    for mask in range(1, 1 << size):
        count = 0
        total = 0
        key = 0
        for i in range(size):
            if mask >> i & 1:
                c = state[DISPLAY + i]
                count += 1
                total += card_value(c)
                key = key * CARD_KEYS + c + 1  # the display is sorted: equal picks, equal keys
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
    for v in range(1, TOP_VALUE + 1):
        have += v * counts[v]
    if have < price:
        return n
    chosen = np.empty(CURRENCY_CARDS, dtype=np.int64)
    cand = np.empty(CURRENCY_CARDS + 1, dtype=np.int64)
    left = counts.copy()
    depth = 0
    total = 0
    cand[0] = TOP_VALUE
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
                    code += 1 << (PAY_BITS * (chosen[i] - 1))
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
def buy_actions(state: np.ndarray, s: int, out: np.ndarray, n: int) -> int:
    """Every minimal payment for each market tile by the seat at ``s``, slot by slot."""
    counts = np.zeros(TOP_VALUE + 1, dtype=np.int64)
    for slot in range(MARKET_SLOTS):
        tile = state[MARKET + slot]
        if tile:
            hand = s + HAND + slot * CARD_SPAN
            for v in range(1, TOP_VALUE + 1):
                counts[v] = state[hand + v]
            n = payments(counts, _COST[tile], slot, out, n)
    return n


track(globals())
