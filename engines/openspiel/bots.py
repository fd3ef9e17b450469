"""OpenSpiel's own ``MCTSBot`` as a playtester agent (``openspiel_mcts``).

On an OpenSpiel game (``openspiel:<name>``) it searches the game's own ``pyspiel`` state; on one
of ours it searches the position through :mod:`engines.openspiel.ours` and answers with the
rules' action code. Its generators are seeded from the agent's, so a match replays.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from open_spiel.python.algorithms import mcts

from engines.core import Action, Game, State
from engines.openspiel.ours import PlaytesterGame, codec_of, spiel_game_of
from engines.openspiel.spiel import SpielGame, SpielState


class GameEvaluator(mcts.Evaluator):
    """Leaves valued by the rules' ``evaluate`` (our games only), instead of playouts: each
    seat's value in [-1, 1] read back as a share of the win, as the ``mcts`` agent reads it."""

    def evaluate(self, state: Any) -> np.ndarray:
        inner = state.inner if state.pre is None else state.pre
        players = state.players
        scale = (players - 1) / players
        raw = [max(0.0, inner.evaluate(s) * scale + 1.0 / players) for s in range(players)]
        total = sum(raw)
        return np.array([r / total for r in raw] if total > 0 else [1.0 / players] * players)

    def prior(self, state: Any) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return list(state.chance_outcomes())
        legal = state.legal_actions(state.current_player())
        return [(a, 1.0 / len(legal)) for a in legal]


class SpielMctsAgent:
    """``MCTSBot`` with ``iterations`` simulations per move, leaves valued by one random
    playout or (``leaves`` ``evaluation``, our games only) the rules' evaluation, and
    exploration ``uct_c``."""

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        iterations: int = 200,
        leaves: str = "playout",
        uct_c: float = 2.0,
    ) -> None:
        self.ours: PlaytesterGame | None = None
        if isinstance(game, SpielGame):
            spiel_game = game.spiel_game
        else:
            self.ours = spiel_game_of(game)
            spiel_game = self.ours
        seeds = np.random.RandomState(rng.getrandbits(32))
        evaluator = (
            mcts.RandomRolloutEvaluator(1, seeds) if leaves == "playout" else GameEvaluator()
        )
        self.bot = mcts.MCTSBot(
            spiel_game, uct_c, iterations, evaluator, solve=True, random_state=seeds
        )

    def step(self, state: State) -> Action:
        if self.ours is None:
            assert isinstance(state, SpielState)
            return int(self.bot.step(state.spiel_state.clone()))
        action_id = int(self.bot.step(self.ours.wrap(state)))
        code: Action = codec_of(self.ours.NAME).to_code(action_id)
        return code
