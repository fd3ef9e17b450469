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

from collections.abc import Sequence
from typing import Any

from engines.core import shown

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
"""Layouts that may be passed by name."""

Layout = tuple[int, ...]
"""A normalised layout: 64 positive ints in printed order (row 8 first)."""


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


def normalise_layout(value: Any) -> Layout:
    """Check a layout option and return it as 64 ints in printed order (row 8 first): any
    layout of whole numbers in range is allowed (decision V2, docs/rules/alveoles.md).

    Accepts a layout name (``"classic"``), 8 rows of 8 integers (row 8 first) or a flat list of 64
    integers in the same order. Raises ``ValueError`` naming the row, column and problem.
    """
    if isinstance(value, str):
        name = value.strip().lower()
        if name not in NAMED:
            raise ValueError(
                f"unknown layout {value!r}; give a name ({', '.join(sorted(NAMED))}) "
                "or 8 rows of 8 positive integers, row 8 first"
            )
        return tuple(v for row in NAMED[name] for v in row)
    if not isinstance(value, Sequence):
        raise ValueError(
            f"layout must be a name or 8 rows of 8 positive integers, not {type(value).__name__}"
        )
    items = list(value)
    if len(items) == CELLS and not any(isinstance(x, list | tuple) for x in items):
        return tuple(
            _value(x, f"layout value {i + 1} (square {FILES[i % SIZE]}{SIZE - i // SIZE})")
            for i, x in enumerate(items)
        )
    if len(items) != SIZE:
        raise ValueError(
            f"layout has {len(items)} rows; it needs 8 rows of 8 values (row 8 first), or 64 values"
        )
    out: list[int] = []
    for r, row in enumerate(items):
        board_row = SIZE - r
        if isinstance(row, str) or not isinstance(row, Sequence):
            raise ValueError(
                f"layout row {r + 1} (board row {board_row}) is not a list of 8 values: {row!r}"
            )
        if len(row) != SIZE:
            raise ValueError(
                f"layout row {r + 1} (board row {board_row}) has {len(row)} values; it needs 8"
            )
        for c, raw in enumerate(row):
            where = f"layout row {r + 1} (board row {board_row}), column {FILES[c]}"
            out.append(_value(raw, where))
    return tuple(out)


def layout_record(layout: Layout) -> str | list[list[int]]:
    """How a batch stores a normalised layout: its name when it has one, else 8 rows of 8
    values, row 8 first (the form the option is given in)."""
    name = layout_name(layout)
    if name is not None:
        return name
    return [list(layout[r * SIZE : (r + 1) * SIZE]) for r in range(SIZE)]


def square_values(layout: Layout) -> tuple[int, ...]:
    """Values in square order (``a1 … h1, a2 … h2, …``) from a normalised printed-order layout."""
    return tuple(layout[(SIZE - 1 - sq // SIZE) * SIZE + sq % SIZE] for sq in range(CELLS))


def value_tiers(values: Sequence[int]) -> list[int]:
    """The distinct square values, highest first (classic: ``[50, 30, 20, 15, 10, 5, 1]``)."""
    return sorted(set(values), reverse=True)


def layout_name(layout: Layout) -> str | None:
    """The name of a normalised layout if it is a named one, else ``None``."""
    for name, rows in NAMED.items():
        if layout == tuple(v for row in rows for v in row):
            return name
    return None
