"""The three scorings: majorities per building type, then each player's longest wall."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from engines.alhambra.tiles import TYPES

MAJORITY_POINTS: Final = (
    # round 1: 1st; round 2: 1st, 2nd; round 3: 1st, 2nd, 3rd — rows in ``TYPES`` order.
    ((1,), (2,), (3,), (4,), (5,), (6,)),
    ((8, 1), (9, 2), (10, 3), (11, 4), (12, 5), (13, 6)),
    ((16, 8, 1), (17, 9, 2), (18, 10, 3), (19, 11, 4), (20, 12, 5), (21, 13, 6)),
)
"""``MAJORITY_POINTS[round][type]``: points for each place, round 0 being scoring card 1."""
ROUNDS: Final = 3


def places(counts: Sequence[int], table: Sequence[int]) -> list[int]:
    """Points each holder of ``counts`` tiles of one type earns from ``table`` (points by place).

    Holders of no tile score nothing. Tied holders add the points of the places they occupy
    together and share them, rounded down; the next holder takes the place after them.
    """
    out = [0] * len(counts)
    levels = sorted({c for c in counts if c > 0}, reverse=True)
    place = 0
    for level in levels:
        if place >= len(table):
            break
        tied = [i for i, c in enumerate(counts) if c == level]
        pool = sum(table[place : place + len(tied)])
        for i in tied:
            out[i] = pool // len(tied)
        place += len(tied)
    return out


def majority_points(type_counts: Sequence[Sequence[int]], round_index: int) -> list[int]:
    """Majority points of each holder for scoring ``round_index`` (0, 1, 2).

    ``type_counts[h][t]`` is holder ``h``'s number of tiles of type ``t`` in their Alhambra (the
    two-player collector is one more holder).
    """
    table = MAJORITY_POINTS[round_index]
    totals = [0] * len(type_counts)
    for t in range(len(TYPES)):
        won = places([counts[t] for counts in type_counts], table[t])
        for h, points in enumerate(won):
            totals[h] += points
    return totals
