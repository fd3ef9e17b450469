"""Square-value layouts of Les Alvéoles, as data, and their validation.

A layout is given the way ``docs/rules/alveoles.md`` prints it: **8 rows of 8 whole numbers
from 1 to ``MAX_VALUE`` (10⁶), row 8 (the top) first**, columns ``a`` to ``h`` left to right. A
flat list of 64 integers is read in the same printed order (``a8 … h8, a7 … h7, …, a1 … h1``).
The named layout ``classic`` is the reconstruction printed there (decision V1), and any other
layout may be given (decision V2).

The option value is normalised to a tuple of 64 ints in that printed order, so
``load_game(**game.params())`` rebuilds the same game. The rules work in square order instead
(``a1 … h1, a2 … h2, …``); :func:`square_values` converts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

from engines.core import shown
from engines.options import NO_SYMMETRY

SIZE = 8
CELLS = SIZE * SIZE
FILES = "abcdefgh"
MAX_VALUE = 1_000_000
"""Largest square value: far above any designed layout, and small enough that every score,
difference and statistic over a batch stays an exact float."""

CLASSIC: tuple[tuple[int, ...], ...] = (
    (15, 1, 1, 10, 1, 1, 1, 15),  # row 8
    (1, 30, 1, 5, 5, 1, 1, 1),  # row 7
    (1, 1, 20, 1, 1, 20, 1, 1),  # row 6
    (1, 5, 1, 50, 50, 1, 5, 1),  # row 5
    (1, 5, 1, 50, 50, 1, 5, 1),  # row 4
    (1, 1, 20, 1, 1, 20, 1, 1),  # row 3
    (1, 1, 1, 5, 5, 1, 30, 1),  # row 2
    (15, 1, 1, 1, 10, 1, 1, 15),  # row 1
)
"""The default layout (decision V1, docs/rules/alveoles.md), row 8 first; 24 numbered squares,
40 white, 500 points."""

NAMED: dict[str, tuple[tuple[int, ...], ...]] = {"classic": CLASSIC}
"""Layouts that may be passed by name (8 × 8; ``classic-RxC`` derives smaller ones)."""

HALF_TURN = "half_turn"
NAMED_SYMMETRY: dict[str, str] = {"classic": HALF_TURN}
"""The symmetry each named layout declares; :func:`check_symmetry` holds it to it."""

MIN_SIDE = 2
"""The smallest board side in squares (decision V5): a 1-square-wide strip has no interior."""

Layout = tuple[int, ...] | tuple[tuple[int, ...], ...]
"""A normalised layout, printed order (row 8, the top, first): the classic 8 × 8 board as a flat
tuple of 64 values (the form batches have always stored), any other size as its rows."""

_NAME = re.compile(r"^([a-z_]+)(?:-(\d+)x(\d+))?$")


def _value(raw: Any, where: str) -> int:
    """One square value: a whole number from 1 to ``MAX_VALUE`` (JSON floats like 5.0 are
    accepted)."""
    if isinstance(raw, bool):
        raise ValueError(f"{where}: {raw!r} is not a whole number")
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if not isinstance(raw, int):
        raise ValueError(f"{where}: {shown(raw)} is not a whole number")
    if raw < 1:
        raise ValueError(
            f"{where}: {shown(raw)} is not a positive value (every square is worth ≥ 1)"
        )
    if raw > MAX_VALUE:
        raise ValueError(f"{where}: {shown(raw)} is too large; values are at most {MAX_VALUE}")
    return raw


def classic_window(rows: int, cols: int) -> tuple[tuple[int, ...], ...]:
    """The classic values on a ``rows`` × ``cols`` board (decision V5): the classic layout seen
    through a centred window, rows first (row 8 side); when a side cuts an odd number of
    squares, the extra one comes off the bottom and the right. 8 × 8 gives the classic itself."""
    top = (SIZE - rows) // 2
    left = (SIZE - cols) // 2
    return tuple(tuple(CLASSIC[top + r][left : left + cols]) for r in range(rows))


def _named(value: str) -> Layout:
    match = _NAME.match(value.strip().lower())
    name = match.group(1) if match else None
    if match is None or name not in NAMED:
        raise ValueError(
            f"unknown layout {value!r}; give a name ({', '.join(sorted(NAMED))}), a name with a "
            "board size such as 'classic-3x4' (rows × columns), or rows of positive integers, "
            "top row first"
        )
    if match.group(2) is None:
        return tuple(v for row in NAMED[name] for v in row)
    rows, cols = int(match.group(2)), int(match.group(3))
    _check_side(rows, "rows")
    _check_side(cols, "columns")
    return _packed(classic_window(rows, cols))


def _check_side(n: int, what: str) -> None:
    if not MIN_SIDE <= n <= SIZE:
        raise ValueError(f"a board has {MIN_SIDE} to {SIZE} {what} of squares, not {n}")


def _packed(rows: tuple[tuple[int, ...], ...]) -> Layout:
    """The normalised form: flat for 8 × 8, rows for any other size."""
    if len(rows) == SIZE and len(rows[0]) == SIZE:
        return tuple(v for row in rows for v in row)
    return rows


def normalise_layout(value: Any) -> Layout:
    """Check a layout option and return it normalised (see :data:`Layout`): any layout of whole
    numbers in range is allowed (decision V2, docs/rules/alveoles.md), on any board of 2 to 8
    rows and columns of squares (decision V5, docs/rules/alveoles.md); its shape is the board.

    Accepts a layout name (``"classic"``, or ``"classic-3x4"`` for 3 rows of 4), rows of
    integers (top row first, every row as long) or a flat list of 64 integers (8 × 8, same
    order). Raises ``ValueError`` naming the row, column and problem.
    """
    if isinstance(value, str):
        return _named(value)
    if not isinstance(value, Sequence):
        raise ValueError(
            f"layout must be a name or rows of positive integers, not {type(value).__name__}"
        )
    items = list(value)
    if len(items) == CELLS and not any(isinstance(x, list | tuple) for x in items):
        return tuple(
            _value(x, f"layout value {i + 1} (square {FILES[i % SIZE]}{SIZE - i // SIZE})")
            for i, x in enumerate(items)
        )
    if not MIN_SIDE <= len(items) <= SIZE:
        raise ValueError(
            f"layout has {len(items)} rows; a board has {MIN_SIDE} to {SIZE} rows of {MIN_SIDE} "
            f"to {SIZE} values (top row first), or give 64 values for 8 × 8"
        )
    height = len(items)
    width: int | None = None
    out: list[tuple[int, ...]] = []
    for r, row in enumerate(items):
        board_row = height - r
        if isinstance(row, str) or not isinstance(row, Sequence):
            raise ValueError(f"layout row {r + 1} (board row {board_row}) is not a list: {row!r}")
        if width is None:
            width = len(row)
            if not MIN_SIDE <= width <= SIZE:
                raise ValueError(
                    f"layout row 1 has {width} values; a board has {MIN_SIDE} to {SIZE} columns"
                )
        elif len(row) != width:
            raise ValueError(
                f"layout row {r + 1} (board row {board_row}) has {len(row)} values; row 1 has "
                f"{width} and every row needs as many"
            )
        out.append(
            tuple(
                _value(raw, f"layout row {r + 1} (board row {board_row}), column {FILES[c]}")
                for c, raw in enumerate(row)
            )
        )
    return _packed(tuple(out))


def layout_rows(layout: Layout) -> tuple[tuple[int, ...], ...]:
    """A normalised layout's rows, top row first."""
    if layout and isinstance(layout[0], tuple):
        return layout
    flat = cast(tuple[int, ...], layout)
    return tuple(flat[r * SIZE : (r + 1) * SIZE] for r in range(SIZE))


