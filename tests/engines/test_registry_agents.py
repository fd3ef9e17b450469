"""Each game's agent list is the generic agents plus its own; its own override only for itself.

A throwaway game, ``toy`` (Nim, ``tests/toy_nim.py``), is installed for the duration of a test
with its own ``mcts`` and a ``toy_only`` agent, the way a game package does it: a distribution
whose entry point in ``playtester.games`` names a module exposing ``GAME`` and ``AGENTS``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from game_packages import site_packages
from toy_nim import TOY_MCTS, TakeOne

from engines.agents.random_agent import RANDOM
from engines.compiled.choose_alphabeta import ALPHABETA
from engines.compiled.choose_mcts import MCTS
from engines.registry import (
    agent_types,
    describe_games,
    game_agent_types,
    load_game,
    make_agent,
)


@pytest.fixture
def toy_registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with site_packages(tmp_path, monkeypatch) as site:
        site.install("toy-nim", "0.3", {"toy": "toy_nim"})
        yield


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
    assert next(a for a in agent_types(toy) if a.name == "mcts") == TOY_MCTS
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
