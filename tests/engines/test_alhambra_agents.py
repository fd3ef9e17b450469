"""Alhambra's players: they never read the hidden order, and the heuristic beats chance."""

from __future__ import annotations

import random

import pytest
from alhambra_views import midgame, other_hidden_order, scoring_cards_moved

from engines.core import agent_rng, match_seed, play_match
from engines.registry import agent_types, load_game, make_agent

SPECS: list[dict[str, object]] = [
    {"name": "random"},
    {"name": "greedy"},
    {"name": "builder"},
    {"name": "collector"},
    {"name": "banker"},
    {"name": "mcts", "iterations": 30, "rollout_plies": 8},
    {"name": "mcts", "iterations": 30, "backend": "python"},
    {"name": "expert", "iterations": 60},
]


@pytest.mark.parametrize("spec", SPECS, ids=[str(s["name"]) for s in SPECS])
def test_agents_never_peek_at_the_hidden_order(spec: dict[str, object]) -> None:
    game = load_game("alhambra", players=3)
    for seed in range(3):
        state = midgame(3, seed, 40 + 7 * seed)
        other = other_hidden_order(state, 100 + seed)
        assert other.bag != state.bag and other.deck != state.deck
        assert scoring_cards_moved(state, other)
        assert other.legal_actions() == state.legal_actions()
        first = make_agent(game, spec, random.Random(seed)).step(state)
        second = make_agent(game, spec, random.Random(seed)).step(other)
        assert first == second, spec


def test_the_game_has_its_own_players() -> None:
    names = {a.name for a in agent_types(load_game("alhambra", players=4))}
    assert {"random", "greedy", "builder", "collector", "banker", "mcts"} <= names


@pytest.mark.slow
def test_greedy_beats_random_players() -> None:
    game = load_game("alhambra", players=3)
    wins = 0.0
    for index in range(6):
        seed = match_seed(17, index)
        seat = index % 3
        specs = [{"name": "random"}] * 3
        specs[seat] = {"name": "greedy"}
        agents = [make_agent(game, s, agent_rng(seed, i)) for i, s in enumerate(specs)]
        wins += play_match(game, agents, seed).returns[seat]
    # Independent of the code: a chance player wins a third; 5 of 6 is far above it.
    assert wins >= 5
