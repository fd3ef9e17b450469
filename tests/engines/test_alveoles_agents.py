"""Les Alvéoles agents and the state's hooks for the generic agents."""

from __future__ import annotations

import random

import pytest

from engines import OptionError, load_game, make_agent, play_match
from engines.alveoles.heuristics import cascade, handover
from engines.alveoles.rules import AlveolesState
from engines.core import agent_rng
from engines.registry import agent_types

OWN_AGENTS = ["greedy", "value", "hunter", "white_pusher", "bonus_builder", "cautious"]


def state_after(moves: list[str], players: int = 2) -> AlveolesState:
    state = load_game("alveoles", players=players).new_initial_state()
    assert isinstance(state, AlveolesState)
    return state.play(moves)


def test_agents_are_registered_for_alveoles() -> None:
    for players in (2, 3, 4):
        game = load_game("alveoles", players=players)
        names = {a.name for a in agent_types(game)}
        assert set(OWN_AGENTS) <= names
        assert "mcts" in names
        assert ("alphabeta" in names) == (players == 2)


def test_parameters_are_validated() -> None:
    game = load_game("alveoles", players=2)
    with pytest.raises(OptionError) as err:
        make_agent(game, {"name": "value", "want_high": -1})
    assert err.value.field == "agent.want_high"
    with pytest.raises(OptionError):
        make_agent(game, {"name": "value", "greed": 1})
    with pytest.raises(OptionError, match="fixes 'want_high'"):
        make_agent(game, {"name": "hunter", "want_high": 2})
    agent = make_agent(game, {"name": "hunter", "caution": 0.5})
    assert agent.want_high == 1.0 and agent.caution == 0.5  # type: ignore[attr-defined]


def test_handover_prices_the_whole_chain() -> None:
    # Opening the 50-50 pair hands both to the opponent, who keeps the turn.
    fifties = state_after(["d4N", "d4S", "e4N", "e4S"])
    assert handover(fifties, fifties.string_to_action("c4E"), 0) == 100
    # A white chain of three alternates: the opponent gets two, we get one.
    whites = state_after(["b1N", "b1S", "c1N", "c1S", "d1N", "d1S"])
    assert handover(whites, whites.string_to_action("a1E"), 0) == 1
    closures, after = cascade(whites, whites.string_to_action("a1E"))
    assert [who for who, _ in closures] == [1, 0, 1]
    assert after == 0


def test_greedy_closes_numbered_first_and_avoids_third_sides() -> None:
    # f2E gives white f2 and g2 (30) their third plate at once: seat 1 may close either.
    state = state_after(["f2N", "f2S", "g2N", "g2S", "f2E"])
    assert sorted(state.action_to_string(a) for a in state.legal_actions()) == ["e2E", "g2E"]
    for seed in range(5):
        greedy = make_agent(state.game, "greedy", random.Random(seed))
        assert state.action_to_string(greedy.step(state)) == "g2E"
    quiet = state_after(["a1N", "a1E"])
    for seed in range(10):
        move = make_agent(quiet.game, "greedy", random.Random(seed)).step(quiet)
        assert move not in (quiet.string_to_action("a1S"), quiet.string_to_action("a1W"))


@pytest.mark.parametrize("name", OWN_AGENTS)
def test_agents_play_legal_reproducible_games(name: str) -> None:
    for players in (2, 4):
        game = load_game("alveoles", players=players)

        def run(game=game) -> tuple[str, ...]:
            agents = [make_agent(game, name, agent_rng(9, s)) for s in range(game.num_players)]
            return play_match(game, agents, seed=9).moves

        first = run()
        assert len(first) == 144
        assert run() == first


def test_agents_do_not_touch_the_state() -> None:
    state = state_after(["a1N", "a1E", "c3N", "d4N", "d4S", "e4N"])
    before = (state.key(), state.owners_string(), state.legal_actions())
    for name in OWN_AGENTS:
        make_agent(state.game, name, random.Random(1)).step(state)
    assert (state.key(), state.owners_string(), state.legal_actions()) == before


@pytest.mark.parametrize("name", ["greedy", "value", "cautious"])
def test_agents_beat_random(name: str) -> None:
    game = load_game("alveoles", players=2)
    won = 0.0
    for i in range(20):
        specs = [name, "random"] if i % 2 == 0 else ["random", name]
        agents = [make_agent(game, s, agent_rng(i, k)) for k, s in enumerate(specs)]
        won += play_match(game, agents, seed=i).returns[i % 2]
    assert won >= 16


def test_hooks() -> None:
    rng = random.Random(4)
    state = load_game("alveoles", players=3).new_initial_state()
    assert isinstance(state, AlveolesState)
    while not state.is_terminal():
        legal = state.legal_actions()
        ordered = state.ordered_actions()
        assert sorted(ordered) == legal
        for seat in range(3):
            assert -1.0 <= state.evaluate(seat) <= 1.0
        forced = state.forced_moves()
        if forced:
            best = max(state.game.values[sq] for sq in forced)
            first = ordered[0]
            assert any(g == first and state.game.values[sq] == best for sq, g in forced.items())
        elif state.safe_mask():
            assert not any(state.sides(sq) == 2 for sq in _touched(ordered[0]))
        action = state.rollout_action(rng)
        assert action in legal
        state.apply(action)
    assert state.evaluate(state.returns().index(max(state.returns()))) > 0


def _touched(groove: int) -> tuple[int, ...]:
    from engines.alveoles.notation import GROOVE_SQUARES

    return GROOVE_SQUARES[groove]


def test_evaluate_counts_a_chain_about_to_be_handed_over() -> None:
    state = state_after(["d4N", "d4S", "e4N", "e4S", "c4E"])  # seat 1 will take both 50s
    assert state.evaluate(1) > 0.8 and state.evaluate(0) < -0.8


def test_generic_agents_take_the_fifties() -> None:
    state = state_after(["d4N", "d4S", "e4N", "e4S", "c4E"])
    for spec in ({"name": "mcts", "iterations": 50}, {"name": "alphabeta", "depth": 2}):
        agent = make_agent(state.game, spec, random.Random(0))
        assert state.action_to_string(agent.step(state)) == "d4E"
    quiet = state_after(["d4N", "d4S", "e4N", "e4S"])
    agent = make_agent(quiet.game, {"name": "alphabeta", "depth": 2}, random.Random(0))
    move = quiet.action_to_string(agent.step(quiet))
    assert move not in {"c4E", "d4E", "e4E"}  # never opens the 50-50 pair
