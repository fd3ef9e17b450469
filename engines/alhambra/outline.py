"""What listing the legal moves needs to know about one Alhambra, kept up to date move by move.

A tile placed, removed or exchanged changes these facts only on its own cell and the eight
around it, so each move refreshes those nine cells instead of surveying the whole Alhambra
(:func:`engines.alhambra.building.survey` is the from-scratch version the tests compare with).
"""

from __future__ import annotations

from typing import Final, Self, TypeAlias

from engines.alhambra import building
from engines.alhambra.building import (
    LIMIT,
    OFFSET,
    ORIGIN,
    RING,
    RING_SPLITS,
    SIDE_STEPS,
    STRIDE,
    Cell,
    Grid,
)
from engines.alhambra.tiles import WALLS

FrontEntry: TypeAlias = tuple[int, int, bool]
"""Of an empty frontier cell: its sides with a neighbour, the walls a tile placed there must
have on exactly those sides, and whether building it may cut an empty cell off."""

_LOW: Final = OFFSET - LIMIT
_HIGH: Final = OFFSET + LIMIT
_CROSS: Final = (0, STRIDE, 1, -STRIDE, -1)
_CORNERS: Final = (STRIDE + 1, 1 - STRIDE, -STRIDE - 1, STRIDE - 1)
_RING_BITS: Final = tuple((offset, 1 << i) for i, offset in enumerate(RING))
_COUNT: Final = tuple(bin(mask).count("1") for mask in range(16))
_ALL_SIDES: Final = 15


class Outline:
    """The frontier, each tile's touching sides and the graph of open sides of one Alhambra.

    ``front[cell]`` for each empty in-bounds cell sharing a side with a tile (a
    :data:`FrontEntry`); ``sides[cell]`` for each tile: the sides facing another tile (an
    exchange must keep its walls there); ``links[cell]``: those of them that are open (edges
    of the graph that reachability is about); ``ends``: the number of edge ends, twice the
    number of edges.
    """

    __slots__ = ("ends", "front", "links", "sides")

    def __init__(
        self,
        front: dict[Cell, FrontEntry],
        sides: dict[Cell, int],
        links: dict[Cell, int],
        ends: int,
    ) -> None:
        self.front = front
        self.sides = sides
        self.links = links
        self.ends = ends

    @classmethod
    def of(cls, grid: Grid) -> Self:
        """The outline of ``grid`` worked out from nothing."""
        outline = cls({}, {}, {}, 0)
        for cell in grid:
            outline.changed(grid, cell)
        return outline

    def copy(self) -> Self:
        # Entries are immutable tuples and ints: shallow copies share nothing mutable.
        return type(self)(dict(self.front), dict(self.sides), dict(self.links), self.ends)

    def removable(self, grid: Grid) -> set[Cell]:
        """``building.removable(grid)``, without its search when the open sides make a tree.

        Every tile is reachable, so the graph is connected; with one edge fewer than tiles it
        is a tree, whose only vertices that are no cut vertex are its leaves.
        """
        if self.ends != 2 * (len(grid) - 1):
            return building.removable(grid)
        links = self.links
        return {
            cell
            for cell, sides in self.sides.items()
            if sides != _ALL_SIDES and _COUNT[links[cell]] <= 1 and cell != ORIGIN
        }

    def changed(self, grid: Grid, cell: Cell) -> None:
        """Bring the outline up to date after ``cell`` of ``grid`` was built, emptied or got
        another tile."""
        front = self.front
        sides = self.sides
        links = self.links
        for offset in _CROSS:
            here = cell + offset
            touching = needed = 0
            for side, step, opposite in SIDE_STEPS:
                other = grid.get(here + step)
                if other is not None:
                    touching |= side
                    if WALLS[other] & opposite:
                        needed |= side
            tile = grid.get(here)
            if tile is not None:
                sides[here] = touching
                linked = touching & ~WALLS[tile]
                self.ends += _COUNT[linked] - _COUNT[links.get(here, 0)]
                links[here] = linked
                front.pop(here, None)
                continue
            sides.pop(here, None)
            self.ends -= _COUNT[links.pop(here, 0)]
            if touching and _LOW <= here // STRIDE <= _HIGH and _LOW <= here % STRIDE <= _HIGH:
                front[here] = (touching, needed, _split(grid, here))
            else:
                front.pop(here, None)
        # A cell touching ``cell`` only at a corner keeps its sides; its 3 x 3 square changed.
        for offset in _CORNERS:
            here = cell + offset
            entry = front.get(here)
            if entry is not None:
                front[here] = (entry[0], entry[1], _split(grid, here))


def _split(grid: Grid, cell: Cell) -> bool:
    """``building.local_split``."""
    built = 0
    for offset, bit in _RING_BITS:
        if cell + offset in grid:
            built |= bit
    return RING_SPLITS[built]
