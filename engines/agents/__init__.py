"""Players that work on any game through the State contract."""

from engines.agents.alphabeta import AlphaBetaAgent
from engines.agents.ismcts import ISMCTS, IsMctsAgent
from engines.agents.mcts import MctsAgent
from engines.agents.random_agent import RANDOM, RandomAgent
from engines.core import AgentType

AGENTS: tuple[AgentType, ...] = (RANDOM, ISMCTS)
"""The ``mcts`` and ``alphabeta`` agents, which pick the Python search or the compiled one, are
declared with the compiled searches (:mod:`engines.compiled.choose_mcts`,
:mod:`engines.compiled.choose_alphabeta`); ``ismcts`` plays only games that declare hidden
information."""

__all__ = ["AGENTS", "AlphaBetaAgent", "IsMctsAgent", "MctsAgent", "RandomAgent"]