def layout_shape(layout: Layout) -> tuple[int, int]:
    """(rows, columns) of the board a normalised layout covers."""
    rows = layout_rows(layout)
    return len(rows), len(rows[0])


def check_symmetry(rows: Sequence[Sequence[int]], symmetry: str) -> None:
    """Raise ``ValueError`` naming the first square that breaks ``symmetry`` (``half_turn``:
    each square worth its image under a half-turn about the board's centre)."""
    if symmetry != HALF_TURN:
        raise ValueError(f"unknown symmetry {symmetry!r}; known: {HALF_TURN}")
    height, width = len(rows), len(rows[0])
    for r in range(height):
        for c in range(width):
            image = rows[height - 1 - r][width - 1 - c]
            if rows[r][c] != image:
                raise ValueError(
                    f"layout is not symmetric under a half-turn: square {FILES[c]}{height - r} "
                    f"is worth {rows[r][c]}, its image {FILES[width - 1 - c]}{r + 1} {image}"
                )


def layout_record(layout: Layout) -> str | list[list[int]]:
    """How a batch stores a normalised layout: its name when it has one, else its rows, top
    row first (the form the option is given in)."""
    name = layout_name(layout)
    if name is not None:
        return name
    return [list(row) for row in layout_rows(layout)]


def square_values(layout: Layout) -> tuple[int, ...]:
    """The 64 values of the 8 × 8 numbering in square order (``a1 … h1, a2 …``) from a
    normalised layout: the board is the lower-left corner of that numbering (decision V5), and
    the squares off the board are worth 0 (no groove of theirs is ever played)."""
    rows = layout_rows(layout)
    height, width = len(rows), len(rows[0])
    out = [0] * CELLS
    for r in range(height):
        for c in range(width):
            out[SIZE * r + c] = rows[height - 1 - r][c]
    return tuple(out)


