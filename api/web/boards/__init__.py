"""Board renderers of the replay page, one per game, in one registry.

A renderer is a function ``render(state, last_move) -> str``: it receives the engine's
``State`` after some ply (built by replaying the stored moves with the engine) and the move
just played in the game's notation (``None`` before the first move), and returns one
``<svg>`` element as text, with a ``viewBox`` and no fixed pixel size (the page scales it),
a ``<title>`` describing the position, and seats coloured with ``SEAT_COLOURS``. It reads the
state only through the engine's public read API and does no I/O.

A game adds its board by writing ``api/web/boards/<game>.py`` with such a ``render`` and one
line in ``RENDERERS`` below; a game without one still replays, with its move list and scores
and the engine's text board (``str(state)``).
"""

from __future__ import annotations

from collections.abc import Callable

from api.web.boards import abalone, alhambra, alquerque, alveoles
from api.web.boards.svg import SEAT_COLOURS
from engines.core import State

BoardRenderer = Callable[[State, str | None], str]
"""``(state after a ply, the move just played or None) -> "<svg ...>...</svg>"``."""

RENDERERS: dict[str, BoardRenderer] = {
    "abalone": abalone.render,
    "alhambra": alhambra.render,
    "alquerque": alquerque.render,
    "alveoles": alveoles.render,
}
"""Board renderer of each game, by the game's registry name."""


def renderer_for(game: str) -> BoardRenderer | None:
    """The board renderer of ``game``, or ``None`` when it has none yet."""
    return RENDERERS.get(game)


__all__ = ["RENDERERS", "SEAT_COLOURS", "BoardRenderer", "renderer_for"]
