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
    ORIGIN,
    RING,
    SIDE_STEPS,
    STRIDE,
    Cell,
    Grid,
    cut_vertices,
)
from engines.alhambra.tiles import WALLS

FrontEntry: TypeAlias = tuple[int, int, int]
"""Of an empty frontier cell: its sides with a neighbour, the walls a tile placed there must
have on exactly those sides, and which of the eight cells around it are built (bit i for
``RING[i]``; ``RING_SPLITS`` of it says whether building the cell may cut an empty cell off)."""

_LOW: Final = OFFSET - LIMIT
_HIGH: Final = OFFSET + LIMIT
_CROSS: Final = (0, STRIDE, 1, -STRIDE, -1)
_CORNERS: Final = (STRIDE + 1, 1 - STRIDE, -STRIDE - 1, STRIDE - 1)
_RING_BITS: Final = tuple((offset, 1 << i) for i, offset in enumerate(RING))
_SEEN_FROM: Final = {offset: 1 << (i + 4) % 8 for i, offset in enumerate(RING)}
"""For a cell at ``offset`` from a changed cell: the bit of its ring mask that is the change."""
_SIDE_RING: Final = tuple(
    (side, step, opposite, _SEEN_FROM[step]) for side, step, opposite in SIDE_STEPS
)
_CORNER_RING: Final = tuple((offset, _SEEN_FROM[offset]) for offset in _CORNERS)
_LINK_STEPS: Final = tuple(
    tuple(step for side, step, _ in SIDE_STEPS if mask & side) for mask in range(16)
)
"""Cell offsets across the sides in each 4-bit side mask."""
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
        front: dict[Cell, FrontEntry] = {}
        sides: dict[Cell, int] = {}
        links: dict[Cell, int] = {}
        for cell, tile in grid.items():
            walls = WALLS[tile]
            touching = 0
            for side, step, opposite in SIDE_STEPS:
                here = cell + step
                if here in grid:
                    touching |= side
                elif _inside(here):
                    entry = front.get(here, (0, 0, 0))
                    wall = opposite if walls & side else 0
                    front[here] = (entry[0] | opposite, entry[1] | wall, _ring(grid, here))
            sides[cell] = touching
            links[cell] = touching & ~walls
        return cls(front, sides, links, sum(_COUNT[linked] for linked in links.values()))

    def copy(self) -> Self:
        # Entries are immutable tuples and ints: shallow copies share nothing mutable.
        return type(self)(dict(self.front), dict(self.sides), dict(self.links), self.ends)

    def removable(self, grid: Grid) -> set[Cell]:
        """``building.removable(grid)``: tiles with an empty side-neighbour that are no cut
        vertex of the graph of open sides.

        Every tile is reachable, so the graph is connected; with one edge fewer than tiles it
        is a tree, whose only vertices that are no cut vertex are its leaves. Otherwise
        Tarjan's search finds the cut vertices.
        """
        links = self.links
        if self.ends == 2 * (len(grid) - 1):
            return {
                cell
                for cell, sides in self.sides.items()
                if sides != _ALL_SIDES and _COUNT[links[cell]] <= 1 and cell != ORIGIN
            }
        cut = cut_vertices(lambda cell: [cell + s for s in _LINK_STEPS[links[cell]]])
        return {
            cell
            for cell, sides in self.sides.items()
            if sides != _ALL_SIDES and cell not in cut and cell != ORIGIN
        }

    def changed(self, grid: Grid, cell: Cell) -> None:
        """Bring the outline up to date after ``cell`` of ``grid`` was built, emptied or got
        another tile."""
        front = self.front
        sides = self.sides
        links = self.links
        tile = grid.get(cell)
        walls = 0 if tile is None else WALLS[tile]
        touching = needed = 0
        for side, step, opposite in SIDE_STEPS:
            other = grid.get(cell + step)
            if other is not None:
                touching |= side
                if WALLS[other] & opposite:
                    needed |= side
        ends = self.ends - _COUNT[links.pop(cell, 0)]
        if tile is not None:
            sides[cell] = touching
            linked = touching & ~walls
            links[cell] = linked
            ends += _COUNT[linked]
            front.pop(cell, None)
        else:
            sides.pop(cell, None)
            if touching and _inside(cell):
                front[cell] = (touching, needed, _ring(grid, cell))
            else:
                front.pop(cell, None)
        # A side-neighbour changes only on its side facing ``cell``.
        for side, step, opposite, bit in _SIDE_RING:
            here = cell + step
            other = grid.get(here)
            if other is not None:
                faced = sides[here] & ~opposite if tile is None else sides[here] | opposite
                sides[here] = faced
                old = links[here]
                linked = faced & ~WALLS[other]
                if linked != old:
                    ends += _COUNT[linked] - _COUNT[old]
                    links[here] = linked
                continue
            entry = front.get(here)
            if tile is None:
                if entry is not None:
                    faced = entry[0] & ~opposite
                    if faced:
                        front[here] = (faced, entry[1] & ~opposite, entry[2] & ~bit)
                    else:
                        del front[here]
                continue
            if entry is None:
                if _inside(here):
                    front[here] = (opposite, opposite if walls & side else 0, _ring(grid, here))
                continue
            wall = opposite if walls & side else 0
            front[here] = (entry[0] | opposite, entry[1] & ~opposite | wall, entry[2] | bit)
        self.ends = ends
        # A cell touching ``cell`` only at a corner keeps its sides; its 3 x 3 square changed.
        for offset, bit in _CORNER_RING:
            here = cell + offset
            entry = front.get(here)
            if entry is not None:
                ring = entry[2] & ~bit if tile is None else entry[2] | bit
                front[here] = (entry[0], entry[1], ring)


def _inside(cell: Cell) -> bool:
    return _LOW <= cell // STRIDE <= _HIGH and _LOW <= cell % STRIDE <= _HIGH


def _ring(grid: Grid, cell: Cell) -> int:
    """Which of the eight cells around ``cell`` are built (the pattern of
    ``building.local_split``)."""
    built = 0
    for offset, bit in _RING_BITS:
        if cell + offset in grid:
            built |= bit
    return built
