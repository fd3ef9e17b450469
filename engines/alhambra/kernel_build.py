"""The building rules and the longest wall of one Alhambra, compiled, for :mod:`kernel`.

An Alhambra lives in a window of the kernel's position: ``STRIDE * STRIDE`` cells numbered as
in :mod:`engines.alhambra.building` (so a cell is the same number in an action on both sides),
each holding a tile id or ``EMPTY``, and a table of each tile's cell (``NOWHERE`` when the tile
is not built). Every function takes the position and the two offsets ``g`` (the grid) and
``w`` (the cell of each tile), so this module needs nothing of the rest of the layout.

The rules checked, as in docs/rules/alhambra.md: a tile shares a side with the Alhambra and every
touching pair of sides matches; every tile is reachable from the fountain by open sides; no
empty cell is cut off from the outside.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.alhambra.building import LIMIT, OFFSET, RING, RING_SPLITS, STRIDE
from engines.alhambra.tiles import NUM_TILES, WALLS
from engines.kernel_cache import track

EMPTY = -1
NOWHERE = -1
CELLS = STRIDE * STRIDE
TILE_IDS = NUM_TILES + 1
"""Tile ids 0 (the fountain) to 54."""
LOW = OFFSET - LIMIT
HIGH = OFFSET + LIMIT
"""Row and column indices a tile may take."""
_WALLS = np.array(WALLS, dtype=np.int64)
_STEP = np.array([STRIDE, 1, -STRIDE, -1], dtype=np.int64)
"""Cell offset across the sides N, E, S, W (wall bits 1, 2, 4, 8)."""
_SIDE = np.array([1, 2, 4, 8], dtype=np.int64)
_OPPOSITE = np.array([4, 8, 1, 2], dtype=np.int64)
_RING = np.array(RING, dtype=np.int64)
_RING_SPLITS = np.array(RING_SPLITS, dtype=np.bool_)
MAX_FRONT = 4 * TILE_IDS


@njit(cache=True)
def in_bounds(cell: int) -> bool:
    y = cell // STRIDE
    x = cell % STRIDE
    return LOW <= x <= HIGH and LOW <= y <= HIGH


@njit(cache=True)
def frontier(state: np.ndarray, g: int, w: int, out: np.ndarray) -> int:
    """Empty in-bounds cells sharing a side with the Alhambra, ascending, into ``out``."""
    n = 0
    for tile in range(TILE_IDS):
        cell = state[w + tile]
        if cell == NOWHERE:
            continue
        for k in range(4):
            nb = cell + _STEP[k]
            if state[g + nb] == EMPTY and in_bounds(nb):
                out[n] = nb
                n += 1
    if n == 0:
        return 0
    out[:n].sort()
    m = 1
    for i in range(1, n):
        if out[i] != out[m - 1]:
            out[m] = out[i]
            m += 1
    return m


@njit(cache=True)
def fits(state: np.ndarray, g: int, cell: int, walls: int) -> bool:
    """A tile with ``walls`` on empty ``cell`` touches the Alhambra, matches every neighbour,
    and has an open shared side."""
    touching = False
    open_side = False
    for k in range(4):
        other = state[g + cell + _STEP[k]]
        if other == EMPTY:
            continue
        mine = walls & _SIDE[k] != 0
        theirs = _WALLS[other] & _OPPOSITE[k] != 0
        if mine != theirs:
            return False
        touching = True
        if not mine:
            open_side = True
    return touching and open_side


@njit(cache=True)
def _splits(state: np.ndarray, g: int, cell: int) -> bool:
    built = 0
    for i in range(8):
        if state[g + cell + _RING[i]] != EMPTY:
            built |= 1 << i
    return _RING_SPLITS[built]


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
    for k in range(4):
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
            for j in range(4):
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
def can_place(state: np.ndarray, g: int, w: int, cell: int, walls: int) -> bool:
    """Every building rule for a tile with ``walls`` put on frontier ``cell``."""
    if state[g + cell] != EMPTY or not in_bounds(cell) or not fits(state, g, cell, walls):
        return False
    if not _splits(state, g, cell):
        return True  # nothing can be cut off unless the 3 × 3 square around it splits
    box = bounds(state, w)
    seen, todo = scratch(box)
    return reaches_outside(state, g, cell, box, seen, todo, 1)


@njit(cache=True)
def survey(state: np.ndarray, g: int, front: np.ndarray, nf: int, sides: np.ndarray) -> None:
    """For each frontier cell: the sides with a neighbour (``sides[i, 0]``), the walls a tile
    there must have on exactly those sides (``sides[i, 1]``), and -1 / 0 / 1 for "no empty
    cell can be cut off" / "not known yet" / "building it cuts one off" (``sides[i, 2]``)."""
    for i in range(nf):
        cell = front[i]
        touching = 0
        needed = 0
        for k in range(4):
            other = state[g + cell + _STEP[k]]
            if other != EMPTY:
                touching |= _SIDE[k]
                if _WALLS[other] & _OPPOSITE[k]:
                    needed |= _SIDE[k]
        sides[i, 0] = touching
        sides[i, 1] = needed
        sides[i, 2] = 0 if _splits(state, g, cell) else -1


