"""The building rules and the longest wall of one Alhambra, compiled, for :mod:`kernel`.

An Alhambra lives in two places of the kernel's position. Its cells: a window of ``STRIDE *
STRIDE`` cells numbered as in :mod:`engines.alhambra.building` (so a cell is the same number in
an action on both sides), each holding a tile id or ``EMPTY``, with a table of each tile's cell
(``NOWHERE`` when the tile is not built). Its outline: one bitmap of the built cells and one
per side of the cells whose tile has a wall there, a word per row (bit x of row y is cell
``y * STRIDE + x``), and the rows built so far. :func:`mark` and :func:`unmark` keep the
outline in step with every placement and removal, so the frontier, where each tile fits and
which tiles may leave are word operations on a few rows, not a survey of the Alhambra. Every
function takes the position and the offsets it reads (``g`` the cells, ``w`` the tile table,
``o`` the outline), so this module needs nothing of the rest of the layout.

The rules checked, as in docs/rules/alhambra.md: a tile shares a side with the Alhambra and
every touching pair of sides matches; every tile is reachable from the fountain by open sides;
no empty cell is cut off from the outside.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.alhambra.building import LIMIT, OFFSET, RING, RING_SPLITS, STRIDE
from engines.alhambra.tiles import NUM_TILES, SIDES, WALLS, E, N, S, W
from engines.kernel_bits import popcount, trailing_zeros
from engines.kernel_cache import track

EMPTY = -1
NOWHERE = -1
CELLS = STRIDE * STRIDE
TILE_IDS = NUM_TILES + 1
"""Tile ids 0 (the fountain) to 54."""
LOW = OFFSET - LIMIT
HIGH = OFFSET + LIMIT
"""Row and column indices a tile may take."""
SIDE_COUNT = len(SIDES)
ALL_SIDES = N | E | S | W
_WALLS = np.array(WALLS, dtype=np.int64)
_STEP = np.array([STRIDE, 1, -STRIDE, -1], dtype=np.int64)
"""Cell offset across the sides N, E, S, W (wall bits 1, 2, 4, 8)."""
_SIDE = np.array(SIDES, dtype=np.int64)
_OPPOSITE = np.array([S, W, N, E], dtype=np.int64)
_RING = np.array(RING, dtype=np.int64)
MAX_FRONT = SIDE_COUNT * TILE_IDS

assert STRIDE == 64 and LOW > 0 and HIGH < STRIDE - 1  # a row is one word, with a margin
BUILT_ROWS = 0
"""Outline: the built cells, one word per row."""
WALL_ROWS = STRIDE
"""Outline: for side ``k`` (N, E, S, W), the cells whose tile has a wall on it, at
``WALL_ROWS + k * STRIDE``."""
ROW_LO = WALL_ROWS + SIDE_COUNT * STRIDE
ROW_HI = ROW_LO + 1
"""Outline: the lowest and highest row ever built (rows outside them are empty)."""
OUTLINE_SIZE = ROW_HI + 1
_NORTH_WALLS = WALL_ROWS
_EAST_WALLS = WALL_ROWS + STRIDE
_SOUTH_WALLS = WALL_ROWS + 2 * STRIDE
_WEST_WALLS = WALL_ROWS + 3 * STRIDE
INSIDE = sum(1 << x for x in range(LOW, HIGH + 1))
"""The columns of a row a tile may take."""


def _window_splits() -> np.ndarray:
    """``RING_SPLITS`` indexed by the 3 × 3 window read from three rows: bits 0–2 the row
    above (x - 1, x, x + 1), 3–5 the cell's own row, 6–8 the row below."""
    # Window bit of each ring position N, NE, E, SE, S, SW, W, NW.
    window_bit = (1, 2, 5, 8, 7, 6, 3, 0)
    out = np.zeros(1 << 9, dtype=np.bool_)
    for window in range(1 << 9):
        ring = 0
        for i, bit in enumerate(window_bit):
            ring |= (window >> bit & 1) << i
        out[window] = RING_SPLITS[ring]
    return out


