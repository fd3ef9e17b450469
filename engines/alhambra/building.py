"""The building rules and the longest wall, on one player's Alhambra.

An Alhambra is a dict ``{cell: tile_id}`` with the fountain (tile 0) at the origin. A cell is an
int ``(y + OFFSET) * STRIDE + (x + OFFSET)``; x grows east, y grows north. The rules checked on
every placement, removal and exchange:

* each tile shares at least one side with the Alhambra and every touching pair of sides matches
  (wall to wall, open to open);
* every tile is reachable from the fountain crossing open sides only;
* no empty cell is cut off from the outside (4-connected through empty cells: decision H5 of
  docs/rules/alhambra.md).

Coordinates are limited to ``-LIMIT..LIMIT`` on both axes (decision H9 of that page; more than
any Alhambra of 54 tiles needs in practice) so that the cell numbering and the action encoding
stay fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final, TypeAlias

from engines.alhambra.tiles import FOUNTAIN, OPPOSITE, SIDES, WALLS, E, N, S, W

Cell: TypeAlias = int
Grid: TypeAlias = Mapping[Cell, int]

STRIDE: Final = 64
OFFSET: Final = 32
LIMIT: Final = 30
"""Largest |x| or |y| a tile may take (decision H9, docs/rules/alhambra.md)."""
ORIGIN: Final = OFFSET * STRIDE + OFFSET
STEP: Final = {N: STRIDE, E: 1, S: -STRIDE, W: -1}
"""Cell offset of the neighbour across each side."""
SIDE_STEPS: Final = tuple((side, STEP[side], OPPOSITE[side]) for side in SIDES)
RING: Final = (STRIDE, STRIDE + 1, 1, 1 - STRIDE, -STRIDE, -STRIDE - 1, -1, STRIDE - 1)
"""The eight neighbours clockwise from north (N, NE, E, SE, S, SW, W, NW)."""


def cell_of(x: int, y: int) -> Cell:
    return (y + OFFSET) * STRIDE + (x + OFFSET)


def xy_of(cell: Cell) -> tuple[int, int]:
    y, x = divmod(cell, STRIDE)
    return x - OFFSET, y - OFFSET


def in_bounds(x: int, y: int) -> bool:
    return -LIMIT <= x <= LIMIT and -LIMIT <= y <= LIMIT


def new_alhambra() -> dict[Cell, int]:
    return {ORIGIN: FOUNTAIN}


def frontier(grid: Grid) -> list[Cell]:
    """Empty in-bounds cells sharing a side with the Alhambra, ascending."""
    out: set[Cell] = set()
    for cell in grid:
        for step in (STRIDE, 1, -STRIDE, -1):
            nb = cell + step
            if nb not in grid:
                out.add(nb)
    return sorted(c for c in out if in_bounds(*xy_of(c)))


def fits(grid: Grid, cell: Cell, walls: int) -> bool:
    """Whether a tile with ``walls`` at empty ``cell`` touches the Alhambra, matches every
    neighbour's side and has an open shared side (so it is reachable from the fountain)."""
    touching = False
    open_side = False
    for side, step, opposite in SIDE_STEPS:
        other = grid.get(cell + step)
        if other is None:
            continue
        mine = walls & side
        if bool(mine) != bool(WALLS[other] & opposite):
            return False
        touching = True
        if not mine:
            open_side = True
    return touching and open_side


def _bounds(grid: Iterable[Cell]) -> tuple[int, int, int, int]:
    xs, ys = [], []
    for c in grid:
        y, x = divmod(c, STRIDE)
        xs.append(x)
        ys.append(y)
    return min(xs), max(xs), min(ys), max(ys)


def reaches_outside(grid: Grid, starts: Iterable[Cell], extra: Cell | None = None) -> bool:
    """Whether every empty cell of ``starts`` connects to the area outside the Alhambra's
    bounding box through empty cells; ``extra`` counts as built (a tile being placed). No holes
    of any size (decision H5, docs/rules/alhambra.md)."""
    cells = list(grid) if extra is None else [*grid, extra]
    x0, x1, y0, y1 = _bounds(cells)
    built = set(cells)
    escaped: set[Cell] = set()
    for start in starts:
        if start in built or start in escaped:
            continue
        seen = {start}
        todo = [start]
        out = False
        while todo and not out:
            c = todo.pop()
            y, x = divmod(c, STRIDE)
            if x <= x0 or x >= x1 or y <= y0 or y >= y1:
                out = True  # on the box's edge with an empty cell: the outside is next door
                break
            for step in (STRIDE, 1, -STRIDE, -1):
                nb = c + step
                if nb not in built and nb not in seen:
                    if nb in escaped:
                        out = True
                        break
                    seen.add(nb)
                    todo.append(nb)
        if not out:
            return False
        escaped |= seen
    return True


