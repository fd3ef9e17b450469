"""The errors the engines raise about bad input: always safe to show a user.

``OptionError`` carries the field at fault, so the API can answer 422 naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SHOWN_CHARS = 40
"""Longest rendering of a user's value inside an error message."""


def shown(value: Any) -> str:
    """``repr(value)`` cut to ``SHOWN_CHARS`` characters: a 4,000-digit number is not echoed."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


class GameError(ValueError):
    """Base of every error the engines raise about bad input; always safe to show a user."""


class OptionError(GameError):
    """A game or agent option is unknown, of the wrong type, or out of range.

    ``field`` names the offending option (``"players"``, ``"layout"``, ``"agents[1].depth"``)
    so an API can answer 422 pointing at it.
    """

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class UnknownGameError(OptionError):
    def __init__(self, name: str, known: Sequence[str]) -> None:
        super().__init__(
            f"unknown game {shown(name)}; known games: {', '.join(sorted(known))}", field="game"
        )


class UnknownAgentError(OptionError):
    def __init__(self, name: str, game: str, known: Sequence[str], *, field: str = "agent") -> None:
        super().__init__(
            f"unknown agent {shown(name)} for {game}; known agents: {', '.join(sorted(known))}",
            field=field,
        )


class IllegalActionError(GameError):
    """An action (int or text) that is not legal in the given position."""

    def __init__(self, game: str, action: str, position: str, reason: str = "") -> None:
        why = f" ({reason})" if reason else ""
        super().__init__(f"{game}: illegal action {action!r}{why} in position:\n{position}")
        self.game = game
        self.action = action
        self.position = position


class NotationError(GameError):
    """Text that does not parse as an action of this game at all."""

    def __init__(self, game: str, text: str, expected: str) -> None:
        super().__init__(f"{game}: cannot read {text!r} as an action; expected {expected}")
        self.game = game
        self.text = text
