"""What a seat knows, and a copy of the state re-drawn consistently with it (decision H1,
docs/rules/alhambra.md).

A seat sees the market, the display, every hand, Alhambra and reserve, the collector's tiles
and the spent cards; it does not see the order of the tile bag or of the money deck. The deck
was built as five piles with scoring card 1 shuffled into pile 2 and scoring card 2 into pile 4:
a scoring card not yet drawn is equally likely at any position of what is left of its pile, and
the unseen money cards are equally likely in any order around it.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engines.alhambra.table import AlhambraTable


def redraw(view: AlhambraTable, rng: random.Random) -> None:
    """Re-draw ``view``'s bag and deck from ``rng`` (``view`` is a copy of the true position),
    and give it a fresh generator for its own future chance (the true generator's state is
    hidden information too)."""
    view.rng = random.Random(rng.getrandbits(64))
    # Sorted before shuffling: the copy depends on what the seat knows and ``rng`` alone, never
    # on the true order.
    view.bag.sort()
    rng.shuffle(view.bag)
    deck = view.deck
    size = len(deck)
    scoring = sorted(c for c in deck if c < 0)
    money = sorted(c for c in deck if c >= 0)
    rng.shuffle(money)
    spots: dict[int, int] = {}
    ranges = {}
    for c in scoring:
        lo, hi = view.ranges[c]
        hi = min(hi, size)
        spots[rng.randrange(lo, hi)] = c
        ranges[c] = (lo, hi)
    it = iter(money)
    view.deck = [spots[i] if i in spots else next(it) for i in range(size)]
    view.ranges = ranges
