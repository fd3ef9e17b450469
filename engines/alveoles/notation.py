"""Board geometry and groove notation of Les Alvéoles, precomputed at import.

Squares are numbered ``a1 = 0, b1 = 1, …, h1 = 7, a2 = 8, …, h8 = 63`` (row-major from the
bottom-left, the order of the golden file's owner strings).

Grooves (actions) are numbered ``0 … 143`` in this fixed order:

* ``0 … 71`` — horizontal grooves: ``8 * k + c`` for horizontal line ``k`` (``0`` = bottom border,
  ``k`` = the line above row ``k``) and column ``c`` (``a = 0``). So ``a1S = 0``, ``h1S = 7``,
  ``a1N = 8``, ``h8N = 71``.
* ``72 … 143`` — vertical grooves: ``72 + 9 * r + j`` for row ``r`` (row 1 = 0) and vertical line
  ``j`` (``0`` = left border, ``j`` = the line right of column ``j``). So ``a1W = 72``,
  ``a1E = 73``, ``h1E = 80``, ``h8E = 143``.

A groove is written ``<square><side>`` with side ``N E S W``; an interior groove has two names
(``d4N = d5S``). The canonical name is ``N``/``E`` of a square, except ``S`` on the bottom border
and ``W`` on the left border.
"""

from __future__ import annotations

from typing import TypeAlias

from engines.alveoles.layouts import FILES, SIZE

Square: TypeAlias = int
Groove: TypeAlias = int

NUM_SQUARES = SIZE * SIZE
NUM_GROOVES = 2 * SIZE * (SIZE + 1)
HORIZONTAL = SIZE * (SIZE + 1)
"""Number of horizontal grooves; vertical grooves start at this index."""


def square_name(sq: Square) -> str:
    """``0 -> "a1"``, ``63 -> "h8"``."""
    return f"{FILES[sq % SIZE]}{sq // SIZE + 1}"


def _sides(sq: Square) -> dict[str, Groove]:
    r, c = divmod(sq, SIZE)
    return {
        "S": SIZE * r + c,
        "N": SIZE * (r + 1) + c,
        "W": HORIZONTAL + (SIZE + 1) * r + c,
        "E": HORIZONTAL + (SIZE + 1) * r + c + 1,
    }


SQUARE_GROOVES: tuple[tuple[Groove, Groove, Groove, Groove], ...] = tuple(
    (s["N"], s["E"], s["S"], s["W"]) for s in (_sides(sq) for sq in range(NUM_SQUARES))
)
"""The four grooves of each square, as (N, E, S, W)."""


def _touching() -> tuple[tuple[Square, ...], ...]:
    lists: list[list[Square]] = [[] for _ in range(NUM_GROOVES)]
    for sq, grooves in enumerate(SQUARE_GROOVES):
        for g in grooves:
            lists[g].append(sq)
    return tuple(tuple(x) for x in lists)


GROOVE_SQUARES: tuple[tuple[Square, ...], ...] = _touching()
"""The one or two squares each groove borders."""

SQUARE_GROOVE_MASK: tuple[int, ...] = tuple(
    sum(1 << g for g in grooves) for grooves in SQUARE_GROOVES
)
"""Bitmask of each square's four grooves."""

ALL_GROOVES = (1 << NUM_GROOVES) - 1
"""Bitmask of every groove."""

# Square codes. The state keeps one int per square, its *code*: the number of plates around the
# square in the low 3 bits (``code & 7``) and the sum of those plates' groove numbers above them.
# Placing a plate adds the same amount to both squares it borders, and a 3-sided square's missing
# groove is ``GROOVE_SUM[sq] - (code >> 3)``, with no look at its neighbours. The state and the
# heuristics' look-ahead both update codes with these two tables.

GROOVE_SUM: tuple[int, ...] = tuple(sum(g) for g in SQUARE_GROOVES)
"""Sum of each square's four groove numbers."""

PLATE_CODE: tuple[int, ...] = tuple(1 + (g << 3) for g in range(NUM_GROOVES))
"""What a plate in each groove adds to the code of a square it borders: one plate, and ``g``."""


def _names() -> tuple[tuple[str, ...], dict[str, Groove]]:
    canonical = [""] * NUM_GROOVES
    lookup: dict[str, Groove] = {}
    for sq in range(NUM_SQUARES):
        r, c = divmod(sq, SIZE)
        for side, g in _sides(sq).items():
            lookup[f"{square_name(sq)}{side}"] = g
            preferred = side in "NE" or (side == "S" and r == 0) or (side == "W" and c == 0)
            if preferred:
                canonical[g] = f"{square_name(sq)}{side}"
    return tuple(canonical), lookup


GROOVE_NAMES, _LOOKUP = _names()
"""Canonical name of each groove (``GROOVE_NAMES[0] == "a1S"``)."""

NOTATION_HELP = "a groove like 'd4N': a square a1–h8 then a side N, E, S or W"


def parse_groove(text: str) -> Groove | None:
    """The groove a name denotes (any of its names, any case), or ``None`` if it is not one."""
    key = text.strip()
    if len(key) != 3:
        return None
    return _LOOKUP.get(key[:2].lower() + key[2].upper())


def groove_name(groove: Groove) -> str:
    """The canonical name of a groove; ``ValueError`` outside ``0 … 143``."""
    if not 0 <= groove < NUM_GROOVES:
        raise ValueError(f"groove {groove} is outside 0–{NUM_GROOVES - 1}")
    return GROOVE_NAMES[groove]


def board_squares(rows: int, cols: int) -> tuple[Square, ...]:
    """The squares of a ``rows`` × ``cols`` board, ascending: the lower-left corner of the
    8 × 8 numbering (decision V5), so every square and groove keeps its number and name."""
    return tuple(SIZE * r + c for r in range(rows) for c in range(cols))


def board_grooves(rows: int, cols: int) -> tuple[Groove, ...]:
    """The grooves of a ``rows`` × ``cols`` board, ascending."""
    return tuple(sorted({g for sq in board_squares(rows, cols) for g in SQUARE_GROOVES[sq]}))
