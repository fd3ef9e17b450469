"""Alquerque: rules on 25-bit bitboards and the easy / medium / hard computer players."""

from engines.alquerque.agents import AGENTS
from engines.alquerque.rules import AlquerqueGame, AlquerqueState

GAME = AlquerqueGame
RENDER_BOARD = "api.web.boards.alquerque:render"
REPORT = "analysis.games.alquerque:REPORT"
"""The board and report section, by reference: engines imports neither api nor analysis."""

__all__ = ["AGENTS", "GAME", "RENDER_BOARD", "REPORT", "AlquerqueGame", "AlquerqueState"]
