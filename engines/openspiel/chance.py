"""A game's own random draws as OpenSpiel chance nodes.

Alhambra shuffles with ``random.Random`` (its bag, its money deck, the scoring cards' places,
the spent cards when the deck runs out). Every one of those calls comes down to
``Random._randbelow(n)``: a uniform whole number below ``n``. A :class:`ScriptedRandom` answers
those calls from a list of outcomes and raises :class:`NeedChance` when the list runs out, so a
step of the game (the deal, or a move that empties the deck) is run again from its start with
one more outcome each time, until it needs none: each outcome is one chance node with ``n``
equally likely outcomes, exactly the distribution Python's shuffle draws from.
"""

from __future__ import annotations

import random
from collections.abc import Sequence


class NeedChance(Exception):  # noqa: N818 - a request, not a failure
    """A step of the game needs one more uniform draw below ``outcomes``."""

    def __init__(self, outcomes: int) -> None:
        super().__init__(f"a chance draw below {outcomes}")
        self.outcomes = outcomes


class ScriptedRandom(random.Random):
    """A generator whose draws below ``n`` are the given outcomes, in order."""

    def __init__(self, outcomes: Sequence[int] = ()) -> None:
        # No seeding: the Mersenne Twister underneath is never drawn from.
        self.gauss_next = None
        self.outcomes = list(outcomes)
        self.used = 0

    def _randbelow(self, n: int) -> int:
        if self.used == len(self.outcomes):
            raise NeedChance(n)
        value = self.outcomes[self.used]
        self.used += 1
        if not 0 <= value < n:
            raise ValueError(f"chance outcome {value} is outside 0..{n - 1}")
        return value

    def random(self) -> float:
        raise TypeError("a scripted generator gives whole numbers only")

    def __reduce__(self) -> tuple[type[ScriptedRandom], tuple[list[int]]]:
        # The draws still to come are none: a copy answers the used ones again if asked.
        return (ScriptedRandom, (self.outcomes[self.used :],))