_WINDOW_SPLITS = _window_splits()


# --------------------------------------------------------------------------- the outline
@njit(cache=True)
def mark(state: np.ndarray, o: int, cell: int, walls: int) -> None:
    """Add a tile with ``walls`` built on ``cell`` to the outline at ``o``."""
    y = cell // STRIDE
    bit = np.int64(1) << (cell % STRIDE)
    state[o + BUILT_ROWS + y] |= bit
    for k in range(SIDE_COUNT):
        if walls & _SIDE[k]:
            state[o + WALL_ROWS + k * STRIDE + y] |= bit
    state[o + ROW_LO] = min(state[o + ROW_LO], y)
    state[o + ROW_HI] = max(state[o + ROW_HI], y)


@njit(cache=True)
def unmark(state: np.ndarray, o: int, cell: int) -> None:
    """Take the tile on ``cell`` out of the outline at ``o``."""
    y = cell // STRIDE
    keep = ~(np.int64(1) << (cell % STRIDE))
    state[o + BUILT_ROWS + y] &= keep
    for k in range(SIDE_COUNT):
        state[o + WALL_ROWS + k * STRIDE + y] &= keep


@njit(cache=True)
def rows(state: np.ndarray, o: int) -> tuple[int, int]:
    """The rows that may hold frontier cells, inclusive."""
    return max(LOW, state[o + ROW_LO] - 1), min(HIGH, state[o + ROW_HI] + 1)


@njit(cache=True)
def front_row(state: np.ndarray, o: int, y: int) -> int:
    """The frontier cells of row ``y`` (empty, in bounds, sharing a side with a tile)."""
    b = state[o + y]
    return (state[o + y + 1] | b >> 1 | state[o + y - 1] | b << 1) & ~b & INSIDE


@njit(cache=True)
def fitting_row(state: np.ndarray, o: int, y: int, walls: int) -> int:
    """The frontier cells of row ``y`` where a tile with ``walls`` touches the Alhambra,
    matches every neighbour and has an open shared side (holes not checked)."""
    b = state[o + y]
    up = state[o + y + 1]
    down = state[o + y - 1]
    east = b >> 1
    west = b << 1
    # The walls a tile needs there: a neighbour's wall on the side facing the cell.
    need_n = state[o + _SOUTH_WALLS + y + 1]
    need_e = state[o + _WEST_WALLS + y] >> 1
    need_s = state[o + _NORTH_WALLS + y - 1]
    need_w = state[o + _EAST_WALLS + y] << 1
    bad = 0
    opened = 0
    if walls & N:
        bad |= up & ~need_n
    else:
        bad |= need_n
        opened |= up
    if walls & E:
        bad |= east & ~need_e
    else:
        bad |= need_e
        opened |= east
    if walls & S:
        bad |= down & ~need_s
    else:
        bad |= need_s
        opened |= down
    if walls & W:
        bad |= west & ~need_w
    else:
        bad |= need_w
        opened |= west
    return opened & ~bad & ~b & INSIDE


@njit(cache=True)
def splits(state: np.ndarray, o: int, cell: int) -> bool:
    """Whether building empty ``cell`` separates its empty side-neighbours within its 3 × 3
    square (only then can an empty cell be cut off)."""
    y = cell // STRIDE
    left = cell % STRIDE - 1
    window = (
        (state[o + y + 1] >> left & 7)
        | (state[o + y] >> left & 7) << 3
        | (state[o + y - 1] >> left & 7) << 6
    )
    return _WINDOW_SPLITS[window]


@njit(cache=True)
def touching_sides(state: np.ndarray, o: int, cell: int) -> int:
    """The sides of ``cell`` that face a tile."""
    y = cell // STRIDE
    x = cell % STRIDE
    b = state[o + y]
    return (
        (state[o + y + 1] >> x & 1) * N
        | (b >> (x + 1) & 1) * E
        | (state[o + y - 1] >> x & 1) * S
        | (b >> (x - 1) & 1) * W
    )


