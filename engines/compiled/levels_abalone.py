"""Abalone's players on the compiled searches: ``alphabeta`` with the evaluation's weights, and
the ``expert`` and ``master`` levels (the same searches, ``master`` with larger budgets).

Declared here, above the games, because they choose the compiled searches; as everywhere in
this package, numba is loaded only when one is made. Each takes the four weights of the rules
page's evaluation as ``hard`` does (:data:`engines.abalone.agents.WEIGHT_PARAMS`), handed to the
kernel's ``evaluate_weighted`` in the order of its ``WEIGHT_NAMES``.
"""

from __future__ import annotations

import importlib
import random
from typing import Any

from engines.abalone.agents import WEIGHT_PARAMS, evaluator
from engines.abalone.heuristics import Weights
from engines.agents.alphabeta import AlphaBetaAgent
from engines.agents.tree_search import iterations_param
from engines.compiled.choose_alphabeta import BACKEND_PARAM, depth_param, nodes_param
from engines.compiled.choose_mcts import check_backend
from engines.compiled.kernels import has_kernel, kernel_module
from engines.core import Agent, AgentType, Game, Option

EXPERT_DEPTH = 12
EXPERT_NODES = 100_000
EXPERT_QUIESCENCE = 4
EXPERT_CONTEMPT = 0.1
"""Two players: iterative deepening within ``EXPERT_NODES`` nodes a move (depth is rarely the
limit), forcing moves (ejections) followed four plies past the horizon, and a draw counted as
-0.1 (over half a marble) for the expert: without it, a level position let it repeat moves
into a draw by repetition in 3 of its first 17 games against ``hard``."""
EXPERT_ITERATIONS = 20_000
EXPERT_EXPLORATION = 0.7
EXPERT_PLAYOUT_PLIES = 8
"""Three players: the compiled MCTS, short playouts of the kernel's strong policy, then the
evaluation."""
MASTER_NODES = 400_000
MASTER_ITERATIONS = 60_000
"""The next level of the same searches: four times ``expert``'s nodes a move with two players,
three times its iterations with three; about 3.5 times its CPU time a ply with either (0.127
CPU s against 0.037 with two players, 0.35 against 0.10 with three, in self-play)."""


def kernel_weights(weights: Weights) -> tuple[float, ...]:
    """``weights`` in the order of the Abalone kernel's ``WEIGHT_NAMES`` (loads the kernel)."""
    names: tuple[str, ...] = importlib.import_module(kernel_module("abalone")).WEIGHT_NAMES
    return tuple(float(getattr(weights, name)) for name in names)


def _weights(params: dict[str, Any]) -> Weights:
    return Weights(**{option.name: params.pop(option.name) for option in WEIGHT_PARAMS})


def _alphabeta(
    game: Game,
    rng: random.Random,
    depth: int = 4,
    nodes: int = 0,
    backend: str = "auto",
    **params: Any,
) -> Agent:
    check_backend(game, {"backend": backend})
    weights = _weights(params)
    if backend != "python" and has_kernel(game.name):
        from engines.compiled.agent_alphabeta import CompiledAlphaBetaAgent

        return CompiledAlphaBetaAgent(
            game, rng, depth=depth, nodes=nodes, weights=kernel_weights(weights)
        )
    return AlphaBetaAgent(game, rng, depth=depth, nodes=nodes, evaluator=evaluator(weights))


def _expert(
    game: Game,
    rng: random.Random,
    depth: int = EXPERT_DEPTH,
    nodes: int = EXPERT_NODES,
    iterations: int = EXPERT_ITERATIONS,
    **params: Any,
) -> Agent:
    weights = _weights(params)
    if game.num_players == 2:
        from engines.compiled.agent_alphabeta import CompiledAlphaBetaAgent

        return CompiledAlphaBetaAgent(
            game,
            rng,
            depth=depth,
            nodes=nodes,
            quiescence=EXPERT_QUIESCENCE,
            weights=kernel_weights(weights),
            contempt=EXPERT_CONTEMPT,
        )
    from engines.compiled.agent_mcts import CompiledMctsAgent

    return CompiledMctsAgent(
        game,
        rng,
        iterations=iterations,
        exploration=EXPERT_EXPLORATION,
        rollout="strong",
        max_rollout_plies=EXPERT_PLAYOUT_PLIES,
    )


ALPHABETA = AgentType(
    name="alphabeta",
    description=(
        "Iterative-deepening alpha-beta with a transposition table on docs/rules/abalone.md's "
        "evaluation (weights as parameters); compiled unless 'backend' says 'python': move "
        "ordering (table move, ejections, pushes, killers, history) and a quiescence step on "
        "ejections."
    ),
    factory=_alphabeta,
    params=(depth_param(4), nodes_param(0), *WEIGHT_PARAMS, BACKEND_PARAM),
    games=("abalone",),
    min_players=2,
    max_players=2,
    check=check_backend,
)


def _level_params(nodes: int, iterations: int) -> tuple[Option, ...]:
    """A level's parameters: its budgets for two and three players, and the weights."""
    return (
        depth_param(EXPERT_DEPTH),
        Option(
            "nodes",
            int,
            nodes,
            "two players: node budget a move",
            minimum=100,
            maximum=100_000_000,
        ),
        iterations_param(iterations, "three players: search iterations a move"),
        *WEIGHT_PARAMS,
    )


EXPERT = AgentType(
    name="expert",
    description=(
        f"Two players: compiled alpha-beta within {EXPERT_NODES:,} nodes a move (4 plies in "
        "the middle game, 5 at the opening), ejections searched past the horizon, a draw "
        "counted against it. Three players: compiled Monte Carlo tree "
        f"search, {EXPERT_ITERATIONS:,} iterations a move with short greedy playouts (the "
        "weights are the two-player evaluation's)."
    ),
    factory=_expert,
    params=_level_params(EXPERT_NODES, EXPERT_ITERATIONS),
    games=("abalone",),
    min_players=2,
    max_players=3,
)
MASTER = AgentType(
    name="master",
    description=(
        f"The searches of 'expert' with larger budgets: {MASTER_NODES:,} nodes a move with "
        f"two players, {MASTER_ITERATIONS:,} iterations a move with three; the strongest level."
    ),
    factory=_expert,
    params=_level_params(MASTER_NODES, MASTER_ITERATIONS),
    games=("abalone",),
    min_players=2,
    max_players=3,
)

__all__ = ["ALPHABETA", "EXPERT", "MASTER", "kernel_weights"]
