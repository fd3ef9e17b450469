"""Players that work on any game through the State contract."""

from engines.agents.alphabeta import AlphaBetaAgent
from engines.agents.mcts import MctsAgent
from engines.agents.random_agent import RANDOM, RandomAgent
from engines.core import AgentType

AGENTS: tuple[AgentType, ...] = (RANDOM,)
"""The ``mcts`` and ``alphabeta`` agents, which pick the Python search or the compiled one, are
declared with the compiled searches (:mod:`engines.compiled.choose_mcts`,
:mod:`engines.compiled.choose_alphabeta`)."""

__all__ = ["AGENTS", "AlphaBetaAgent", "MctsAgent", "RandomAgent"]
