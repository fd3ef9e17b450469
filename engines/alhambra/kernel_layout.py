"""Where each part of an Alhambra position sits in the kernel's flat ``int64`` array.

The table's order is kept as in :mod:`engines.alhambra.table`: the bag, the money deck and the
spent cards with their top at the end, the display sorted. A money card is
``currency * 10 + value`` and the scoring cards are ``-1`` and ``-2``, as in
:mod:`engines.alhambra.money`. Hands are counts per card. The Alhambras come last, one
``CELLS``-cell window per seat, so a two-player position is less than half a six-player one.
"""

from __future__ import annotations

from engines.alhambra.kernel_build import CELLS, TILE_IDS
from engines.alhambra.tiles import NUM_TILES, TYPES

MAX_SEATS = 6
MONEY = 108
NUM_TYPES = len(TYPES)
ACTION, PLACE, FINAL, OVER = 0, 1, 2, 3
"""Phases, as in the rules."""
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
"""For scoring cards 1 and 2: the deck index range of the pile it was shuffled into, as
(lo, hi); -1 once drawn."""
MARKET = RANGES + 4
BAG = MARKET + 4
DECK = BAG + NUM_TILES
DISCARD = DECK + MONEY + 2
DISPLAY = DISCARD + MONEY
PENDING = DISPLAY + 4
"""Tiles bought this turn (in the order bought), or the end-of-game gifts being placed."""
FINAL_SEAT = PENDING + 8
"""End-of-game gifts not yet handed over: the seat (-1: none) and the tile, four slots."""
FINAL_TILE = FINAL_SEAT + 4
COLLECTOR_TYPES = FINAL_TILE + 4
COLLECTOR_POINTS = COLLECTOR_TYPES + NUM_TYPES
SEATS = COLLECTOR_POINTS + 3

# Per seat, at SEATS + seat * SEAT_SIZE:
HAND = 0
"""40 counts, by card (``currency * 10 + value``)."""
WHERE = HAND + 40
"""The cell of each tile id in this seat's Alhambra (-1: not built); 0 is the fountain."""
RESERVED = WHERE + TILE_IDS
"""1 for each tile id in this seat's reserve."""
TYPE_COUNTS = RESERVED + TILE_IDS
POINTS = TYPE_COUNTS + NUM_TYPES
"""Three rounds of (majority points, wall points)."""
EXACT = POINTS + 6
BUILT = EXACT + 1
"""Tiles in the Alhambra, the fountain included."""
SEAT_SIZE = BUILT + 1

GRID = SEATS + MAX_SEATS * SEAT_SIZE
"""Seat ``s``'s Alhambra: ``CELLS`` cells at ``GRID + s * CELLS``, a tile id or -1."""


def state_size(players: int) -> int:
    return GRID + players * CELLS


def seat_base(seat: int) -> int:
    return SEATS + seat * SEAT_SIZE
