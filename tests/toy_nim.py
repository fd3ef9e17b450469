"""A throwaway game package's module for tests, ``toy`` (Nim: take 1 or 2 from a pile of 5,
taking the last wins), with its own ``mcts`` and a ``toy_only`` agent: what a designer's
package exposes, written against the engine contract only."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engines.contract import Action, AgentType, Game, GameType, Seat, State

CONTRACT_VERSION = 1


class ToyState(State):
    def __init__(self, game: Game, pile: int = 5, player: Seat = 0) -> None:
        self.game = game
        self.pile = pile
        self.player = player
        self.winner: Seat = -1

    def current_player(self) -> Seat:
        return -1 if self.pile == 0 else self.player

    def legal_actions(self) -> list[Action]:
        return [n for n in (1, 2) if n <= self.pile]

    def apply(self, action: Action) -> None:
        self.pile -= action
        if self.pile == 0:
            self.winner = self.player
        self.player = 1 - self.player

    def is_terminal(self) -> bool:
        return self.pile == 0

    def returns(self) -> list[float]:
        if self.winner < 0:
            return [0.5, 0.5]
        return [1.0 if s == self.winner else 0.0 for s in range(2)]

    def action_to_string(self, action: Action) -> str:
        return str(action)

    def string_to_action(self, text: str) -> Action:
        return int(text)

    def clone(self) -> ToyState:
        new = ToyState(self.game, self.pile, self.player)
        new.winner = self.winner
        return new

    def __str__(self) -> str:
        return f"pile {self.pile}, seat {self.player} to move"


class ToyGame(Game):
    game_type = GameType(
        short_name="toy",
        long_name="Toy Nim",
        min_players=2,
        max_players=2,
        chance=False,
        perfect_information=True,
        num_distinct_actions=2,
        max_game_length=5,
    )

    def __init__(self, players: int, options: Mapping[str, Any]) -> None:
        super().__init__(players, options)

    def new_initial_state(self, seed: int = 0) -> ToyState:
        return ToyState(self)


class TakeOne:
    """The toy's own ``mcts``: always takes one."""

    def __init__(self, game: Game, rng: random.Random) -> None:
        self.rng = rng

    def step(self, state: State) -> Action:
        return 1


TOY_MCTS = AgentType(name="mcts", description="toy's own mcts", factory=TakeOne, games=("toy",))
TOY_ONLY = AgentType(
    name="toy_only", description="plays only the toy", factory=TakeOne, games=("toy",)
)

GAME = ToyGame
AGENTS = (TOY_MCTS, TOY_ONLY)
