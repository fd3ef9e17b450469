"""The Les Alvéoles ``expert`` and ``master`` levels: the compiled search with short greedy
playouts, ``master`` with three times ``expert``'s iterations.

Declared apart from :mod:`engines.compiled.agent_base` so that listing agents does not load numba;
the search is built, and numba loaded, when one of them is made.
"""

from __future__ import annotations

import random

from engines.agents.tree_search import exploration_param, iterations_param
from engines.core import Agent, AgentType, Game

EXPERT_ITERATIONS = 12_000
EXPERT_EXPLORATION = 0.4
EXPERT_PLAYOUT_PLIES = 2
"""Short playouts, then the cascade-aware evaluation: in measurements against ``alphabeta``
this beat whole playouts at the same time per move."""
MASTER_ITERATIONS = 36_000
"""The next level of the same search: three times ``expert``'s iterations, about 4.5 times its
CPU time a game (6.9 CPU s against 1.5 for a two-player self-play game; the larger tree is
slower per iteration)."""


def _expert(
    game: Game,
    rng: random.Random,
    iterations: int = EXPERT_ITERATIONS,
    exploration: float = EXPERT_EXPLORATION,
) -> Agent:
    from engines.compiled.agent_mcts import CompiledMctsAgent

    return CompiledMctsAgent(
        game,
        rng,
        iterations=iterations,
        exploration=exploration,
        rollout="strong",
        max_rollout_plies=EXPERT_PLAYOUT_PLIES,
    )


EXPERT = AgentType(
    name="expert",
    description=(
        "Compiled Monte Carlo tree search: short greedy playouts (close squares, most valuable "
        "first, else a safe groove, else the cheapest chain) scored by the point lead after "
        "the forced closings; a whole game in under a second."
    ),
    factory=_expert,
    params=(iterations_param(EXPERT_ITERATIONS), exploration_param(EXPERT_EXPLORATION)),
    games=("alveoles",),
)
MASTER = AgentType(
    name="master",
    description=(
        f"The search of 'expert' with {MASTER_ITERATIONS:,} iterations a move, three times as "
        "many: the strongest level, a few CPU seconds a game."
    ),
    factory=_expert,
    params=(iterations_param(MASTER_ITERATIONS), exploration_param(EXPERT_EXPLORATION)),
    games=("alveoles",),
)