@njit(cache=True)
def placeable(
    state: np.ndarray,
    g: int,
    front: np.ndarray,
    sides: np.ndarray,
    i: int,
    walls: int,
    box: tuple[int, int, int, int],
    seen: np.ndarray,
    todo: np.ndarray,
) -> bool:
    """``can_place`` on frontier cell ``i`` of a :func:`survey` (its hole check remembered;
    ``seen`` and ``todo`` from :func:`scratch` of ``box``)."""
    touching = sides[i, 0]
    if walls & touching != sides[i, 1] or not touching & ~walls:
        return False
    if sides[i, 2] == 0:
        sides[i, 2] = -1 if reaches_outside(state, g, front[i], box, seen, todo, i + 1) else 1
    return sides[i, 2] < 0


@njit(cache=True)
def touching_sides(state: np.ndarray, g: int, cell: int) -> int:
    """The sides of ``cell`` that face a tile."""
    sides = 0
    for k in range(4):
        if state[g + cell + _STEP[k]] != EMPTY:
            sides |= _SIDE[k]
    return sides


@njit(cache=True)
def _reached_without(
    state: np.ndarray, g: int, w: int, skip: int, seen: np.ndarray, todo: np.ndarray
) -> int:
    """Tiles reachable from the fountain across open sides without crossing tile ``skip``
    (``seen`` holds ``skip`` for the tiles met: one array serves every tile)."""
    seen[0] = skip
    seen[skip] = skip
    todo[0] = 0
    top = 1
    count = 1
    while top > 0:
        top -= 1
        tile = todo[top]
        c = state[w + tile]
        walls = _WALLS[tile]
        for k in range(4):
            if walls & _SIDE[k]:
                continue
            other = state[g + c + _STEP[k]]
            if other != EMPTY and seen[other] != skip:
                seen[other] = skip
                todo[top] = other
                top += 1
                count += 1
    return count


@njit(cache=True)
def can_remove(
    state: np.ndarray, g: int, w: int, tile: int, built: int, seen: np.ndarray, todo: np.ndarray
) -> bool:
    """Whether built ``tile`` may go to the reserve: not the fountain, its freed cell is no
    hole (it has an empty side-neighbour, which reaches the outside), and the other
    ``built - 1`` tiles stay reachable. ``seen`` (zeroed, one per tile id) and ``todo`` are
    scratch arrays of ``TILE_IDS`` entries that serve every tile in turn."""
    cell = state[w + tile]
    if tile == 0 or touching_sides(state, g, cell) == 15:
        return False
    return _reached_without(state, g, w, tile, seen, todo) == built - 1


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
        for k in range(4):
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
