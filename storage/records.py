"""What is stored about one played match: the records the runner builds and the writer stores.

Plain data, no database: ``workers.play`` builds these, ``storage.crud.write_chunk`` turns them
into rows of the ``match`` and ``seat_result`` tables (``storage.models.MATCH_COLUMNS`` and
``SEAT_COLUMNS``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

OPENING_PLIES = 10
"""Plies that make a match's opening when its batch declares no opening length of its own."""


def move_ms(seconds: Sequence[float]) -> tuple[float, ...]:
    """Move times as stored: milliseconds to the microsecond."""
    return tuple(round(s * 1000.0, 3) for s in seconds)


class SeatRecord(NamedTuple):
    """One seat of one match, in the column order of the seat_result table."""

    seat: int
    agent_label: str
    agent_index: int
    points: float
    win_share: float
    rank: int
    move_ms: tuple[float, ...] | None = None
    """Milliseconds each of the seat's moves took, in a match with clocks; else None."""


@dataclass(slots=True)
class MatchRecord:
    """Everything stored about one match; ``ok`` False means it raised and ``error`` says how."""

    match_index: int
    seed: int
    ok: bool
    plies: int
    ended_by: str
    moves: tuple[str, ...]
    stats: dict[str, Any]
    duration: float
    error: str | None = None
    seats: list[SeatRecord] = field(default_factory=list)
    first_seat: int | None = None
    """The seat that moved first (turn position 0); None for a match that was not played."""
    opening: int | None = None
    """``opening_key`` of the match's first plies: matches that share it share an opening."""


def opening_key(moves: Sequence[str], plies: int = OPENING_PLIES) -> int:
    """A signed 63-bit key of the first ``plies`` moves (fewer when the match was shorter).

    Matches with equal keys began with the same moves, which is what makes them dependent
    when the players are deterministic: the analysis clusters on it. Stable across processes,
    platforms and Python versions.
    """
    text = "\n".join(moves[:plies]).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big") >> 1


def join_moves(moves: tuple[str, ...] | list[str]) -> str:
    """The ``moves`` column of a match: each move followed by a newline.

    A move's text may hold spaces (Alhambra's ``buy florin pay florin:4+florin:5``), so moves
    are not joined by spaces; rows stored before this read back through ``split_moves`` too.
    """
    return "".join(f"{move}\n" for move in moves)


def split_moves(text: str | None) -> list[str]:
    """The moves of a stored ``moves`` column (newline-ended, or space-separated in older
    rows, whose moves never held a space)."""
    if not text:
        return []
    return text.splitlines() if "\n" in text else text.split()
