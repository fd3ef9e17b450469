"""The agents built on the compiled search core: ``mcts`` (a UCT search over the game's numba
kernel where it has one, else the Python search), ``alphabeta`` (likewise, for two players
with perfect information), Les Alvéoles' ``expert``, Abalone's ``alphabeta`` (with its
evaluation's weights) and ``expert``, and Alhambra's information-set ``mcts`` and ``expert``
(:mod:`engines.compiled.alhambra`).

Which games have a kernel is declared once, in :mod:`engines.compiled.kernels`. numba is
loaded only when a compiled search is first built, so a process that never uses one (the CLI
listing games, a worker playing other agents) starts without it.
"""

from __future__ import annotations

from engines.compiled import abalone, alhambra
from engines.compiled.alphabeta import ALPHABETA
from engines.compiled.expert import EXPERT
from engines.compiled.mcts import MCTS
from engines.core import AgentType

AGENTS: tuple[AgentType, ...] = (
    *(MCTS, ALPHABETA, EXPERT, abalone.ALPHABETA, abalone.EXPERT),
    *(alhambra.MCTS, alhambra.EXPERT),
)

__all__ = ["AGENTS"]
