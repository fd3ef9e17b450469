"""The compiled ``mcts`` backend: the search of :mod:`engines.compiled.search_uct` behind the
agent contract, on :class:`engines.compiled.agent_base.CompiledAgent`. Importing this module
loads numba."""

from __future__ import annotations

import random

import numpy as np

from engines.agents.tree_search import rollout_cap, root_share_values
from engines.compiled import search_uct
from engines.compiled.agent_base import ROLLOUTS, CompiledAgent
from engines.core import Action, Game, State


class CompiledMctsAgent(CompiledAgent):
    """:class:`engines.agents.mcts.MctsAgent` played by the game's kernel: same parameters,
    same meaning, one compiled search per move seeded from the agent's generator.

    With a rollout cap, unfinished playouts are scored by the kernel's own ``evaluate``. In a
    clocked match (``set_move_time``) the search also stops at the move's deadline.
    """

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        iterations: int = 400,
        exploration: float = 1.4,
        rollout: str = "game",
        max_rollout_plies: int = 0,
    ) -> None:
        if not game.game_type.perfect_information:
            # This search would read the hidden order: such games have their own search.
            raise ValueError(f"{game.name} hides information: use its information-set search")
        super().__init__(game, rng)
        self.iterations = iterations
        self.exploration = exploration
        self.rollout = ROLLOUTS[rollout]
        self.rollout_cap = rollout_cap(game, max_rollout_plies)

    def smallest_budget(self) -> dict[str, int]:
        return {"iterations": 1}

    def step(self, state: State) -> Action:
        actions = state.legal_actions()
        if len(actions) == 1:
            return actions[0]
        return int(self.run(search_uct.search, *self._search_args(state)))

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """The searched root moves with their mean result for the seat to move (the same search
        as ``step``; see ``engines.agents.tree_search.root_share_values``). Each value is a
        mean, so ``within`` changes nothing."""
        moves, visits, totals = self.run(search_uct.root_moves, *self._search_args(state))
        children = zip(moves.tolist(), visits.tolist(), totals.tolist(), strict=True)
        return root_share_values(children, self.players)

    def _search_args(
        self, state: State
    ) -> tuple[int, np.ndarray, int, int, float, int, int, int, float]:
        """What the compiled search takes, with a fresh seed and the move's deadline."""
        return (
            self.game_id,
            self.encode(state),
            self.players,
            self.iterations,
            self.exploration,
            self.rollout,
            self.rollout_cap,
            self.seed(),
            self.deadline(),
        )
