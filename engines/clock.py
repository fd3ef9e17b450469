"""Blitz clocks: a match's ``time_control`` and how a player spends it.

A time control ``"60+1"`` gives each player 60 seconds for the game and adds 1 second to its
clock after each of its moves (Fischer increment). ``play_match`` charges each seat the wall
time of its ``step``; a player whose step takes longer than its clock holds loses on time
(``Ending.TIME``). Before each step it tells an agent that offers ``set_move_time`` how long
this move may take (``TimeControl.move_time``), and the searches stop there or at their node
or iteration budget, whichever comes first. A clocked match is therefore not reproducible
from its seed (how far a search gets depends on the machine); its stored moves still replay
it exactly.

``TimeControl.parse`` is the one place a time control is read and validated; its errors name
the request field ``options.time_control``.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import Any

from engines.errors import OptionError, shown

FIELD = "options.time_control"
"""Where a request gives the time control (the HTTP body's ``options``, the CLI's
``--time-control``): every refusal names it."""
MAX_BASE = 3600.0
"""At most an hour a player for the game: a match's length bounds a worker's time limits."""
MAX_INCREMENT = 60.0
"""At most a minute added per move."""
MAX_TEXT = 32
_NUMBER = r"([0-9]{1,7})(?:\.([0-9]{1,3}))?"
"""ASCII digits only: `\\d` and `int` would also read Arabic and full-width ones."""
_PATTERN = re.compile(rf"{_NUMBER}(?:\+{_NUMBER})?")
MOVES_TO_GO = 30
"""Moves a player plans its clock over when the game may last longer (the usual assumption of
chess programs playing sudden death)."""
INCREMENT_SHARE = 0.8
"""Share of the increment a move may spend on top of its share of the clock."""
SAFE_SHARE = 0.5
"""A move never plans on more than this share of the time left: a search overshoots its
allowance by up to one check, and the rest of the move (listing moves, encoding the position)
is charged too."""
NO_DEADLINE = 0.0
"""A deadline of 0 means none (the same convention as ``engines.kernel_clock``)."""
EXAMPLE = "'60+1' (60 seconds a player for the game, 1 second added after each move)"


def _seconds(whole: str, fraction: str | None) -> float:
    return int(whole) + (int(fraction.ljust(3, "0")) / 1000 if fraction else 0.0)


def _text(seconds: float) -> str:
    return f"{seconds:.3f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class TimeControl:
    """Seconds a player has for the game (``base``) and seconds added after each of its
    moves (``increment``), both in whole milliseconds."""

    base: float
    increment: float = 0.0

    @classmethod
    def parse(cls, value: Any, *, field: str = FIELD) -> TimeControl:
        """Read ``"60+1"``, ``"60"`` (no increment) or ``"0.5+0.05"``: decimal seconds with
        at most three decimals (a JSON number is the seconds alone, ``60`` as ``"60"``);
        anything else (negative, ``nan``, ``inf``, exponents, other text, a zero clock, over
        ``MAX_BASE`` or ``MAX_INCREMENT``) raises ``OptionError`` naming ``field``."""
        wrong = f"{field} must be text like {EXAMPLE}, not {shown(value)}"
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = repr(value)  # refused below unless plain decimal seconds
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            raise OptionError(wrong, field=field)
        found = _PATTERN.fullmatch(value.strip())
        if found is None:
            raise OptionError(wrong, field=field)
        base = _seconds(found.group(1), found.group(2))
        increment = _seconds(found.group(3), found.group(4)) if found.group(3) else 0.0
        if base <= 0:
            raise OptionError(
                f"{field} must give each player some time for the game, not {shown(value)}",
                field=field,
            )
        if base > MAX_BASE:
            raise OptionError(
                f"{field} may give at most {MAX_BASE:g} seconds a player, not {_text(base)}",
                field=field,
            )
        if increment > MAX_INCREMENT:
            raise OptionError(
                f"{field} may add at most {MAX_INCREMENT:g} seconds a move, not {_text(increment)}",
                field=field,
            )
        return cls(base, increment)

    @property
    def text(self) -> str:
        """The canonical text a batch stores: ``"60+1"``, ``"0.5+0.05"``."""
        return f"{_text(self.base)}+{_text(self.increment)}"

    def match_bound(self, players: int, max_plies: int) -> float:
        """The most clock time one match can use: every seat's base time, plus an increment
        for every ply (a flagged move may overrun by what its search overshoots)."""
        return players * self.base + self.increment * max_plies

    def move_time(self, remaining: float, moves_to_go: int) -> float:
        """How long the next move may take with ``remaining`` seconds on the clock and about
        ``moves_to_go`` moves of this player left: its share of the clock plus most of the
        increment, never more than ``SAFE_SHARE`` of what is left."""
        if remaining <= 0:
            return 0.0
        share = remaining / max(1, moves_to_go) + INCREMENT_SHARE * self.increment
        return min(share, SAFE_SHARE * remaining)


def describe() -> dict[str, Any]:
    """The match option ``time_control`` as ``GET /games`` and ``playtester games`` list it
    (every game takes it; a request gives it among the options)."""
    return {
        "name": "time_control",
        "type": "str",
        "default": None,
        "doc": f"the players' clocks, e.g. {EXAMPLE}; a player whose clock runs out loses; "
        "clocked matches are not reproducible from their seed (their stored moves replay "
        "them); none by default",
        "example": "60+1",
        "max_seconds": MAX_BASE,
        "max_increment": MAX_INCREMENT,
    }


def moves_to_go(plies_left: int, players: int) -> int:
    """Moves a player expects to make when at most ``plies_left`` plies remain: its share of
    them, at most ``MOVES_TO_GO`` and at least one."""
    return max(1, min(MOVES_TO_GO, math.ceil(plies_left / max(1, players))))


def parse_time_control(value: Any, *, field: str = FIELD) -> TimeControl | None:
    """``TimeControl.parse``, with ``None`` (no clock) passed through."""
    return None if value is None else TimeControl.parse(value, field=field)


# ---------------------------------------------------------------- the searches' side


def deadline_after(seconds: float | None) -> float:
    """The ``time.perf_counter`` reading ``seconds`` from now, or ``NO_DEADLINE`` for None."""
    if seconds is None:
        return NO_DEADLINE
    return time.perf_counter() + max(0.0, seconds)


def past(deadline: float) -> bool:
    """Whether ``deadline`` (a ``perf_counter`` reading, or ``NO_DEADLINE``) has passed."""
    return deadline != NO_DEADLINE and time.perf_counter() >= deadline


class MoveTimer:
    """What a searching agent keeps of ``set_move_time``: the allowance of its next move."""

    __slots__ = ("seconds",)

    def __init__(self) -> None:
        self.seconds: float | None = None

    def set(self, seconds: float | None) -> None:
        """The next moves' allowance: a finite number of seconds, not negative (0.0: no time
        at all, one iteration or depth), or ``None`` for the search's budget alone."""
        if seconds is not None and not (math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"a move time must be finite and not negative, not {seconds!r}")
        self.seconds = None if seconds is None else float(seconds)

    def deadline(self) -> float:
        """The deadline of a search starting now (``NO_DEADLINE`` without an allowance)."""
        return deadline_after(self.seconds)
