"""Players that work on any game through the State contract."""

from engines.agents.alphabeta import ALPHABETA, AlphaBetaAgent
from engines.agents.mcts import MCTS, MctsAgent
from engines.agents.random_agent import RANDOM, RandomAgent
from engines.core import AgentType

AGENTS: tuple[AgentType, ...] = (RANDOM, MCTS, ALPHABETA)

__all__ = ["AGENTS", "AlphaBetaAgent", "MctsAgent", "RandomAgent"]
