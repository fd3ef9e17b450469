"""The compiled search core: a UCT search over the games' numba kernels.

Importing it registers the compiled backend of the generic ``mcts`` agent for every game with
a kernel (:func:`engines.agents.mcts.register_compiled`); the registry imports it with the
agent modules. It also brings the Les Alvéoles ``expert`` level.
"""

from engines.agents.mcts import register_compiled
from engines.compiled.agent import EXPERT, KERNELS, CompiledMctsAgent
from engines.core import AgentType

for _name in KERNELS:
    register_compiled(_name, CompiledMctsAgent)

AGENTS: tuple[AgentType, ...] = (EXPERT,)

__all__ = ["AGENTS", "KERNELS", "CompiledMctsAgent"]
