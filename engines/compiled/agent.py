"""The compiled ``mcts`` backend: the search of :mod:`engines.compiled.uct` behind the agent
contract. Importing this module loads numba."""

from __future__ import annotations

import random

import numpy as np

from engines.agents.mcts import root_share_values
from engines.compiled import uct
from engines.compiled.kernels import has_kernel, kernel_id
from engines.core import Action, Game, State

ROLLOUTS = {"random": uct.RANDOM_ROLLOUT, "game": uct.GAME_ROLLOUT, "strong": uct.STRONG_ROLLOUT}
"""The ``rollout`` values: ``mcts``'s two, and ``strong`` for the levels built on it."""


class CompiledMctsAgent:
    """:class:`engines.agents.mcts.MctsAgent` played by the game's kernel: same parameters,
    same meaning, one compiled search per move seeded from the agent's generator.

    With a rollout cap, unfinished playouts are scored by the kernel's own ``evaluate``.
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
        if not has_kernel(game.name):
            raise ValueError(f"{game.name} has no compiled kernel")
        if not game.game_type.perfect_information:
            # This search would read the hidden order: such games have their own search.
            raise ValueError(f"{game.name} hides information: use its information-set search")
        self.rng = rng
        self.game_id = kernel_id(game.name)
        self.encode = uct.KERNEL_MODULES[self.game_id].encode
        self.players = game.num_players
        self.iterations = iterations
        self.exploration = exploration
        self.rollout = ROLLOUTS[rollout]
        cap = game.game_type.max_game_length
        self.rollout_cap = min(max_rollout_plies, cap) if max_rollout_plies > 0 else cap

    def step(self, state: State) -> Action:
        actions = state.legal_actions()
        if len(actions) == 1:
            return actions[0]
        return int(uct.search(*self._search_args(state)))

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """The searched root moves with their mean result for the seat to move (the same search
        as ``step``; see ``engines.agents.mcts.root_share_values``). Each value is a mean, so
        ``within`` changes nothing."""
        moves, visits, totals = uct.root_moves(*self._search_args(state))
        children = zip(moves.tolist(), visits.tolist(), totals.tolist(), strict=True)
        return root_share_values(children, self.players)

    def _search_args(self, state: State) -> tuple[int, np.ndarray, int, int, float, int, int, int]:
        """What the compiled search takes, with a fresh seed from the agent's generator."""
        return (
            self.game_id,
            self.encode(state),
            self.players,
            self.iterations,
            self.exploration,
            self.rollout,
            self.rollout_cap,
            self.rng.getrandbits(63),
        )
