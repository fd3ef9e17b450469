"""Money: 108 cards in four currencies (values 1–9, three copies each) and two scoring cards.

A card is an int ``currency * 10 + value``; the scoring cards are ``SCORING_1`` and
``SCORING_2`` (negative, so they never pass for money). Hands and the display are kept sorted,
so a card set has one canonical order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, TypeAlias

Card: TypeAlias = int

CURRENCIES: Final = ("denar", "dirham", "ducat", "florin")
"""The four currencies; market slot ``i`` is paid in ``CURRENCIES[i]``."""
CURRENCY_INDEX: Final = {name: i for i, name in enumerate(CURRENCIES)}
VALUES: Final = range(1, 10)
COPIES: Final = 3
SCORING_1: Final = -1
SCORING_2: Final = -2
SCORING_CARDS: Final = (SCORING_1, SCORING_2)
PILES: Final = 5
SCORING_PILE: Final = {SCORING_1: 1, SCORING_2: 3}
"""Pile (0-based, 0 = top) each scoring card is shuffled into: piles 2 and 4 of the rules."""
HAND_TARGET: Final = 20
"""Cards are dealt to each player until their total reaches this."""
TAKE_LIMIT: Final = 5
"""Several display cards may be taken at once when their total is at most this."""
CODE_BASE: Final = 4
"""A payment's code: the count of each value (0–3) as base-4 digits, value 1 lowest."""
PAYMENT_CODES: Final = CODE_BASE ** len(VALUES)


def card(currency: int, value: int) -> Card:
    return currency * 10 + value


def currency_of(c: Card) -> int:
    return c // 10


def value_of(c: Card) -> int:
    return c % 10


def full_deck() -> list[Card]:
    """The 108 money cards in a fixed order (currency, then value, then copy)."""
    return [card(cur, v) for cur in range(len(CURRENCIES)) for v in VALUES for _ in range(COPIES)]


def card_name(c: Card) -> str:
    if c < 0:
        return f"scoring:{-c}"
    return f"{CURRENCIES[currency_of(c)]}:{value_of(c)}"


def parse_card(text: str) -> Card | None:
    """``denar:3`` (currency name, any case, or its first three letters) -> card, else None."""
    name, sep, value = text.strip().lower().partition(":")
    if not sep or not value.strip().isdigit():
        return None
    v = int(value.strip())
    cur = CURRENCY_INDEX.get(name.strip())
    if cur is None:
        matches = [i for i, n in enumerate(CURRENCIES) if len(name) >= 3 and n.startswith(name)]
        cur = matches[0] if len(matches) == 1 else None
    if cur is None or v not in VALUES:
        return None
    return card(cur, v)


def pile_sizes(total: int) -> list[int]:
    """``total`` cards in ``PILES`` piles as equal as possible, the larger piles on top."""
    base, extra = divmod(total, PILES)
    return [base + (1 if i < extra else 0) for i in range(PILES)]


def payment_code(values: Iterable[int]) -> int:
    code = 0
    for v in values:
        code += CODE_BASE ** (v - 1)
    return code


def payment_values(code: int) -> list[int]:
    """The card values of a payment code, ascending."""
    out: list[int] = []
    for v in VALUES:
        code, count = divmod(code, CODE_BASE)
        out.extend([v] * count)
    return out


def minimal_payments(values: Sequence[int], price: int) -> list[tuple[int, ...]]:
    """Every multiset of ``values`` (card values of one currency) that covers ``price`` and from
    which no card can be left out, as ascending tuples in ascending order.

    No card can be left out exactly when the total minus the smallest card is below the price.
    """
    counts = [0] * 10
    for v in values:
        counts[v] += 1
    if sum(values) < price:
        return []
    found: list[tuple[int, ...]] = []
    chosen: list[int] = []

    def extend(top: int, total: int) -> None:
        # Values are chosen in descending order, so the last one chosen is the smallest.
        if total >= price:
            if total - chosen[-1] < price:
                found.append(tuple(reversed(chosen)))
            return
        for v in range(top, 0, -1):
            if counts[v]:
                counts[v] -= 1
                chosen.append(v)
                extend(v, total + v)
                chosen.pop()
                counts[v] += 1

    extend(9, 0)
    return sorted(set(found))
