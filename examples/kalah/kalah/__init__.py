"""Kalah for playtester: the module the entry point ``kalah`` names."""

from kalah.rules import KalahGame, KalahState
from kalah.solver import PERFECT

CONTRACT_VERSION = 1
GAME = KalahGame
AGENTS = (PERFECT,)

__all__ = ["AGENTS", "CONTRACT_VERSION", "GAME", "KalahGame", "KalahState"]
