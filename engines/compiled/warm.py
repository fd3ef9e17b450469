"""Compile every kernel the compiled search uses, so numba's on-disk cache holds them.

    python -m engines.compiled.warm

The Docker image runs it at build time with ``NUMBA_CACHE_DIR`` set, so workers load the
compiled code instead of compiling it (numba recompiles, once, on a machine whose CPU differs
from the one that built the cache). A Celery worker runs it too, before it takes any work
(``workers.warmup``): a host that joins with an empty cache compiles there, outside every
chunk's time limit.
"""

from __future__ import annotations

import random

from engines.compiled.agent_alphabeta import CompiledAlphaBetaAgent
from engines.compiled.agent_base import ROLLOUTS
from engines.compiled.agent_ismcts import CompiledIsMctsAgent
from engines.compiled.agent_mcts import CompiledMctsAgent
from engines.compiled.choose_alphabeta import serves_alphabeta
from engines.compiled.kernels import HIDDEN_GAMES, KERNEL_GAMES
from engines.core import Agent
from engines.registry import load_game


def warm() -> None:
    """One tiny search per game and rollout kind (the information-set search for games with
    hidden information), and one alpha-beta per game it serves, with the argument types agents
    pass, through both entry points (``step``, and ``root_values`` for player noise).

    Raises :class:`engines.compiled.agent_base.KernelCompileError` naming the function whose
    compilation failed.
    """
    for name in KERNEL_GAMES:
        game = load_game(name)
        state = game.new_initial_state(0)
        for rollout in ROLLOUTS:
            agent: Agent
            if name in HIDDEN_GAMES:
                agent = CompiledIsMctsAgent(game, random.Random(0), iterations=2, rollout=rollout)
            else:
                agent = CompiledMctsAgent(game, random.Random(0), iterations=2, rollout=rollout)
            agent.step(state)
            agent.root_values(state)
        if serves_alphabeta(game):
            CompiledAlphaBetaAgent(game, random.Random(0), depth=2).step(state)


if __name__ == "__main__":
    warm()
