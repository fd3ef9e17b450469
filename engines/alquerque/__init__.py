"""Alquerque: rules on 25-bit bitboards and the easy / medium / hard computer players."""

from engines.alquerque.agents import AGENTS
from engines.alquerque.rules import AlquerqueGame, AlquerqueState

GAME = AlquerqueGame

__all__ = ["AGENTS", "GAME", "AlquerqueGame", "AlquerqueState"]
