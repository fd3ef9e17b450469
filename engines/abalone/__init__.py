"""Abalone: rules on 61-cell bitboards, two or three players, and its computer players."""

from engines.abalone.agents import AGENTS
from engines.abalone.rules import AbaloneGame, AbaloneState

GAME = AbaloneGame

__all__ = ["AGENTS", "GAME", "AbaloneGame", "AbaloneState"]
