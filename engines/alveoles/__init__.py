"""Les Alvéoles: rules (``GAME``) and its own computer players (``AGENTS``).

``greedy`` and the ``value`` strategy with its presets (``hunter``, ``white_pusher``,
``bonus_builder``, ``cautious``) live here; the generic ``mcts`` and ``alphabeta`` players play it
through the state's ``evaluate``/``rollout_action``/``ordered_actions`` hooks.
"""

from engines.alveoles.agents import AGENTS, GreedyAgent, ValueAgent
from engines.alveoles.rules import Alveoles, AlveolesState

GAME = Alveoles
RENDER_BOARD = "api.web.boards.alveoles:render"
REPORT = "analysis.games.alveoles:REPORT"
"""The board and report section, by reference: engines imports neither api nor analysis."""

__all__ = [
    "AGENTS",
    "GAME",
    "RENDER_BOARD",
    "REPORT",
    "Alveoles",
    "AlveolesState",
    "GreedyAgent",
    "ValueAgent",
]
