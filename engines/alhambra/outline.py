"""What listing the legal moves needs to know about one Alhambra, kept up to date move by move.

A tile placed, removed or exchanged changes these facts only on its own cell and the eight
around it, so each move refreshes those nine cells instead of surveying the whole Alhambra
(:func:`engines.alhambra.building.survey` is the from-scratch version the tests compare with).
"""

from __future__ import annotations

from typing import Final, Self, TypeAlias

from engines.alhambra.building import (
    LIMIT,
    OFFSET,
    RING,
    SIDE_STEPS,
    STRIDE,
    Cell,
    Grid,
    local_split,
)
from engines.alhambra.tiles import WALLS

FrontEntry: TypeAlias = tuple[int, int, bool]
"""Of an empty frontier cell: its sides with a neighbour, the walls a tile placed there must
have on exactly those sides, and whether building it may cut an empty cell off."""

_LOW: Final = OFFSET - LIMIT
_HIGH: Final = OFFSET + LIMIT
_AROUND: Final = (0, *RING)


class Outline:
    """The frontier and each tile's touching sides of one Alhambra.

    ``front[cell]`` for each empty in-bounds cell sharing a side with a tile (a
    :data:`FrontEntry`); ``sides[cell]`` for each tile: the sides facing another tile (an
    exchange must keep its walls there).
    """

    __slots__ = ("front", "sides")

    def __init__(self, front: dict[Cell, FrontEntry], sides: dict[Cell, int]) -> None:
        self.front = front
        self.sides = sides

    @classmethod
    def of(cls, grid: Grid) -> Self:
        """The outline of ``grid`` worked out from nothing."""
        outline = cls({}, {})
        for cell in grid:
            outline.changed(grid, cell)
        return outline

    def copy(self) -> Self:
        # Entries are immutable tuples and ints: shallow copies share nothing mutable.
        return type(self)(dict(self.front), dict(self.sides))

    def changed(self, grid: Grid, cell: Cell) -> None:
        """Bring the outline up to date after ``cell`` of ``grid`` was built, emptied or got
        another tile."""
        front = self.front
        sides = self.sides
        for offset in _AROUND:
            here = cell + offset
            touching = needed = 0
            for side, step, opposite in SIDE_STEPS:
                other = grid.get(here + step)
                if other is not None:
                    touching |= side
                    if WALLS[other] & opposite:
                        needed |= side
            if here in grid:
                sides[here] = touching
                front.pop(here, None)
                continue
            sides.pop(here, None)
            if touching and _LOW <= here // STRIDE <= _HIGH and _LOW <= here % STRIDE <= _HIGH:
                front[here] = (touching, needed, local_split(grid, here))
            else:
                front.pop(here, None)
