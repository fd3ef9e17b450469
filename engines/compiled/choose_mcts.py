"""The ``mcts`` agent: the compiled search on a game with a kernel, the Python search
(:class:`engines.agents.mcts.MctsAgent`) elsewhere or when asked.

Which games have a kernel is read from :mod:`engines.compiled.kernels`, so choosing a backend
and refusing one loads no numba; the compiled search (and numba) is imported when a compiled
``mcts`` is first made. Declared here rather than with the generic agents because it chooses
between the two searches: ``engines.agents`` sits below the games, the compiled search above
them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engines.agents.mcts import MctsAgent
from engines.agents.tree_search import exploration_param, iterations_param, rollout_params
from engines.compiled.kernels import KERNEL_GAMES, has_kernel
from engines.core import Agent, AgentType, Game, Option, OptionError

BACKENDS = ("auto", "python", "compiled")


def check_backend(game: Game, params: Mapping[str, Any], prefix: str = "") -> None:
    """Refuse ``backend`` ``compiled`` for a game without a kernel, naming ``<prefix>backend``."""
    if params.get("backend") == "compiled" and not has_kernel(game.name):
        raise OptionError(
            f"{prefix}backend 'compiled' needs a compiled kernel and {game.name} has none "
            f"(games with one: {', '.join(KERNEL_GAMES)}); use 'auto' or 'python'",
            field=f"{prefix}backend",
        )


def make_mcts(game: Game, rng: random.Random, backend: str = "auto", **params: Any) -> Agent:
    """The ``mcts`` agent: the compiled search when the game has a kernel and ``backend``
    allows it (``auto``, ``compiled``), else :class:`MctsAgent`; both take the same ``params``
    (``iterations``, ``exploration``, ``rollout``, ``max_rollout_plies``)."""
    check_backend(game, {"backend": backend})
    if backend != "python" and has_kernel(game.name):
        from engines.compiled.agent_mcts import CompiledMctsAgent

        return CompiledMctsAgent(game, rng, **params)
    return MctsAgent(game, rng, **params)


MCTS = AgentType(
    name="mcts",
    description="Monte Carlo tree search (UCT) with an iteration budget; any number of players.",
    factory=make_mcts,
    params=(
        iterations_param(400),
        exploration_param(1.4),
        *rollout_params(),
        Option(
            "backend",
            str,
            "auto",
            "'auto': the compiled search when the game has a kernel "
            f"({', '.join(KERNEL_GAMES)}), else Python; 'python' or 'compiled' to choose "
            "(same search, same parameters)",
            choices=BACKENDS,
        ),
    ),
    check=check_backend,
)
