"""Alhambra's searching players: ``mcts`` (information-set MCTS, compiled or Python) and the
``expert`` level built on the compiled one.

Declared apart from the search so that listing agents does not load numba: the compiled
search (:mod:`engines.compiled.agent_ismcts`) is imported when such an agent is made. Both read
only the view the runner hands them; the root's candidates and prior come from ``greedy``'s
scores.
"""

from __future__ import annotations

import random
from typing import Any

from engines.agents.tree_search import exploration_param, iterations_param
from engines.alhambra.agents import GreedyAgent
from engines.alhambra.ismcts import MCTS_PARAMS, IsMctsAgent
from engines.compiled.choose_mcts import BACKENDS, check_backend
from engines.compiled.kernels import has_kernel
from engines.core import Agent, AgentType, Game, Option

EXPERT_ITERATIONS = 3000
EXPERT_EXPLORATION = 0.7
EXPERT_ROLLOUT_PLIES = 10
EXPERT_WIDTH = 6
EXPERT_PLAYOUTS = {"rules": "strong", "greedy": "greedy"}
"""``expert``'s ``playout`` values and the search's ``rollout`` each one is: the rules'
playout move, or one drawn with weights from the kernel's quick score."""


def make_mcts(game: Game, rng: random.Random, backend: str = "auto", **params: Any) -> Agent:
    """The compiled information-set search when the kernel is declared and ``backend``
    allows it, else :class:`IsMctsAgent`; same parameters, same meaning."""
    check_backend(game, {"backend": backend})
    prior = GreedyAgent(game, rng).scores
    if backend != "python" and has_kernel(game.name):
        from engines.compiled.agent_ismcts import CompiledIsMctsAgent

        return CompiledIsMctsAgent(game, rng, prior_scores=prior, **params)  # type: ignore[arg-type]
    return IsMctsAgent(game, rng, prior_scores=prior, **params)


MCTS = AgentType(
    name="mcts",
    description=(
        "Information-set MCTS: each iteration re-draws the hidden deck and bag from the seat's "
        "view; the root searches greedy's best moves with its scores as a prior; short "
        "playouts scored by projected points. Compiled ('backend' 'auto') or Python."
    ),
    factory=make_mcts,
    params=(
        *MCTS_PARAMS,
        Option(
            "backend",
            str,
            "auto",
            "'auto' or 'compiled': the compiled search over the game's kernel; 'python': the "
            "same search in Python (same parameters)",
            choices=BACKENDS,
        ),
    ),
    games=("alhambra",),
    check=check_backend,
)


def _expert(
    game: Game,
    rng: random.Random,
    iterations: int = EXPERT_ITERATIONS,
    exploration: float = EXPERT_EXPLORATION,
    playout: str = "rules",
) -> Agent:
    from engines.compiled.agent_ismcts import CompiledIsMctsAgent

    return CompiledIsMctsAgent(
        game,
        rng,
        iterations=iterations,
        exploration=exploration,
        rollout_plies=EXPERT_ROLLOUT_PLIES,
        width=EXPERT_WIDTH,
        prior_scores=GreedyAgent(game, rng).scores,  # type: ignore[arg-type]
        rollout=EXPERT_PLAYOUTS[playout],
    )


EXPERT = AgentType(
    name="expert",
    description=(
        "Compiled information-set MCTS: every iteration re-draws the hidden deck and bag; "
        "greedy's best moves at the root with its scores as a prior; short playouts scored "
        "by projected points."
    ),
    factory=_expert,
    params=(
        iterations_param(EXPERT_ITERATIONS, "search iterations per decision"),
        exploration_param(EXPERT_EXPLORATION, "UCB exploration constant"),
        Option(
            "playout",
            str,
            "rules",
            "playout move: 'rules' (exact purchases first, else good takes; placements "
            "anywhere they fit) or 'greedy' (any legal move, weighted by exp of its quick score)",
            choices=tuple(EXPERT_PLAYOUTS),
        ),
    ),
    games=("alhambra",),
)
