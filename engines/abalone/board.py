"""The Abalone board: 61 cells as bits of a Python int, direction shifts and the move tables.

Cell (row r = 0..8 for ``A``..``I``, number c = 1..9) is bit ``(r + 1) * 10 + c``. The spare
bits around the hexagon (column 0, which is also "column 10" of the row below, rows -1 and 9
and the cut-off corners) never hold a marble, so one step from any cell in any direction is a
shift by a constant and lands either on a cell or on a bit that means "off the board":

====  ======  =========================
dir   shift   (row, number) step
====  ======  =========================
E     +1      (0, +1)
NE    +11     (+1, +1)
NW    +10     (+1, 0)
W     -1      (0, -1)
SW    -11     (-1, -1)
SE    -10     (-1, 0)
====  ======  =========================

Actions are ``kind * STRIDE + head``: ``head`` is a cell bit index and ``kind`` says how many
marbles move and how (see ``KIND_*``). Generating moves kind by kind, each as one mask over all
marbles at once, lists them already in ascending order.
"""

from __future__ import annotations

from typing import TypeAlias

Cell: TypeAlias = int
"""A cell's bit index, ``(row + 1) * 10 + number``."""
Bitboard: TypeAlias = int

ROWS = "ABCDEFGHI"
DIRECTIONS = ("E", "NE", "NW", "W", "SW", "SE")
"""Direction names by index; ``d`` and ``d + 3`` are opposite, ``d % 3`` is the line's axis."""
OFFSETS = (1, 11, 10, -1, -11, -10)
AXES = (1, 11, 10)
"""The three lines' positive directions (E, NE, NW) as shifts."""

STRIDE = 128
"""Action code = kind * STRIDE + head cell."""
KIND_SINGLE = 0  # + direction: one marble
KIND_INLINE2 = 6  # + direction: two marbles moving along their line (may push)
KIND_INLINE3 = 12  # + direction: three marbles along their line (may push)
KIND_BROAD2 = 18  # + 4 * axis + j: two marbles side-step (j-th direction off the axis)
KIND_BROAD3 = 30  # + 4 * axis + j: three marbles side-step
KIND_PLACE = 42  # free-placement start: put a marble on ``head``
KINDS = 43
NUM_ACTIONS = KINDS * STRIDE

FULL: Bitboard = (1 << 144) - 1
"""Every bit a shift can reach from a cell (three steps out at most): cells and off-board."""


def cell_index(row: int, number: int) -> Cell:
    return (row + 1) * 10 + number


def on_board(row: int, number: int) -> bool:
    """The test of docs/rules/abalone.md: max(1, r − 3) ≤ c ≤ min(9, r + 5), rows 0..8."""
    return 0 <= row <= 8 and max(1, row - 3) <= number <= min(9, row + 5)


