"""The uniform random player: the floor every other agent must beat."""

from __future__ import annotations

import random

from engines.core import Action, AgentType, Game, State


class RandomAgent:
    """Picks uniformly among the legal actions, from its own generator only."""

    def __init__(self, game: Game, rng: random.Random) -> None:
        self.rng = rng

    def step(self, state: State) -> Action:
        return self.rng.choice(state.legal_actions())


RANDOM = AgentType(
    name="random",
    description="Uniformly random legal moves.",
    factory=RandomAgent,
)
