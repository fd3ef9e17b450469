"""Players that work on any game through the State contract."""

from engines.agents.random_agent import RANDOM, RandomAgent
from engines.core import AgentType

AGENTS: tuple[AgentType, ...] = (RANDOM,)

__all__ = ["AGENTS", "RandomAgent"]