CELLS: tuple[Cell, ...] = tuple(
    cell_index(r, c) for r in range(9) for c in range(1, 10) if on_board(r, c)
)
"""The 61 cells in ascending order: A1..A5, B1..B6, ..., I5..I9."""
VALID: Bitboard = sum(1 << i for i in CELLS)
ROW_OF = {i: (i // 10 - 1) for i in CELLS}
NUMBER_OF = {i: i % 10 for i in CELLS}
NAMES = {i: f"{ROWS[ROW_OF[i]]}{NUMBER_OF[i]}" for i in CELLS}
BY_NAME = {name: i for i, name in NAMES.items()}


def distance_from_centre(cell: Cell) -> int:
    """Hex distance to E5: 0 at the centre, 4 on the edge."""
    dr, dc = ROW_OF[cell] - 4, NUMBER_OF[cell] - 5
    return (abs(dr) + abs(dc) + abs(dr - dc)) // 2


RINGS: tuple[Bitboard, ...] = tuple(
    sum(1 << i for i in CELLS if distance_from_centre(i) == k) for k in range(5)
)
"""``RINGS[k]``: the cells at distance k from the centre (RINGS[4] is the edge)."""
EDGE: Bitboard = RINGS[4]


def step(cell: Cell, direction: int, times: int = 1) -> Cell:
    return cell + OFFSETS[direction] * times


def shift(bits: Bitboard, offset: int) -> Bitboard:
    """Every bit moved ``offset`` places (one step in a direction); bits below 0 fall away."""
    return bits << offset if offset > 0 else bits >> -offset


# --------------------------------------------------------------------------- layouts


def _cells(text: str) -> Bitboard:
    """``"A1-A5 C3"``: single cells and same-row runs, as a mask."""
    mask = 0
    for part in text.split():
        first, _, last = part.partition("-")
        a = BY_NAME[first]
        b = BY_NAME[last] if last else a
        for i in range(a, b + 1):
            mask |= 1 << i
    return mask


LAYOUTS: dict[str, tuple[Bitboard, ...]] = {
    "standard": (_cells("A1-A5 B1-B6 C3-C5"), _cells("I5-I9 H4-H9 G5-G7")),
    "belgian_daisy": (
        _cells("A1 A2 B1 B2 B3 C2 C3 G7 G8 H7 H8 H9 I8 I9"),
        _cells("A4 A5 B4 B5 B6 C5 C6 G4 G5 H4 H5 H6 I5 I6"),
    ),
    "german_daisy": (
        _cells("B5 B6 C5 C6 C7 D6 D7 F3 F4 G3 G4 G5 H4 H5"),
        _cells("B1 B2 C1 C2 C3 D2 D3 F7 F8 G7 G8 G9 H8 H9"),
    ),
}
"""Two-player starts, Black (seat 0) first."""
THREE_PLAYER_START: tuple[Bitboard, ...] = (
    _cells("A1-A5 B1-B6"),
    _cells("E9 F9 G9 H9 I9 D8 E8 F8 G8 H8 I8"),
    _cells("E1 F2 G3 H4 I5 D1 E2 F3 G4 H5 I6"),
)
FREE_PLACEMENT = "free_placement"
LAYOUT_NAMES = ("standard", "belgian_daisy", "german_daisy", FREE_PLACEMENT)
MARBLES = {2: 14, 3: 11}
"""Marbles per seat by player count."""


# --------------------------------------------------------------------------- action tables


def _off_axis(axis: int) -> tuple[int, ...]:
    return tuple(d for d in range(6) if d % 3 != axis)


OFF_AXIS: tuple[tuple[int, ...], ...] = tuple(_off_axis(a) for a in range(3))
"""For each axis, the four directions a side-step may take, in index order."""


def kind_shape(kind: int) -> tuple[int, int, int | None]:
    """(marbles, direction, axis of a side-step or None for a move along the line)."""
    if kind < KIND_INLINE2:
        return 1, kind, None
    if kind < KIND_INLINE3:
        return 2, kind - KIND_INLINE2, None
    if kind < KIND_BROAD2:
        return 3, kind - KIND_INLINE3, None
    size = 2 if kind < KIND_BROAD3 else 3
    axis, j = divmod(kind - (KIND_BROAD2 if size == 2 else KIND_BROAD3), 4)
    return size, OFF_AXIS[axis][j], axis


def action_cells(action: int) -> tuple[list[Cell], int, bool]:
    """The cells of the moving marbles, the direction, and whether it is a side-step.

    For a move along the line the head (the marble in front) comes first.
    """
    kind, head = divmod(action, STRIDE)
    size, direction, axis = kind_shape(kind)
    if axis is None:
        back = -OFFSETS[direction]
        return [head + back * i for i in range(size)], direction, False
    return [head - AXES[axis] * i for i in range(size)], direction, True


def _geometric_actions() -> dict[int, tuple[Bitboard, int]]:
    """Every move shape that fits on the board: action -> (mover's xor mask, centre gain).

    A move along the line needs its marbles on cells and its head's next cell on the board
    (one's own marble never leaves); a side-step needs every destination on the board. The
    centre gain is how many steps closer to E5 the moving marbles get in total.
    """
    table: dict[int, tuple[Bitboard, int]] = {}
    for kind in range(KIND_PLACE):
        for head in CELLS:
            action = kind * STRIDE + head
            cells, direction, _ = action_cells(action)
            offset = OFFSETS[direction]
            targets = [c + offset for c in cells]
            if not all(c in ROW_OF for c in cells + targets):
                continue
            before = sum(1 << c for c in cells)
            after = sum(1 << c for c in targets)
            gain = sum(distance_from_centre(c) for c in cells) - sum(
                distance_from_centre(c) for c in targets
            )
            table[action] = (before ^ after, gain)
    return table


_GEOMETRY = _geometric_actions()
MOVE_XOR: dict[int, Bitboard] = {a: xor for a, (xor, _) in _GEOMETRY.items()}
"""Action -> the mover's bitboard change (the same whether or not it pushes)."""
CENTRE_GAIN: dict[int, int] = {a: gain for a, (_, gain) in _GEOMETRY.items()}


def action_name(action: int) -> str:
    """Canonical notation: end cells lowest first, then the direction; ``+E5`` to place."""
    kind, head = divmod(action, STRIDE)
    if kind == KIND_PLACE:
        return "+" + NAMES[head]
    cells, direction, _ = action_cells(action)
    ends = sorted((cells[0], cells[-1])) if len(cells) > 1 else [cells[0]]
    return "".join(NAMES[c] for c in ends) + DIRECTIONS[direction]


def line_action(first: Cell, last: Cell | None, direction: int) -> int | None:
    """The action moving the line from ``first`` to ``last`` (either order) in ``direction``;
    None when the two cells are not 2 or 3 apart on one line."""
    if last is None or last == first:
        return (KIND_SINGLE + direction) * STRIDE + first
    low, high = min(first, last), max(first, last)
    for axis, a in enumerate(AXES):
        for size in (2, 3):
            if high - low == a * (size - 1) and _same_line(low, high, axis):
                if direction % 3 == axis:
                    base = KIND_INLINE2 if size == 2 else KIND_INLINE3
                    head = high if OFFSETS[direction] > 0 else low
                    return (base + direction) * STRIDE + head
                base = KIND_BROAD2 if size == 2 else KIND_BROAD3
                j = OFF_AXIS[axis].index(direction)
                return (base + 4 * axis + j) * STRIDE + high
    return None


def _same_line(low: Cell, high: Cell, axis: int) -> bool:
    """Whether the cells from ``low`` stepping along ``axis`` reach ``high`` through cells."""
    cell = low
    while cell < high:
        cell += AXES[axis]
        if cell not in ROW_OF:
            return False
    return cell == high


# --------------------------------------------------------------------------- generation


def legal_moves(own: Bitboard, opp: Bitboard) -> list[int]:
    """Every legal move of the side owning ``own`` against ``opp`` (all opponents' marbles),
    in ascending action order.

    Each kind of move is one mask over all marbles at once: ``e<d>`` holds the cells whose
    neighbour in direction d is an empty cell, ``free`` is "empty or off the board" (where a
    pushed marble may go), ``t<d>``/``h<d>`` are the heads of lines of two/three facing d (a
    marble with one/two friends right behind it). The six directions are written out because
    this is the engine's hot path.
    """
    occupied = own | opp
    empty = VALID ^ occupied
    free = FULL ^ occupied
    e0, e1, e2 = empty >> 1, empty >> 11, empty >> 10
    e3, e4, e5 = empty << 1, empty << 11, empty << 10
    t0, t1, t2 = own & (own << 1), own & (own << 11), own & (own << 10)
    t3, t4, t5 = own & (own >> 1), own & (own >> 11), own & (own >> 10)
    h0, h1, h2 = t0 & (t0 << 1), t1 & (t1 << 11), t2 & (t2 << 10)
    h3, h4, h5 = t3 & (t3 >> 1), t4 & (t4 >> 11), t5 & (t5 >> 10)
    # Moves along the line; a line facing an opponent pushes it when it is outnumbered (2 v 1,
    # 3 v 1, 3 v 2) and the cell after it is empty or off the board.
    i20, i21, i22, i23, i24, i25 = t0 & e0, t1 & e1, t2 & e2, t3 & e3, t4 & e4, t5 & e5
    i30, i31, i32, i33, i34, i35 = h0 & e0, h1 & e1, h2 & e2, h3 & e3, h4 & e4, h5 & e5
    f = opp >> 1
    if t0 & f:
        p = f & (free >> 2)
        i20 |= t0 & p
        i30 |= h0 & (p | (f & (opp >> 2) & (free >> 3)))
    f = opp >> 11
    if t1 & f:
        p = f & (free >> 22)
        i21 |= t1 & p
        i31 |= h1 & (p | (f & (opp >> 22) & (free >> 33)))
    f = opp >> 10
    if t2 & f:
        p = f & (free >> 20)
        i22 |= t2 & p
        i32 |= h2 & (p | (f & (opp >> 20) & (free >> 30)))
    f = opp << 1
    if t3 & f:
        p = f & (free << 2)
        i23 |= t3 & p
        i33 |= h3 & (p | (f & (opp << 2) & (free << 3)))
    f = opp << 11
    if t4 & f:
        p = f & (free << 22)
        i24 |= t4 & p
        i34 |= h4 & (p | (f & (opp << 22) & (free << 33)))
    f = opp << 10
    if t5 & f:
        p = f & (free << 20)
        i25 |= t5 & p
        i35 |= h5 & (p | (f & (opp << 20) & (free << 30)))
    # Side-steps: every destination empty. ``a<axis><d>``: both cells of a pair can step d.
    a01, a02, a04, a05 = e1 & (e1 << 1), e2 & (e2 << 1), e4 & (e4 << 1), e5 & (e5 << 1)
    a10, a12, a13, a15 = e0 & (e0 << 11), e2 & (e2 << 11), e3 & (e3 << 11), e5 & (e5 << 11)
    a20, a21, a23, a24 = e0 & (e0 << 10), e1 & (e1 << 10), e3 & (e3 << 10), e4 & (e4 << 10)
    masks = (
        own & e0, own & e1, own & e2, own & e3, own & e4, own & e5,
        i20, i21, i22, i23, i24, i25,
        i30, i31, i32, i33, i34, i35,
        t0 & a01, t0 & a02, t0 & a04, t0 & a05,
        t1 & a10, t1 & a12, t1 & a13, t1 & a15,
        t2 & a20, t2 & a21, t2 & a23, t2 & a24,
        h0 & a01 & (a01 << 1), h0 & a02 & (a02 << 1),
        h0 & a04 & (a04 << 1), h0 & a05 & (a05 << 1),
        h1 & a10 & (a10 << 11), h1 & a12 & (a12 << 11),
        h1 & a13 & (a13 << 11), h1 & a15 & (a15 << 11),
        h2 & a20 & (a20 << 10), h2 & a21 & (a21 << 10),
        h2 & a23 & (a23 << 10), h2 & a24 & (a24 << 10),
    )  # fmt: skip
    # Highest bit first (cheaper on ints than the lowest), kinds from the last: the list comes
    # out descending and is turned round once.
    out: list[int] = []
    append = out.append
    base = KIND_PLACE * STRIDE - 1
    for m in reversed(masks):
        base -= STRIDE
        while m:
            b = m.bit_length()
            append(base + b)
            m ^= 1 << (b - 1)
    out.reverse()
    return out


def has_step(own: Bitboard, opp: Bitboard) -> bool:
    """Whether some marble of ``own`` has an empty neighbour (a sure sign of a legal move)."""
    empty = VALID ^ own ^ opp
    near = empty >> 1 | empty << 1 | empty >> 11 | empty << 11 | empty >> 10 | empty << 10
    return bool(own & near)
