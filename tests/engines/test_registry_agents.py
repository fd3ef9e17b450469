"""Each game's agent list is the generic agents plus its own; its own override only for itself.

A throwaway game, ``toy`` (Nim: take 1 or 2 from a pile of 5, taking the last wins), is
registered for the duration of a test with its own ``mcts`` and a ``toy_only`` agent, the way a
game package does it: a module exposing ``GAME`` and ``AGENTS``, named in ``GAME_MODULES``.
"""

from __future__ import annotations

import random
import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from engines import registry
from engines.agents.random_agent import RANDOM
from engines.compiled.choose_alphabeta import ALPHABETA
from engines.compiled.choose_mcts import MCTS
from engines.core import Action, AgentType, Game, GameType, Seat, State
from engines.registry import (
    GAME_MODULES,
    agent_types,
    describe_games,
    game_agent_types,
    load_game,
    make_agent,
)

TOY_MODULE = "toy_game_registered_by_test"


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


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    module = types.ModuleType(TOY_MODULE)
    module.GAME = ToyGame  # type: ignore[attr-defined]
    module.AGENTS = (TOY_MCTS, TOY_ONLY)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, TOY_MODULE, module)
    monkeypatch.setitem(GAME_MODULES, "toy", TOY_MODULE)
    registry.game_class.cache_clear()
    registry._agent_types.cache_clear()
    yield
    registry.game_class.cache_clear()
    registry._agent_types.cache_clear()


def _described(name: str) -> dict[str, Any]:
    return next(g for g in describe_games(caps={}) if g["name"] == name)


@pytest.mark.usefixtures("toy_registered")
def test_a_games_own_agent_overrides_the_generic_one_only_for_that_game() -> None:
    toy = _described("toy")
    assert [a["name"] for a in toy["agents"]] == ["alphabeta", "mcts", "random", "toy_only"]
    assert {a["name"]: a["description"] for a in toy["agents"]}["mcts"] == "toy's own mcts"
    assert toy["agents_for_min_players"] == ["alphabeta", "mcts", "random", "toy_only"]
    for other in ("alquerque", "alveoles"):
        described = _described(other)
        agents = {a["name"]: a for a in described["agents"]}
        assert agents["mcts"]["description"] == MCTS.description
        assert agents["mcts"]["params"] == [p.describe() for p in MCTS.params]
        assert "toy_only" not in agents
        assert "mcts" in described["agents_for_min_players"]
        assert "toy_only" not in described["agents_for_min_players"]


@pytest.mark.usefixtures("toy_registered")
def test_agent_lookups_pick_the_games_own_agent_for_that_game_alone() -> None:
    toy, alquerque = load_game("toy"), load_game("alquerque")
    assert [a.name for a in game_agent_types("toy")] == ["alphabeta", "mcts", "random", "toy_only"]
    assert next(a for a in agent_types(toy) if a.name == "mcts") is TOY_MCTS
    assert next(a for a in agent_types(alquerque) if a.name == "mcts") is MCTS
    assert isinstance(make_agent(toy, "mcts"), TakeOne)
    assert not isinstance(make_agent(alquerque, {"name": "mcts", "iterations": 5}), TakeOne)


def test_agents_for_min_players_follow_the_player_count() -> None:
    # alphabeta plays two players only; Alvéoles' minimum is 2, its maximum 4.
    alveoles = _described("alveoles")
    assert alveoles["players"] == [2, 4]
    assert "alphabeta" in alveoles["agents_for_min_players"]
    assert "alphabeta" not in [a.name for a in agent_types(load_game("alveoles", 3))]
    generic = {RANDOM.name, MCTS.name, ALPHABETA.name}
    assert generic <= {a["name"] for a in alveoles["agents"]}
