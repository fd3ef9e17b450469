"""End-of-game scoring of Les Alvéoles: square points and the 100-point bonuses.

Works on owners alone, so a finished (or hand-built) board can be scored without playing it:
:func:`score_owners` is the documented way to check bonus counts in tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from engines.alveoles.layouts import SIZE

BONUS = 100
BLOCK = 3
OVERLAPPING = "overlapping"
DISJOINT = "disjoint"
NO_BONUS = "none"
SQUARE_BONUS_MODES = (OVERLAPPING, DISJOINT, NO_BONUS)
"""How 3 × 3 blocks count (decision V4, docs/rules/alveoles.md), or ``none``: no bonus of any
kind (decision V6, docs/rules/alveoles.md)."""

ROW_MASKS: tuple[int, ...] = tuple(((1 << SIZE) - 1) << (SIZE * r) for r in range(SIZE))
COL_MASKS: tuple[int, ...] = tuple(
    sum(1 << (SIZE * r + c) for r in range(SIZE)) for c in range(SIZE)
)
_ORIGINS = [(r, c) for r in range(SIZE - BLOCK + 1) for c in range(SIZE - BLOCK + 1)]
BLOCK_MASKS: tuple[int, ...] = tuple(
    sum(1 << (SIZE * (r + i) + c + j) for i in range(BLOCK) for j in range(BLOCK))
    for r, c in _ORIGINS
)
"""The 36 possible 3 × 3 windows, by lower-left corner (a1 first, row by row)."""

_OVERLAP: tuple[int, ...] = tuple(
    sum(1 << j for j, m2 in enumerate(BLOCK_MASKS) if m1 & m2) for m1 in BLOCK_MASKS
)
"""For each window, the set (bitmask over window indices) of windows sharing a square with it."""

LINES_OF_SQUARE: tuple[tuple[int, ...], ...] = tuple(
    tuple(m for m in (*ROW_MASKS, *COL_MASKS, *BLOCK_MASKS) if m >> sq & 1)
    for sq in range(SIZE * SIZE)
)
"""Every bonus line (row, column, 3 × 3 window) containing each square, as square masks."""


@lru_cache(maxsize=4096)
def _max_packing(windows: int) -> int:
    """Largest number of pairwise disjoint windows among ``windows`` (exact, by branching)."""
    if not windows:
        return 0
    first = (windows & -windows).bit_length() - 1
    skip = _max_packing(windows & ~(1 << first))
    take = 1 + _max_packing(windows & ~_OVERLAP[first])
    return max(skip, take)


def owned_blocks(mask: int) -> int:
    """Bitmask over the 36 windows of those entirely inside ``mask`` (a set of squares)."""
    return sum(1 << i for i, m in enumerate(BLOCK_MASKS) if mask & m == m)


def block_bonuses(mask: int, mode: str = OVERLAPPING) -> int:
    """How many 3 × 3 bonuses a player owning the squares in ``mask`` earns under ``mode``:
    every owned window, overlapping ones included, or the most that do not overlap (decision
    V4, docs/rules/alveoles.md)."""
    if mode == NO_BONUS:
        return 0
    windows = owned_blocks(mask)
    if mode == DISJOINT:
        return _max_packing(windows)
    return windows.bit_count()


@dataclass(frozen=True)
class SeatScore:
    """One seat's points: squares, bonuses by kind, and the total."""

    square_points: int
    rows: int
    columns: int
    blocks: int

    @property
    def bonus_points(self) -> int:
        return BONUS * (self.rows + self.columns + self.blocks)

    @property
    def total(self) -> int:
        return self.square_points + self.bonus_points


@lru_cache(maxsize=64)
def board_lines(rows: int, cols: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The row and column masks of a ``rows`` × ``cols`` board in the lower-left corner of
    the 8 × 8 numbering (decision V5): a whole row is ``cols`` squares, a column ``rows``."""
    row_masks = tuple(((1 << cols) - 1) << (SIZE * r) for r in range(rows))
    col_masks = tuple(sum(1 << (SIZE * r + c) for r in range(rows)) for c in range(cols))
    return row_masks, col_masks


@lru_cache(maxsize=64)
def lines_of_square(rows: int, cols: int, mode: str) -> tuple[tuple[int, ...], ...]:
    """Every bonus line of a ``rows`` × ``cols`` board containing each of the 64 squares of the
    8 × 8 numbering (none off the board, none at all under ``none``): the
    :data:`LINES_OF_SQUARE` of that board and bonus rule."""
    if mode == NO_BONUS:
        return ((),) * (SIZE * SIZE)
    row_masks, col_masks = board_lines(rows, cols)
    board = 0
    for m in row_masks:
        board |= m
    blocks = tuple(m for m in BLOCK_MASKS if m & board == m)
    return tuple(
        tuple(m for m in (*row_masks, *col_masks, *blocks) if m >> sq & 1)
        for sq in range(SIZE * SIZE)
    )


def seat_score(
    mask: int,
    values: Sequence[int],
    mode: str = OVERLAPPING,
    board: tuple[int, int] = (SIZE, SIZE),
) -> SeatScore:
    """Score the squares in ``mask`` (bit ``sq`` set = owned) on a board of ``values`` and
    ``board`` = (rows, columns). The 3 × 3 windows that leave a smaller board are never owned,
    so the 36 of the 8 × 8 numbering serve every size."""
    points = sum(values[sq] for sq in range(len(values)) if mask >> sq & 1)
    if mode == NO_BONUS:
        return SeatScore(points, 0, 0, 0)
    row_masks, col_masks = board_lines(*board)
    rows = sum(1 for m in row_masks if mask & m == m)
    cols = sum(1 for m in col_masks if mask & m == m)
    return SeatScore(points, rows, cols, block_bonuses(mask, mode))


def owners_from_rows(rows: Sequence[str]) -> list[int]:
    """Owners in square order from a picture of 8 strings, row 8 first.

    Each character is a seat digit ``0``–``3`` or ``.`` for an unclaimed square; spaces are
    ignored. Handy for hand-built boards in tests.
    """
    if len(rows) != SIZE:
        raise ValueError(f"an owners picture needs 8 rows, got {len(rows)}")
    owners = [-1] * (SIZE * SIZE)
    for r, text in enumerate(rows):
        cells = text.replace(" ", "")
        if len(cells) != SIZE:
            raise ValueError(f"owners row {r + 1} has {len(cells)} cells; it needs 8")
        for c, ch in enumerate(cells):
            owners[(SIZE - 1 - r) * SIZE + c] = -1 if ch == "." else int(ch)
    return owners


def score_owners(
    owners: Sequence[int] | str, values: Sequence[int], players: int, mode: str = OVERLAPPING
) -> list[SeatScore]:
    """Score every seat from the owners of the 64 squares (square order, ``-1``/``.`` = none).

    ``owners`` may be a list of seats or the 64-character owners string of ``stats()``.
    """
    seats = [-1 if ch == "." else int(ch) for ch in owners] if isinstance(owners, str) else owners
    if len(seats) != SIZE * SIZE:
        raise ValueError(f"owners must list 64 squares, got {len(seats)}")
    masks = [0] * players
    for sq, seat in enumerate(seats):
        if seat >= 0:
            masks[seat] |= 1 << sq
    return [seat_score(m, values, mode) for m in masks]