def value_tiers(values: Sequence[int]) -> list[int]:
    """The distinct square values, highest first (classic: ``[50, 30, 20, 15, 10, 5, 1]``);
    the 0 of squares off a small board is no tier."""
    return sorted({v for v in values if v > 0}, reverse=True)


def layout_name(layout: Layout) -> str | None:
    """The name of a normalised layout if it is a named one (``classic-3x4`` for the classic
    values of a smaller board), else ``None``."""
    rows = layout_rows(layout)
    height, width = len(rows), len(rows[0])
    for name, named_rows in NAMED.items():
        if (height, width) == (SIZE, SIZE):
            if rows == named_rows:
                return name
        elif name == "classic" and rows == classic_window(height, width):
            return f"{name}-{height}x{width}"
    return None


class LayoutSpace:
    """The layouts ``playtester tune``'s ``permute`` space searches (an
    :class:`engines.options.PlacementSpace`): a base layout's values placed anew on its board's
    squares, in printed order (row 8, the top, first), of any size.

    Under ``half_turn`` the squares i and n − 1 − i (a square and its image under a half-turn
    about the centre) take one key and the same value, so every value must occur an even number
    of times; on a board with an odd number of squares (both sides odd) the centre is its own
    image and takes the one value that occurs an odd number of times. A placement is written as
    rows, top row first, the form the option is given in."""

    symmetries = (HALF_TURN, NO_SYMMETRY)

    def values(self, base: Any) -> tuple[int, ...]:
        return tuple(v for row in layout_rows(base) for v in row)

    def cells(self, base: Any, symmetry: str) -> int:
        count = len(self.values(base))
        return count // 2 if _symmetry(symmetry) == HALF_TURN else count

    def decode(self, base: Any, keys: Sequence[float], symmetry: str) -> list[list[int]]:
        width = len(layout_rows(base)[0])
        values = self.values(base)
        count = len(values)
        ordered = sorted(values, reverse=True)
        grid = [0] * count
        if _symmetry(symmetry) == HALF_TURN:
            if count % 2:
                odd = [v for v, n in Counter(values).items() if n % 2]
                if len(odd) != 1:
                    raise ValueError(
                        "a half-turn symmetric layout of an odd number of squares needs every "
                        "value but the centre's an even number of times"
                    )
                grid[count // 2] = odd[0]
                ordered.remove(odd[0])
            pairs = ordered[::2]
            if ordered[1::2] != pairs:
                raise ValueError(
                    "a half-turn symmetric layout needs every value an even number of times"
                )
            _check_keys(keys, count // 2, "half-turn layouts")
            for rank, cell in enumerate(sorted(range(count // 2), key=lambda i: (keys[i], i))):
                grid[cell] = grid[count - 1 - cell] = pairs[rank]
        else:
            _check_keys(keys, count, "layouts")
            for rank, cell in enumerate(sorted(range(count), key=lambda i: (keys[i], i))):
                grid[cell] = ordered[rank]
        return [grid[r : r + width] for r in range(0, count, width)]


def _symmetry(symmetry: str) -> str:
    if symmetry not in LayoutSpace.symmetries:
        raise ValueError(
            f"unknown symmetry {symmetry!r}; known: {', '.join(LayoutSpace.symmetries)}"
        )
    return symmetry


def _check_keys(keys: Sequence[float], count: int, what: str) -> None:
    if len(keys) != count:
        raise ValueError(f"{what} of this board take {count} keys, not {len(keys)}")


LAYOUT_SPACE = LayoutSpace()


for _name, _rows in NAMED.items():
    check_symmetry(_rows, NAMED_SYMMETRY[_name])
