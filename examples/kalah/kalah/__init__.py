"""Kalah for playtester: the module the entry point ``kalah`` names."""

from kalah.rules import KalahGame, KalahState
from kalah.solver import PERFECT

CONTRACT_VERSION = 1
GAME = KalahGame
AGENTS = (PERFECT,)
RENDER_BOARD = "kalah.board:render"
"""The replay page's board (kalah/board.py), imported only when a board is drawn."""

__all__ = ["AGENTS", "CONTRACT_VERSION", "GAME", "RENDER_BOARD", "KalahGame", "KalahState"]
