"""Alhambra: rules (``GAME``) and its own computer players (``AGENTS``).

``greedy`` with its presets (``builder``, ``collector``, ``banker``) and the information-set
``mcts`` live here; the generic ``random`` plays it through the state contract.
"""

from engines.alhambra.agents import AGENTS
from engines.alhambra.rules import Alhambra, AlhambraState

GAME = Alhambra

__all__ = ["AGENTS", "GAME", "Alhambra", "AlhambraState"]
