"""Where each part of an Alhambra position sits in the kernel's flat ``int64`` array, and the
sizes the kernel counts by, each taken from the rules' own declaration.

The table's order is kept as in :mod:`engines.alhambra.table`: the bag, the money deck and the
spent cards with their top at the end, the display sorted. A money card is
``money.card(currency, value)`` (``currency * CARD_SPAN + value``) and the scoring cards are
``-1`` and ``-2``, as in :mod:`engines.alhambra.money`. Hands are counts per card. Each seat
keeps its Alhambra's outline (:mod:`kernel_build`): a bitmap of built cells and one of each
wall side, one word per row, updated by every placement and removal. The Alhambras' cells
come last, one ``CELLS``-cell window per seat, so a two-player position is less than half a
six-player one.
"""

from __future__ import annotations

from engines.alhambra.building import STRIDE
from engines.alhambra.flow import (
    COLLECTOR_AFTER_FIRST,
    COLLECTOR_SECOND_SHARE,
    DISPLAY_SIZE,
    MARKET_SLOTS,
)
from engines.alhambra.kernel_build import CELLS, OUTLINE_SIZE, TILE_IDS
from engines.alhambra.money import CODE_BASE, COPIES, CURRENCIES, SCORING_CARDS, VALUES, card
from engines.alhambra.rules import Alhambra
from engines.alhambra.scoring import ROUNDS
from engines.alhambra.table import ACTION, FINAL, OVER, PLACE
from engines.alhambra.tiles import NUM_TILES, TYPES

__all__ = [  # the rules' names the kernel reads from here, besides the layout's own
    "ACTION", "CELLS", "COLLECTOR_AFTER_FIRST", "COLLECTOR_SECOND_SHARE", "DISPLAY_SIZE",
    "FINAL", "MARKET_SLOTS", "OVER", "PLACE", "ROUNDS", "TILE_IDS",
]  # fmt: skip

MAX_PLAYERS = Alhambra.game_type.max_players
NUM_TYPES = len(TYPES)
CURRENCY_COUNT = len(CURRENCIES)
TOP_VALUE = VALUES[-1]
"""Card values run 1..TOP_VALUE."""
CARD_SPAN = card(1, 0)
"""A card is ``currency * CARD_SPAN + value``: a hand's counts by card hold ``CARD_SPAN``
entries per currency, entry 0 unused."""
CURRENCY_CARDS = len(VALUES) * COPIES
"""Money cards of one currency: the most a payment can take."""
MONEY = CURRENCY_COUNT * CURRENCY_CARDS
SCORING_COUNT = len(SCORING_CARDS)
PAY_BITS = CODE_BASE.bit_length() - 1
"""A payment code holds how many cards of value ``v`` are paid in bits ``PAY_BITS * (v - 1)``
upward (base ``CODE_BASE`` digits)."""
PAY_DIGIT = CODE_BASE - 1
"""The mask of one digit of a payment code."""
assert CODE_BASE == 1 << PAY_BITS  # digits as bit fields
FINAL_SLOTS = MARKET_SLOTS
"""End-of-game gifts: one per market slot."""
LAST_ROUND = ROUNDS - 1
"""The end's scoring; rounds 0 and 1 follow the scoring cards."""
HOLDERS = MAX_PLAYERS + 1
"""Rows of a majority count: every seat and the neutral collector."""
SKIP, BEFORE_FINAL = 0, 1
"""``missed_scoring``: a scoring card still in the deck at the end is skipped, or scored."""

PLAYERS = 0
COLLECTOR = 1
"""1 in the two-player game (the neutral collector takes part in the majorities)."""
MISSED = 2
PHASE = 3
PLAYER = 4
START = 5
TURNS = 6
SCORINGS = 7
RNG = 8
"""The generator of the position's own chance (reshuffling the spent cards), as int64 bits."""
BAG_N = 9
DECK_N = 10
DISCARD_N = 11
DISPLAY_N = 12
PENDING_N = 13
COLLECTOR_N = 14
RANGES = 15
"""For each scoring card: the deck index range of the pile it was shuffled into, as
(lo, hi); -1 once drawn."""
MARKET = RANGES + 2 * SCORING_COUNT
BAG = MARKET + MARKET_SLOTS
DECK = BAG + NUM_TILES
DISCARD = DECK + MONEY + SCORING_COUNT
DISPLAY = DISCARD + MONEY
PENDING = DISPLAY + DISPLAY_SIZE
"""Tiles bought this turn (in the order bought), or the end-of-game gifts being placed."""
PENDING_SIZE = 2 * MARKET_SLOTS
"""More than a turn can buy: an exact purchase empties a slot until the turn ends."""
FINAL_SEAT = PENDING + PENDING_SIZE
"""End-of-game gifts not yet handed over: the seat (-1: none) and the tile, per slot."""
FINAL_TILE = FINAL_SEAT + FINAL_SLOTS
COLLECTOR_TYPES = FINAL_TILE + FINAL_SLOTS
COLLECTOR_POINTS = COLLECTOR_TYPES + NUM_TYPES
SEATS = COLLECTOR_POINTS + ROUNDS

# Per seat, at SEATS + seat * SEAT_SIZE:
HAND = 0
"""Counts by card (``currency * CARD_SPAN + value``)."""
WHERE = HAND + CURRENCY_COUNT * CARD_SPAN
"""The cell of each tile id in this seat's Alhambra (-1: not built); 0 is the fountain."""
TILES = WHERE + TILE_IDS
"""The tile ids built in this seat's Alhambra, as bits of one word."""
RESERVE = TILES + 1
"""The tile ids in this seat's reserve, as bits of one word."""
TYPE_COUNTS = RESERVE + 1
POINTS = TYPE_COUNTS + NUM_TYPES
"""Each round's (majority points, wall points)."""
EXACT = POINTS + 2 * ROUNDS
BUILT = EXACT + 1
"""Tiles in the Alhambra, the fountain included."""
OUTLINE = BUILT + 1
"""The Alhambra's outline (``OUTLINE_SIZE`` words, :mod:`kernel_build`)."""
SEAT_SIZE = OUTLINE + OUTLINE_SIZE

GRID = SEATS + MAX_PLAYERS * SEAT_SIZE
"""Seat ``s``'s Alhambra: ``CELLS`` cells at ``GRID + s * CELLS``, a tile id or -1."""
assert STRIDE * STRIDE == CELLS


def state_size(players: int) -> int:
    return GRID + players * CELLS


def seat_base(seat: int) -> int:
    return SEATS + seat * SEAT_SIZE
