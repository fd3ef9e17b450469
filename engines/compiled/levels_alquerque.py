"""Alquerque's ``expert`` and ``master``: the compiled alpha-beta on the Alquerque kernel, above
the Python levels of :mod:`engines.alquerque.agents`, on the evaluation fitted to game results
(:mod:`engines.alquerque.evaluation`, ``TUNED_WEIGHTS``) and the solved endings of up to five
pieces (:mod:`engines.alquerque.endgame`), which settle the positions they win; ``master`` is
the same search with four times the nodes a move.

Two rules of the search are the game's: captures are compulsory, so the quiescence step never
stands on the evaluation where the side to move must capture; and a move that is the only legal
one (a forced capture, mostly) spends no depth, as in ``hard``.

Declared here, above the games, because it chooses the compiled search; numba is loaded only
when one is made. Its budget is counted in nodes, not time, so a match replays exactly from
its seed.
"""

from __future__ import annotations

import random

from engines.compiled.choose_alphabeta import depth_param
from engines.core import Agent, AgentType, Game, Option

EXPERT_DEPTH = 16
"""Deepest iteration (the service's bound on an agent's depth): the node budget ends the
deepening first."""
EXPERT_NODES = 100_000
"""About 7 plies of full width in the middle game, 0.1 CPU s a searched move and 1.6 CPU s a
game against ``hard`` on the shared machine (the level's bound is 2; ``bench/README.md``)."""
EXPERT_QUIESCENCE = 8
"""Plies of captures followed past the horizon: exchanges of several captures each way."""
MASTER_NODES = 400_000
"""The next level of the same search, as Abalone's ``master`` is of its ``expert``: four times
the nodes a move; the strength ladder prices it."""


def _expert(
    game: Game, rng: random.Random, depth: int = EXPERT_DEPTH, nodes: int = EXPERT_NODES
) -> Agent:
    from engines.alquerque.endgame import table_loader
    from engines.alquerque.evaluation import TUNED_WEIGHTS
    from engines.compiled.agent_alphabeta import CompiledAlphaBetaAgent

    return CompiledAlphaBetaAgent(
        game,
        rng,
        depth=depth,
        nodes=nodes,
        quiescence=EXPERT_QUIESCENCE,
        weights=TUNED_WEIGHTS,
        extend_single=True,
        compulsory=True,
        endgame=table_loader(game),
    )


def _level(name: str, nodes: int, description: str) -> AgentType:
    """A level of the one search: its node budget a move is all that tells them apart."""
    return AgentType(
        name=name,
        description=description,
        factory=_expert,
        params=(
            depth_param(EXPERT_DEPTH),
            Option("nodes", int, nodes, "node budget a move", minimum=100, maximum=100_000_000),
        ),
        games=("alquerque",),
        min_players=2,
        max_players=2,
    )


EXPERT = _level(
    "expert",
    EXPERT_NODES,
    f"Compiled alpha-beta within {EXPERT_NODES:,} nodes a move: iterative deepening, a "
    "transposition table, forced replies searched without spending depth, captures past the "
    "horizon (compulsory, as in the rules), an evaluation fitted to game results and the solved "
    "endings of up to five pieces.",
)
MASTER = _level(
    "master",
    MASTER_NODES,
    f"The search of 'expert' within {MASTER_NODES:,} nodes a move, four times as many: the "
    "strongest level.",
)

__all__ = ["EXPERT", "MASTER"]