@njit(cache=True)
def frontier(state: np.ndarray, o: int, out: np.ndarray) -> int:
    """Empty in-bounds cells sharing a side with the Alhambra, ascending, into ``out``."""
    n = 0
    lo, hi = rows(state, o)
    for y in range(lo, hi + 1):
        m = front_row(state, o, y)
        while m:
            out[n] = y * STRIDE + trailing_zeros(m)
            m &= m - 1
            n += 1
    return n


@njit(cache=True)
def open_links(state: np.ndarray, o: int) -> int:
    """Pairs of side-neighbours joined by open sides: edges of the graph reachability is
    about."""
    total = 0
    lo = state[o + ROW_LO]
    for y in range(lo, state[o + ROW_HI] + 1):
        b = state[o + y]
        total += popcount(b & b >> 1 & ~state[o + _EAST_WALLS + y])
        total += popcount(b & state[o + y + 1] & ~state[o + _NORTH_WALLS + y])
    return total


@njit(cache=True)
def removable(
    state: np.ndarray, g: int, w: int, o: int, tiles: int, built: int, work: np.ndarray
) -> int:
    """The tiles of ``tiles`` (a mask of the built tile ids) that may go to the reserve, as a
    mask: not the fountain, the freed cell no hole (an empty side-neighbour, which reaches the
    outside), and no cut vertex of the graph of open sides. With one edge fewer than tiles the
    graph is a tree, whose leaves are the tiles that are no cut vertex. ``work``: ``CUT_WORK``
    entries of scratch."""
    tree = open_links(state, o) == built - 1
    cut = 0 if tree else cut_tiles(state, g, w, work)
    out = 0
    m = tiles & ~1  # the fountain stays
    while m:
        tile = trailing_zeros(m)
        m &= m - 1
        sides = touching_sides(state, o, state[w + tile])
        if sides == ALL_SIDES:
            continue
        if tree:
            if popcount(sides & ~_WALLS[tile]) <= 1:
                out |= 1 << tile
        elif not cut >> tile & 1:
            out |= 1 << tile
    return out


CUT_WORK = 5 * TILE_IDS
"""Scratch entries of :func:`cut_tiles`."""


@njit(cache=True)
def cut_tiles(state: np.ndarray, g: int, w: int, work: np.ndarray) -> int:
    """The cut vertices of the graph of open sides (every tile reachable from the fountain), as
    a mask of tile ids: Tarjan's depth-first search from the fountain. ``work``: ``CUT_WORK``
    entries of scratch."""
    disc = work[:TILE_IDS]
    low = work[TILE_IDS : 2 * TILE_IDS]
    parent = work[2 * TILE_IDS : 3 * TILE_IDS]
    stack = work[3 * TILE_IDS : 4 * TILE_IDS]
    side = work[4 * TILE_IDS : CUT_WORK]
    disc[:] = -1
    disc[0] = low[0] = 0
    parent[0] = -1
    stack[0] = 0
    side[0] = 0
    top = 1
    clock = 1
    cut = 0
    while top > 0:
        v = stack[top - 1]
        k = side[top - 1]
        if k < SIDE_COUNT:
            side[top - 1] = k + 1
            if _WALLS[v] & _SIDE[k]:
                continue
            u = state[g + state[w + v] + _STEP[k]]
            if u == EMPTY:
                continue
            if disc[u] < 0:
                parent[u] = v
                disc[u] = low[u] = clock
                clock += 1
                stack[top] = u
                side[top] = 0
                top += 1
            elif u != parent[v]:
                low[v] = min(low[v], disc[u])
            continue
        top -= 1
        p = parent[v]
        if p >= 0:
            low[p] = min(low[p], low[v])
            if parent[p] >= 0 and low[v] >= disc[p]:
                cut |= np.int64(1) << p  # the fountain (the root) is never removed
    return cut


