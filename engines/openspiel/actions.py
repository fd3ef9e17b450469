"""OpenSpiel action ids of our games: every id below ``num_distinct_actions()``.

Where a game's own action codes are already a bounded range (Les Alvéoles' grooves, Abalone's
``kind * 128 + cell``, Alhambra's numbering) the id is the code. Alquerque's codes are paths of
landing points in base 26 (up to 26^13), so its ids come from a table: every path a capture
could take on the board (each jump over a point next along a line, never over a point jumped
or stood on before, at most 12 jumps since a side has 12 pieces), with the simple moves,
sorted by code; an id is a code's place in it.
"""

from __future__ import annotations

from functools import cache
from typing import Protocol

import numpy as np

from engines.alquerque.board import BASE, JUMPS, NEIGHBOURS, POINTS
from engines.core import Action


class Codec(Protocol):
    """Ids of one game's actions: ``size`` of them, and the two directions."""

    size: int

    def to_id(self, code: Action) -> int: ...

    def to_code(self, action_id: int) -> Action: ...


class Identity:
    """Ids that are the game's own codes, all below ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size

    def to_id(self, code: Action) -> int:
        return code

    def to_code(self, action_id: int) -> Action:
        return action_id


class Bounded:
    """Ids that are the game's own codes, for a game with no table of its own: every code must
    lie below ``size``, the game's declared ``num_distinct_actions``, as OpenSpiel requires of
    an action id. A code outside is refused naming the game, rather than handed to OpenSpiel."""

    def __init__(self, game: str, size: int) -> None:
        self.game = game
        self.size = size

    def to_id(self, code: Action) -> int:
        if not 0 <= code < self.size:
            raise ValueError(
                f"{self.game} plays action code {code}, and the OpenSpiel bridge uses a game's "
                f"codes as action ids, which must lie in 0..{self.size - 1} (its GameType's "
                "num_distinct_actions)"
            )
        return code

    def to_code(self, action_id: int) -> Action:
        if not 0 <= action_id < self.size:
            raise ValueError(f"action id {action_id} is outside 0..{self.size - 1}")
        return action_id


class Table:
    """Ids that are places in a sorted array of every code the game could use."""

    def __init__(self, codes: np.ndarray) -> None:
        self.codes = codes
        self.size = len(codes)

    def to_id(self, code: Action) -> int:
        place = int(np.searchsorted(self.codes, code))
        if place >= self.size or int(self.codes[place]) != code:
            raise ValueError(f"action code {code} is in no table entry")
        return place

    def to_code(self, action_id: int) -> Action:
        if not 0 <= action_id < self.size:
            raise ValueError(f"action id {action_id} is outside 0..{self.size - 1}")
        return int(self.codes[action_id])


MAX_JUMPS = 12
"""A side has 12 pieces, so a capture jumps at most 12 times."""


def alquerque_codes() -> np.ndarray:
    """Every simple move and every capture path on the Alquerque board, as sorted codes.

    A capture jumps enemy pieces, each at most once (it leaves the board at once), and lands
    on empty points; enemy pieces do not move during a move, so it never jumps the point it
    started from or one it landed on before. Paths are grown a jump at a time over whole
    arrays (one row per path so far: its code, where it stands, the points it jumped, the
    points it stood on).
    """
    slots = max(len(j) for j in JUMPS)
    over = np.zeros((POINTS, slots), dtype=np.int64)
    land = np.full((POINTS, slots), -1, dtype=np.int64)
    for p in range(POINTS):
        for j, (bit, _land, q) in enumerate(JUMPS[p]):
            over[p, j] = bit
            land[p, j] = q
    found = [
        np.array([(p + 1) * BASE + q + 1 for p in range(POINTS) for q in NEIGHBOURS[p]], np.int64)
    ]
    code = np.arange(1, POINTS + 1, dtype=np.int64)
    point = np.arange(POINTS, dtype=np.int64)
    jumped = np.zeros(POINTS, dtype=np.int64)
    stood = np.left_shift(1, point)
    for _ in range(MAX_JUMPS):
        grown: list[list[np.ndarray]] = [[], [], [], []]
        for j in range(slots):
            bit = over[point, j]
            ok = (bit != 0) & ((jumped | stood) & bit == 0)
            target = land[point[ok], j]
            grown[0].append(code[ok] * BASE + target + 1)
            grown[1].append(target)
            grown[2].append(jumped[ok] | bit[ok])
            grown[3].append(stood[ok] | np.left_shift(1, target))
        code, point, jumped, stood = (np.concatenate(g) for g in grown)
        found.append(code)
    return np.sort(np.concatenate(found))


@cache
def alquerque_table() -> Table:
    """Built on first use."""
    return Table(alquerque_codes())
