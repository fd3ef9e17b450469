"""Players that work on any game through the State contract."""

from engines.agents.alphabeta import ALPHABETA, AlphaBetaAgent
from engines.agents.mcts import MctsAgent
from engines.agents.random_agent import RANDOM, RandomAgent
from engines.core import AgentType

AGENTS: tuple[AgentType, ...] = (RANDOM, ALPHABETA)
"""The ``mcts`` agent, which picks the Python search or the compiled one, is declared with the
compiled search (:mod:`engines.compiled.mcts`)."""

__all__ = ["AGENTS", "AlphaBetaAgent", "MctsAgent", "RandomAgent"]
