"""Alhambra: rules (``GAME``) and its own computer players (``AGENTS``).

``greedy`` with its presets (``builder``, ``collector``, ``banker``) and the information-set
``mcts`` live here; the generic ``random`` plays it through the state contract.
"""

from engines.alhambra.agents import AGENTS
from engines.alhambra.rules import Alhambra, AlhambraState

GAME = Alhambra
RENDER_BOARD = "api.web.boards.alhambra:render"
REPORT = "analysis.games.alhambra:REPORT"
"""The board and report section, by reference: engines imports neither api nor analysis."""

__all__ = ["AGENTS", "GAME", "RENDER_BOARD", "REPORT", "Alhambra", "AlhambraState"]
