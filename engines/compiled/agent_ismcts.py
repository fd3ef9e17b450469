"""The compiled information-set search behind the agent contract (Alhambra's ``mcts`` with
``backend`` ``auto`` or ``compiled``, and its ``expert``), on
:class:`engines.compiled.agent_base.CompiledAgent`. Importing this module loads numba.

The agent reads only the view it is handed (the runner's re-drawn copy) and, from it, the
root's candidates and prior (``greedy``'s scores, as the Python search); the compiled search
then re-draws the hidden order again in every iteration, from its own generator, so the move
depends on the seat's information and the seed alone.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np

from engines.agents.tree_search import root_share_values
from engines.compiled import search_ismcts
from engines.compiled.agent_base import ROLLOUTS, CompiledAgent
from engines.compiled.kernels import HIDDEN_GAMES
from engines.core import Action, Game, State

RootScorer = Callable[[State, Sequence[Action]], dict[Action, float]]
HIDDEN_ROLLOUTS = {**ROLLOUTS, "greedy": search_ismcts.GREEDY_ROLLOUT}
"""The ``rollout`` values of this search: the Monte Carlo searches' and ``greedy``, the
playout weighted by the kernel's quick score."""


class CompiledIsMctsAgent(CompiledAgent):
    """:class:`engines.alhambra.ismcts.IsMctsAgent` played by the game's kernel: same
    parameters, same meaning (``width`` up to the option's 1,000), one compiled search per move
    seeded from the agent's generator; ``rollout`` names the playout policy as for ``mcts``
    (``"strong"`` for the levels built on it, ``"greedy"`` weighted by the quick score)."""

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        iterations: int = 100,
        exploration: float = 0.7,
        rollout_plies: int = 10,
        width: int = 6,
        prior: float = 1.0,
        prior_scores: RootScorer | None = None,
        rollout: str = "game",
    ) -> None:
        if game.name not in HIDDEN_GAMES:
            raise ValueError(f"{game.name} has no compiled information-set search")
        super().__init__(game, rng)
        self.iterations = int(iterations)
        self.exploration = float(exploration)
        self.rollout_plies = int(rollout_plies)
        self.width = int(width)
        self.prior = float(prior)
        self.prior_scores = prior_scores
        self.rollout = HIDDEN_ROLLOUTS[rollout]

    def smallest_budget(self) -> dict[str, int]:
        return {"iterations": 1}

    def step(self, state: State) -> Action:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        moves, bias, visits, _ = self._search(state, legal)
        best = max(range(len(moves)), key=lambda i: (int(visits[i]), float(bias[i]), -i))
        return int(moves[best])

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """The root candidates searched often enough, with their mean result for the seat to
        move (the same search as ``step``); every value is a mean, so ``within`` changes
        nothing."""
        moves, _, visits, totals = self._search(state, state.legal_actions())
        children = zip(moves.tolist(), visits.tolist(), totals.tolist(), strict=True)
        return root_share_values(children, self.players)

    def _root(self, state: State, legal: list[Action]) -> tuple[np.ndarray, np.ndarray]:
        """The root's candidates, each with its prior in [0, 1] (best heuristic score = 1)."""
        if self.prior_scores is None:
            top = state.ordered_actions()[: self.width]
            return np.array(top, dtype=np.int64), np.zeros(len(top))
        scores = self.prior_scores(state, legal)
        top = sorted(legal, key=lambda a: -scores[a])[: self.width]
        high, low = scores[top[0]], scores[top[-1]]
        span = high - low
        bias = [(scores[a] - low) / span if span > 0 else 1.0 for a in top]
        return np.array(top, dtype=np.int64), np.array(bias, dtype=np.float64)

    def _search(
        self, state: State, legal: list[Action]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        moves, bias = self._root(state, legal)
        _, visits, totals = self.run(
            search_ismcts.root_moves,
            self.game_id,
            self.encode(state),
            self.players,
            self.iterations,
            self.exploration,
            self.rollout_plies,
            self.width,
            moves,
            bias,
            self.prior,
            self.rollout,
            self.seed(),
            self.deadline(),
        )
        return moves, bias, visits, totals
