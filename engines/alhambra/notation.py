"""Action numbering and the canonical text of each action.

The numbering is fixed (it does not depend on hidden cards or tiles), so an action chosen on a
re-sampled view means the same move on the true state:

=============  ====================================  ======================================
kind           number                                text
=============  ====================================  ======================================
pass           ``0``                                  ``pass`` (only when nothing else is legal)
take           ``TAKE + mask`` (display slots)        ``take denar:3+denar:2``
reserve        ``RESERVE + tile``                     ``reserve 23`` (a bought tile)
remove         ``REMOVE + tile``                      ``remove 23`` (Alhambra to reserve)
give           ``GIVE + tile``                        ``give 23`` (to the collector, 2 players)
swap           ``SWAP + reserve * 64 + built``        ``swap 23 for 41`` (23 from the reserve)
place          ``PLACE + tile * 4096 + cell``         ``place 23 at 1,-2``
buy            ``BUY + slot * 4**9 + payment code``   ``buy florin pay florin:4+florin:5``
=============  ====================================  ======================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from engines.alhambra.building import STRIDE, cell_of, in_bounds, xy_of
from engines.alhambra.money import (
    CURRENCIES,
    CURRENCY_INDEX,
    PAYMENT_CODES,
    card,
    card_name,
    parse_card,
    payment_code,
    payment_values,
)

PASS: Final = 0
TAKE: Final = 0  # masks 1..15
RESERVE: Final = 16
REMOVE: Final = 80
GIVE: Final = 144
SWAP: Final = 208
TILE_SPAN: Final = 64
PLACE: Final = SWAP + TILE_SPAN * TILE_SPAN
CELLS: Final = STRIDE * STRIDE
BUY: Final = PLACE + TILE_SPAN * CELLS
NUM_ACTIONS: Final = BUY + len(CURRENCIES) * PAYMENT_CODES

NOTATION_HELP: Final = (
    "'take denar:3+dirham:2', 'buy florin pay florin:4+florin:5', 'place 23 at 1,-2', "
    "'reserve 23', 'remove 23', 'swap 23 for 41', 'give 23' or 'pass'"
)


def take(mask: int) -> int:
    return TAKE + mask


def reserve(tile: int) -> int:
    return RESERVE + tile


def remove(tile: int) -> int:
    return REMOVE + tile


def give(tile: int) -> int:
    return GIVE + tile


def swap(from_reserve: int, built: int) -> int:
    return SWAP + from_reserve * TILE_SPAN + built


def place(tile: int, cell: int) -> int:
    return PLACE + tile * CELLS + cell


def places(tile: int, cells: list[int]) -> list[int]:
    """``place(tile, cell)`` for each of ``cells``, in their order."""
    base = PLACE + tile * CELLS
    return [base + cell for cell in cells]


def buy(slot: int, values: list[int] | tuple[int, ...]) -> int:
    return BUY + slot * PAYMENT_CODES + payment_code(values)


@dataclass(frozen=True)
class Decoded:
    """An action number taken apart; unused fields are 0 or empty."""

    kind: str
    mask: int = 0
    tile: int = 0
    other: int = 0
    cell: int = 0
    slot: int = 0
    values: tuple[int, ...] = ()


_DECODED: dict[int, Decoded] = {}
DECODED_LIMIT: Final = 500_000
"""Most decoded actions remembered (every playout decodes the same few thousand)."""


def decode(action: int) -> Decoded:
    """The parts of an action number; ``ValueError`` outside the numbering."""
    found = _DECODED.get(action)
    if found is None:
        found = _decode(action)
        if len(_DECODED) < DECODED_LIMIT:
            _DECODED[action] = found
    return found


def _decode(action: int) -> Decoded:
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action {action} is outside 0..{NUM_ACTIONS - 1}")
    if action == PASS:
        return Decoded("pass")
    if action < RESERVE:
        return Decoded("take", mask=action - TAKE)
    if action < REMOVE:
        return Decoded("reserve", tile=action - RESERVE)
    if action < GIVE:
        return Decoded("remove", tile=action - REMOVE)
    if action < SWAP:
        return Decoded("give", tile=action - GIVE)
    if action < PLACE:
        a, b = divmod(action - SWAP, TILE_SPAN)
        return Decoded("swap", tile=a, other=b)
    if action < BUY:
        tile, cell = divmod(action - PLACE, CELLS)
        return Decoded("place", tile=tile, cell=cell)
    slot, code = divmod(action - BUY, PAYMENT_CODES)
    return Decoded("buy", slot=slot, values=tuple(payment_values(code)))


def to_text(action: int, display: list[int]) -> str:
    """Canonical text; ``display`` (the money display, sorted) names the cards of a take."""
    d = decode(action)
    if d.kind == "pass":
        return "pass"
    if d.kind == "take":
        picked = [display[i] for i in range(len(display)) if d.mask >> i & 1]
        if len(picked) != d.mask.bit_count():
            raise ValueError(f"take mask {d.mask} names cards the display does not have")
        return "take " + "+".join(card_name(c) for c in picked)
    if d.kind in ("reserve", "remove", "give"):
        return f"{d.kind} {d.tile}"
    if d.kind == "swap":
        return f"swap {d.tile} for {d.other}"
    if d.kind == "place":
        x, y = xy_of(d.cell)
        return f"place {d.tile} at {x},{y}"
    cur = CURRENCIES[d.slot]
    paid = "+".join(card_name(card(d.slot, v)) for v in d.values)
    return f"buy {cur} pay {paid}"


_TILE = r"(\d{1,2})"
_PATTERNS: Final = {
    "pass": re.compile(r"pass"),
    "take": re.compile(r"take\s+(\S+)"),
    "tile": re.compile(r"(reserve|remove|give)\s+" + _TILE),
    "swap": re.compile(r"swap\s+" + _TILE + r"\s+for\s+" + _TILE),
    "place": re.compile(r"place\s+" + _TILE + r"\s+at\s+\(?\s*(-?\d+)\s*,\s*(-?\d+)\s*\)?"),
    "buy": re.compile(r"buy\s+([a-z]+)\s+pay\s+(\S+)"),
}


@dataclass(frozen=True)
class Parsed:
    """Text read as an action: either a number, or (for take) the cards named."""

    action: int | None
    cards: tuple[int, ...] = ()


def _cards(text: str) -> tuple[int, ...] | None:
    out = []
    for part in text.split("+"):
        c = parse_card(part)
        if c is None:
            return None
        out.append(c)
    return tuple(sorted(out))


def parse(text: str) -> Parsed | None:
    """Read canonical text (case and extra spaces ignored); None when it is not an action.

    A take names cards, not display slots: the caller finds the slots (``Parsed.cards``).
    """
    t = " ".join(text.strip().lower().split())
    if (m := _PATTERNS["pass"].fullmatch(t)) is not None:
        return Parsed(PASS)
    if (m := _PATTERNS["take"].fullmatch(t)) is not None:
        cards = _cards(m.group(1))
        return None if cards is None or len(cards) > 4 else Parsed(None, cards)
    if (m := _PATTERNS["tile"].fullmatch(t)) is not None:
        tile = int(m.group(2))
        base = {"reserve": RESERVE, "remove": REMOVE, "give": GIVE}[m.group(1)]
        return Parsed(base + tile) if 1 <= tile < TILE_SPAN else None
    if (m := _PATTERNS["swap"].fullmatch(t)) is not None:
        a, b = int(m.group(1)), int(m.group(2))
        return Parsed(swap(a, b)) if 1 <= a < TILE_SPAN and 1 <= b < TILE_SPAN else None
    if (m := _PATTERNS["place"].fullmatch(t)) is not None:
        tile, x, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if not 1 <= tile < TILE_SPAN or not in_bounds(x, y):
            return None
        return Parsed(place(tile, cell_of(x, y)))
    if (m := _PATTERNS["buy"].fullmatch(t)) is not None:
        slot = CURRENCY_INDEX.get(m.group(1))
        cards = _cards(m.group(2))
        if slot is None or cards is None or any(c // 10 != slot for c in cards):
            return None
        values = [c % 10 for c in cards]
        if any(values.count(v) > 3 for v in values):
            return None
        return Parsed(buy(slot, values))
    return None
