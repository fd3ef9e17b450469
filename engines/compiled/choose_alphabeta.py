"""The ``alphabeta`` agent: the compiled alpha-beta on a two-player game with a kernel, the
Python search (:class:`engines.agents.alphabeta.AlphaBetaAgent`) elsewhere or when asked.

As for ``mcts`` (:mod:`engines.compiled.choose_mcts`), choosing and refusing a backend reads the
kernel declaration alone and loads no numba; the compiled search is imported when a compiled
``alphabeta`` is first made. The two searches share ``depth`` and ``nodes``; the compiled one
also orders moves by its transposition table, killers and history, and searches forcing moves
(captures, ejections, closed squares) past the horizon, so its moves are its own.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engines.agents.alphabeta import AlphaBetaAgent
from engines.compiled.choose_mcts import BACKENDS, check_backend
from engines.compiled.kernels import KERNEL_GAMES, has_kernel
from engines.core import Agent, AgentType, Game, Option, OptionError


def serves_alphabeta(game: Game) -> bool:
    """Whether the compiled alpha-beta plays ``game``: a kernel, and every player seeing the
    whole position (a game with hidden information has the information-set search instead)."""
    gt = game.game_type
    return has_kernel(game.name) and gt.perfect_information and not gt.chance


def check_alphabeta_backend(game: Game, params: Mapping[str, Any], prefix: str = "") -> None:
    """``check_backend``, and ``compiled`` refused where the compiled alpha-beta does not play."""
    check_backend(game, params, prefix)
    if params.get("backend") == "compiled" and not serves_alphabeta(game):
        raise OptionError(
            f"{prefix}backend 'compiled' plays games that every player sees whole, and "
            f"{game.name} has chance or hidden information; use 'auto' or 'python'",
            field=f"{prefix}backend",
        )


def make_alphabeta(
    game: Game, rng: random.Random, depth: int = 4, nodes: int = 0, backend: str = "auto"
) -> Agent:
    """The ``alphabeta`` agent: the compiled search when the game has a kernel and ``backend``
    allows it (``auto``, ``compiled``), else :class:`AlphaBetaAgent`."""
    check_alphabeta_backend(game, {"backend": backend})
    if backend != "python" and serves_alphabeta(game):
        from engines.compiled.agent_alphabeta import CompiledAlphaBetaAgent

        return CompiledAlphaBetaAgent(game, rng, depth=depth, nodes=nodes)
    return AlphaBetaAgent(game, rng, depth=depth, nodes=nodes)


def depth_param(default: int) -> Option:
    return Option("depth", int, default, "deepest iteration, in plies", minimum=1, maximum=64)


def nodes_param(default: int) -> Option:
    return Option(
        "nodes",
        int,
        default,
        "node budget that stops iterative deepening (0 = no limit); the best move of the "
        "last completed depth is played",
        minimum=0,
        maximum=100_000_000,
    )


BACKEND_PARAM = Option(
    "backend",
    str,
    "auto",
    "'auto': the compiled search when the game has a kernel "
    f"({', '.join(KERNEL_GAMES)}), else Python; 'python' or 'compiled' to choose",
    choices=BACKENDS,
)

ALPHABETA = AgentType(
    name="alphabeta",
    description=(
        "Iterative-deepening alpha-beta with a transposition table and the game's evaluation; "
        "two-player games. Compiled where the game has a kernel: move ordering (table move, "
        "captures, killers, history) and a quiescence step on captures."
    ),
    factory=make_alphabeta,
    params=(depth_param(4), nodes_param(0), BACKEND_PARAM),
    min_players=2,
    max_players=2,
    check=check_alphabeta_backend,
)
