"""What is stored about one played match: the records the runner builds and the writer stores.

Plain data, no database: ``workers.play`` builds these, ``storage.crud.write_chunk`` turns them
into rows of the ``match`` and ``seat_result`` tables (``storage.models.MATCH_COLUMNS`` and
``SEAT_COLUMNS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple


class SeatRecord(NamedTuple):
    """One seat of one match, in the column order of the seat_result table."""

    seat: int
    agent_label: str
    agent_index: int
    points: float
    win_share: float
    rank: int


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