def _ring_splits() -> tuple[bool, ...]:
    """For each 8-bit pattern of built ring cells (bit i = ``RING[i]`` built): whether the
    empty side-neighbours fall into more than one group within the 3 × 3 square."""
    out = []
    for built in range(256):
        empty = [not built >> i & 1 for i in range(8)]
        # Side-neighbours are ring positions 0, 2, 4, 6; a corner links two when both empty.
        groups = sum(
            1 for i in (0, 2, 4, 6) if empty[i] and not (empty[(i - 1) % 8] and empty[(i - 2) % 8])
        )
        # groups == 0 with an empty side: all linked round the ring, one group.
        out.append(groups > 1)
    return tuple(out)


RING_SPLITS: Final = _ring_splits()


def local_split(grid: Grid, cell: Cell) -> bool:
    """Whether building ``cell`` separates its empty side-neighbours within its 3 × 3 square.

    When it does not, no empty cell can lose its way out (any path through ``cell`` goes round
    it locally), so the full search is needed only when this answers True.
    """
    built = 0
    for i, d in enumerate(RING):
        if cell + d in grid:
            built |= 1 << i
    return RING_SPLITS[built]


def can_place(grid: Grid, cell: Cell, walls: int) -> bool:
    """Every building rule for a tile with ``walls`` put on empty ``cell``."""
    if cell in grid or not fits(grid, cell, walls):
        return False
    if not local_split(grid, cell):
        return True
    starts = [cell + s for s in (STRIDE, 1, -STRIDE, -1) if cell + s not in grid]
    return reaches_outside(grid, starts, extra=cell)


def survey(grid: Grid) -> tuple[list[tuple[Cell, int, int]], dict[Cell, int]]:
    """One pass over the Alhambra: its frontier and the sides of each tile that touch another.

    The frontier comes as ``(cell, touching, walls_needed)``, ascending: the sides of the empty
    cell with a neighbour, and the walls a tile placed there must have on exactly those sides.
    ``touching[cell]`` of a tile: an exchange must keep its walls on those sides.
    """
    empty: dict[Cell, list[int]] = {}
    touching: dict[Cell, int] = {}
    for cell, tile in grid.items():
        walls = WALLS[tile]
        sides = 0
        for side, step, opposite in SIDE_STEPS:
            nb = cell + step
            if nb in grid:
                sides |= side
                continue
            entry = empty.get(nb)
            if entry is None:
                entry = empty[nb] = [0, 0]
            entry[0] |= opposite
            if walls & side:
                entry[1] |= opposite
        touching[cell] = sides
    lo, hi = OFFSET - LIMIT, OFFSET + LIMIT
    front = [
        (cell, entry[0], entry[1])
        for cell, entry in sorted(empty.items())
        if lo <= cell // STRIDE <= hi and lo <= cell % STRIDE <= hi
    ]
    return front, touching


def frontier_sides(grid: Grid) -> list[tuple[Cell, int, int]]:
    """The frontier of :func:`survey`."""
    return survey(grid)[0]


def placements(grid: Grid, walls: int) -> list[Cell]:
    """Cells where a tile with ``walls`` may legally go, ascending."""
    return [c for c in frontier(grid) if can_place(grid, c, walls)]


def can_remove(grid: Grid, cell: Cell) -> bool:
    """Whether the tile on ``cell`` may go to the reserve: not the fountain, the rest stays
    reachable, and the freed cell is not a hole."""
    if cell == ORIGIN or cell not in grid:
        return False
    return cell in removable(grid)


def cut_vertices(neighbours: Callable[[Cell], list[Cell]]) -> set[Cell]:
    """Cut vertices of the connected graph of tiles joined by open sides, ``neighbours(cell)``
    giving a tile's neighbours across its open sides (Tarjan's low-link, from the fountain)."""
    order: dict[Cell, int] = {ORIGIN: 0}
    low: dict[Cell, int] = {ORIGIN: 0}
    cut: set[Cell] = set()
    stack: list[tuple[Cell, list[Cell]]] = [(ORIGIN, neighbours(ORIGIN))]
    while stack:
        c, todo = stack[-1]
        if todo:
            nb = todo.pop()
            if nb not in order:
                order[nb] = low[nb] = len(order)
                stack.append((nb, neighbours(nb)))
            elif order[nb] < low[c]:
                low[c] = order[nb]
            continue
        stack.pop()
        if stack:
            parent = stack[-1][0]
            if low[c] < low[parent]:
                low[parent] = low[c]
            if low[c] >= order[parent]:
                cut.add(parent)
    return cut


