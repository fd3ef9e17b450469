"""Abalone: rules on 61-cell bitboards, two or three players, and its computer players."""

from engines.abalone.agents import AGENTS
from engines.abalone.rules import AbaloneGame, AbaloneState

GAME = AbaloneGame
RENDER_BOARD = "api.web.boards.abalone:render"
REPORT = "analysis.games.abalone:REPORT"
"""The board and report section, by reference: engines imports neither api nor analysis."""

__all__ = ["AGENTS", "GAME", "RENDER_BOARD", "REPORT", "AbaloneGame", "AbaloneState"]