@njit(cache=True)
def bounds(state: np.ndarray, w: int) -> tuple[int, int, int, int]:
    """Columns and rows spanned by the Alhambra: (x0, x1, y0, y1) as indices."""
    x0 = y0 = STRIDE
    x1 = y1 = -1
    for tile in range(TILE_IDS):
        c = state[w + tile]
        if c == NOWHERE:
            continue
        x = c % STRIDE
        y = c // STRIDE
        x0 = min(x0, x)
        x1 = max(x1, x)
        y0 = min(y0, y)
        y1 = max(y1, y)
    return x0, x1, y0, y1


@njit(cache=True)
def scratch(box: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Marks (zeroed) and a stack for :func:`reaches_outside` over ``box`` widened by one."""
    size = (box[1] - box[0] + 3) * (box[3] - box[2] + 3)
    return np.zeros(size, dtype=np.int64), np.empty(size, dtype=np.int64)


@njit(cache=True)
def reaches_outside(
    state: np.ndarray,
    g: int,
    cell: int,
    box: tuple[int, int, int, int],
    seen: np.ndarray,
    todo: np.ndarray,
    stamp: int,
) -> bool:
    """With frontier ``cell`` built: whether each empty side-neighbour of it still connects
    to the area outside the bounding box (``box`` of the Alhambra, widened to ``cell``)
    through empty cells. ``seen`` and ``todo`` come from :func:`scratch`; a cell counts as
    seen when it holds ``stamp``, so one scratch serves many checks with distinct stamps."""
    cx = cell % STRIDE
    cy = cell // STRIDE
    x0 = min(box[0], cx)
    x1 = max(box[1], cx)
    y0 = min(box[2], cy)
    y1 = max(box[3], cy)
    left = box[0] - 1
    low = box[2] - 1
    width = box[1] - box[0] + 3
    seen[(cy - low) * width + cx - left] = stamp  # built for this check
    for k in range(SIDE_COUNT):
        start = cell + _STEP[k]
        if state[g + start] != EMPTY:
            continue
        x = start % STRIDE
        y = start // STRIDE
        if x <= x0 or x >= x1 or y <= y0 or y >= y1:
            continue  # on the box's edge: the outside is next door
        if seen[(y - low) * width + x - left] == stamp:
            continue  # reached from an earlier start that got out
        seen[(y - low) * width + x - left] = stamp
        todo[0] = start
        top = 1
        out = False
        while top > 0:
            top -= 1
            c = todo[top]
            x = c % STRIDE
            y = c // STRIDE
            if x <= x0 or x >= x1 or y <= y0 or y >= y1:
                out = True
                break
            for j in range(SIDE_COUNT):
                nb = c + _STEP[j]
                at = (nb // STRIDE - low) * width + nb % STRIDE - left
                if state[g + nb] == EMPTY and seen[at] != stamp:
                    seen[at] = stamp
                    todo[top] = nb
                    top += 1
        if not out:
            return False
    return True


@njit(cache=True)
def no_hole(state: np.ndarray, g: int, w: int, o: int, cell: int) -> bool:
    """Whether building frontier ``cell`` leaves every empty cell a way out."""
    if not splits(state, o, cell):
        return True  # nothing can be cut off unless the 3 × 3 square around it splits
    box = bounds(state, w)
    seen, todo = scratch(box)
    return reaches_outside(state, g, cell, box, seen, todo, 1)


@njit(cache=True)
def can_place(state: np.ndarray, g: int, w: int, o: int, cell: int, walls: int) -> bool:
    """Every building rule for a tile with ``walls`` put on frontier ``cell``."""
    y = cell // STRIDE
    if not fitting_row(state, o, y, walls) >> (cell % STRIDE) & 1:
        return False
    return no_hole(state, g, w, o, cell)


# --------------------------------------------------------------------------- walls
@njit(cache=True)
def longest_wall(state: np.ndarray, g: int, w: int) -> int:
    """Segments of the longest chain of outer wall segments joined end to end, no corner used
    twice, a closed ring counting all its segments (``building.longest_wall``).

    Corner (x, y) is the south-west corner of cell (x, y), numbered like the cell.
    """
    ends = np.empty((4 * TILE_IDS, 2), dtype=np.int64)
    m = 0
    for tile in range(TILE_IDS):
        c = state[w + tile]
        walls = _WALLS[tile]
        if c == NOWHERE or walls == 0:
            continue
        for k in range(SIDE_COUNT):
            if walls & _SIDE[k] and state[g + c + _STEP[k]] == EMPTY:
                if k == 0:
                    ends[m, 0], ends[m, 1] = c + STRIDE, c + STRIDE + 1
                elif k == 1:
                    ends[m, 0], ends[m, 1] = c + 1, c + STRIDE + 1
                elif k == 2:
                    ends[m, 0], ends[m, 1] = c, c + 1
                else:
                    ends[m, 0], ends[m, 1] = c, c + STRIDE
                m += 1
    if m == 0:
        return 0
    # Corners numbered 0..k-1 in the order met (a sparse map: ``local`` is trusted only where
    # ``corner_of`` confirms it).
    local = np.empty(CELLS + STRIDE + 2, dtype=np.int64)
    corner_of = np.empty(2 * m, dtype=np.int64)
    k = 0
    ids = np.empty((m, 2), dtype=np.int64)
    for i in range(m):
        for e in range(2):
            c = ends[i, e]
            j = local[c]
            if not (0 <= j < k and corner_of[j] == c):
                j = k
                local[c] = k
                corner_of[k] = c
                k += 1
            ids[i, e] = j
    degree = np.zeros(k, dtype=np.int64)
    adj = np.empty((k, 4), dtype=np.int64)
    for i in range(m):
        a, b = ids[i, 0], ids[i, 1]
        adj[a, degree[a]] = b
        degree[a] += 1
        adj[b, degree[b]] = a
        degree[b] += 1
    part = np.full(k, -1, dtype=np.int64)
    stack = np.empty(k + 1, dtype=np.int64)
    best = 0
    for start in range(k):
        if part[start] >= 0:
            continue
        part[start] = start
        stack[0] = start
        top = 1
        ends_sum = 0
        junction = False
        while top > 0:
            top -= 1
            c = stack[top]
            ends_sum += degree[c]
            if degree[c] > 2:
                junction = True
            for i in range(degree[c]):
                nb = adj[c, i]
                if part[nb] < 0:
                    part[nb] = start
                    stack[top] = nb
                    top += 1
        edges = ends_sum // 2
        if edges <= best:
            continue
        if not junction:
            best = edges  # a plain chain or ring counts whole
            continue
        for c in range(k):
            if part[c] == start:
                best = max(best, _longest_from(adj, degree, c, k))
                if best == edges:
                    break
    return best


@njit(cache=True)
def _longest_from(adj: np.ndarray, degree: np.ndarray, start: int, k: int) -> int:
    """Longest simple path of corners from ``start``, or ring back to it (depth first)."""
    used = np.zeros(k, dtype=np.bool_)
    corner = np.empty(k + 1, dtype=np.int64)
    nxt = np.empty(k + 1, dtype=np.int64)
    used[start] = True
    corner[0] = start
    nxt[0] = 0
    depth = 0
    best = 0
    while depth >= 0:
        c = corner[depth]
        i = nxt[depth]
        if i >= degree[c]:
            used[c] = False
            depth -= 1
            continue
        nxt[depth] = i + 1
        nb = adj[c, i]
        if nb == start and depth >= 2:
            best = max(best, depth + 1)  # back at the start by a new segment: a ring
            continue
        if used[nb]:
            continue
        used[nb] = True
        best = max(best, depth + 1)
        depth += 1
        corner[depth] = nb
        nxt[depth] = 0
    used[start] = False
    return best


track(globals())