def removable(grid: Grid) -> set[Cell]:
    """Cells whose tile may go to the reserve.

    The freed cell is no hole exactly when one of its side-neighbours is empty (every empty cell
    already reaches the outside). The rest stays reachable exactly when the tile is no cut
    vertex of the graph of tiles joined by open sides.
    """
    cut = cut_vertices(lambda cell: _open_neighbours(grid, cell))
    out = set()
    for c in grid:
        if c == ORIGIN or c in cut:
            continue
        if (
            c + STRIDE not in grid
            or c + 1 not in grid
            or c - STRIDE not in grid
            or c - 1 not in grid
        ):
            out.add(c)
    return out


OPEN_STEPS: Final = tuple(
    tuple(step for side, step, _ in SIDE_STEPS if not walls & side) for walls in WALLS
)
"""Cell offsets across the open sides of each tile, by tile id."""


def _open_neighbours(grid: Grid, cell: Cell) -> list[Cell]:
    return [cell + step for step in OPEN_STEPS[grid[cell]] if cell + step in grid]


def can_swap(grid: Grid, cell: Cell, walls: int) -> bool:
    """Whether a reserve tile with ``walls`` may replace the tile on ``cell``.

    It must match every neighbour, so towards the neighbours it has exactly the old tile's
    walls: the open-side graph, and so reachability, stays the same.
    """
    if cell == ORIGIN or cell not in grid:
        return False
    differ = walls ^ WALLS[grid[cell]]
    return not any(differ & side and cell + step in grid for side, step, _ in SIDE_STEPS)


# --------------------------------------------------------------------------- walls


def wall_segments(grid: Grid) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Wall sides that face no tile (a wall against a neighbour is a double wall, inside),
    each as its two corner points ``(x, y)``; corner (x, y) is the south-west one of cell (x, y).
    """
    out = []
    for c, tile in grid.items():
        walls = WALLS[tile]
        if not walls:
            continue
        x, y = xy_of(c)
        for side, step, _ in SIDE_STEPS:
            if walls & side and c + step not in grid:
                if side == N:
                    out.append(((x, y + 1), (x + 1, y + 1)))
                elif side == E:
                    out.append(((x + 1, y), (x + 1, y + 1)))
                elif side == S:
                    out.append(((x, y), (x + 1, y)))
                else:
                    out.append(((x, y), (x, y + 1)))
    return out


def longest_wall(grid: Grid) -> int:
    """Segments in the longest chain of wall segments joined end to end, no corner used twice
    (a closed ring counts all its segments: it starts and ends at one corner; decision H6,
    docs/rules/alhambra.md)."""
    segments = wall_segments(grid)
    if not segments:
        return 0
    links: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for a, b in segments:
        links.setdefault(a, []).append(b)
        links.setdefault(b, []).append(a)
    best = 0
    seen: set[tuple[int, int]] = set()
    for corner in links:
        if corner in seen:
            continue
        # One connected run of walls: a plain chain or ring is counted whole; only a run with
        # a junction (three or four segments at a corner) needs the search over paths.
        part = {corner}
        todo = [corner]
        while todo:
            for nb in links[todo.pop()]:
                if nb not in part:
                    part.add(nb)
                    todo.append(nb)
        seen |= part
        edges = sum(len(links[c]) for c in part) // 2
        if edges <= best:
            continue
        if all(len(links[c]) <= 2 for c in part):
            best = edges
            continue
        for start in part:
            best = max(best, _longest_from(links, start))
            if best == edges:
                break
    return best


def _longest_from(
    links: Mapping[tuple[int, int], list[tuple[int, int]]], start: tuple[int, int]
) -> int:
    best = 0
    used = {start}
    stack: list[tuple[tuple[int, int], int, int]] = [(start, 0, 0)]
    # Iterative depth-first search over simple paths: (corner, next neighbour index, length).
    while stack:
        corner, i, length = stack[-1]
        neighbours = links[corner]
        if i >= len(neighbours):
            stack.pop()
            used.discard(corner)
            continue
        stack[-1] = (corner, i + 1, length)
        nxt = neighbours[i]
        if nxt == start and length >= 2:
            # Back at the start corner by a new segment (the grid has no triangles): a ring.
            best = max(best, length + 1)
            continue
        if nxt in used:
            continue
        used.add(nxt)
        best = max(best, length + 1)
        stack.append((nxt, 0, length + 1))
    return best
