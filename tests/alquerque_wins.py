"""Alquerque positions with exactly one winning first move, for the searches' tests: a win on
the spot, and forced wins in three plies. Each row: White's points, Black's points, the move
that wins (White to move)."""

from __future__ import annotations

WINNING_POSITIONS: list[tuple[list[str], list[str], str]] = [
    (["a1", "e1"], ["b2", "d1"], "e1xc1xa3"),
    (["d1", "c1"], ["e2", "b4"], "d1-d2"),
    (["d3", "e4"], ["c5", "d5"], "e4-e5"),
    (["a5", "b1", "a3"], ["c3", "b3"], "a5-b5"),
]
