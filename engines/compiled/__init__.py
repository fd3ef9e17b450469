"""The compiled search core: a UCT search over the games' numba kernels.

Importing it registers the compiled backend of the generic ``mcts`` agent for every game with
a kernel (:func:`engines.agents.mcts.register_compiled`); the registry imports it with the
agent modules. It also brings the Les Alvéoles ``expert`` level. numba is loaded only when a
compiled search is first built, so a process that never uses one (the CLI listing games, a
worker playing other agents) starts without it.
"""

from __future__ import annotations

import random
from typing import Any

from engines.agents.mcts import register_compiled
from engines.compiled.expert import EXPERT
from engines.core import Agent, AgentType, Game

KERNEL_GAMES = ("alquerque", "alveoles")
"""Games with a kernel (the keys of :data:`engines.compiled.agent.KERNELS`)."""


def compiled_mcts(game: Game, rng: random.Random, **params: Any) -> Agent:
    """:class:`engines.compiled.agent.CompiledMctsAgent`, imported (with numba) on first use."""
    from engines.compiled.agent import CompiledMctsAgent

    return CompiledMctsAgent(game, rng, **params)


for _name in KERNEL_GAMES:
    register_compiled(_name, compiled_mcts)

AGENTS: tuple[AgentType, ...] = (EXPERT,)

__all__ = ["AGENTS", "KERNEL_GAMES", "compiled_mcts"]
