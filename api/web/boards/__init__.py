"""Board renderers of the replay page: each game's own, declared by its game module.

A game's module (the one its ``playtester.games`` entry point names) declares its board as
``RENDER_BOARD`` (``engines.contract``): a function ``render(state, last_move) -> str`` or a
``"module:attribute"`` reference to one. The renderer receives the engine's ``State`` after
some ply (replayed from the stored moves) and the move just played in the game's notation
(``None`` before the first move), and returns one ``<svg>`` element as text, with a ``viewBox``
and no fixed pixel size (the page scales it) and a ``<title>`` describing the position. It
reads the state only through the engine's public read API and does no I/O.

Our games' renderers live here (``api/web/boards/<game>.py``, seats coloured with
``SEAT_COLOURS``) and their game modules name them by reference, since ``engines`` may not
import ``api``; a package's may live anywhere in the package. A game without one still replays,
with its move list and scores and the engine's text board (``str(state)``).
"""

from __future__ import annotations

from api.web.boards.svg import SEAT_COLOURS
from engines.contract import BoardRenderer
from engines.registry import board_renderer


def renderer_for(game: str) -> BoardRenderer | None:
    """The board renderer ``game`` declares, or ``None`` when it has none (or is not an
    installed game). A declared reference that does not resolve raises ``GameLoadError``."""
    return board_renderer(game)


__all__ = ["SEAT_COLOURS", "BoardRenderer", "renderer_for"]
