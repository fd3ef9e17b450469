"""The generic mcts and alphabeta players, exercised on Alquerque (and on any >2-player game)."""

from __future__ import annotations

import random

import pytest

from engines.agents.alphabeta import AlphaBetaAgent
from engines.agents.mcts import MctsAgent
from engines.alquerque.rules import AlquerqueState
from engines.core import Ending, OptionError, agent_rng, match_seed, play_match
from engines.registry import game_class, game_names, load_game, make_agent

ALQUERQUE = load_game("alquerque")


def winning_capture_position() -> AlquerqueState:
    # a1xc3 takes one piece; e1xc1xa3 takes both and wins on the spot.
    return AlquerqueState.from_board(["a1", "e1"], ["b2", "d1"], game=ALQUERQUE)


@pytest.mark.parametrize(
    "spec",
    [
        {"name": "mcts", "iterations": 60},
        {"name": "mcts", "iterations": 60, "rollout": "random", "max_rollout_plies": 10},
        {"name": "alphabeta", "depth": 3},
        {"name": "alphabeta", "depth": 4, "nodes": 300},
    ],
)
def test_same_rng_seed_same_match(spec: dict[str, object]) -> None:
    def moves(index: int) -> tuple[str, ...]:
        seed = match_seed(11, index)
        agents = [make_agent(ALQUERQUE, spec, agent_rng(seed, s)) for s in range(2)]
        return play_match(ALQUERQUE, agents, seed, max_plies=30).moves

    assert moves(0) == moves(0)


def test_alphabeta_tie_breaks_vary_with_the_rng() -> None:
    # A position symmetric about the c column: each move has an equally good mirror image.
    state = AlquerqueState.from_board(["c1"], ["c5"], game=ALQUERQUE)
    for depth in (1, 2):
        picks = {
            state.action_to_string(
                AlphaBetaAgent(ALQUERQUE, random.Random(s), depth=depth).step(state)
            )
            for s in range(20)
        }
        assert len(picks) == 2, picks


@pytest.mark.parametrize(
    "agent",
    [
        lambda: MctsAgent(ALQUERQUE, random.Random(3), iterations=200),
        lambda: MctsAgent(ALQUERQUE, random.Random(3), iterations=200, rollout="random"),
        lambda: AlphaBetaAgent(ALQUERQUE, random.Random(3), depth=1),
        lambda: AlphaBetaAgent(ALQUERQUE, random.Random(3), depth=4, nodes=500),
    ],
)
def test_takes_the_winning_capture(agent) -> None:
    state = winning_capture_position()
    action = agent().step(state)
    assert state.action_to_string(action) == "e1xc1xa3"


@pytest.mark.parametrize(
    ("white", "black", "winning"),
    [
        (["d1", "c1"], ["e2", "b4"], "d1-d2"),
        (["d3", "e4"], ["c5", "d5"], "e4-e5"),
        (["a5", "b1", "a3"], ["c3", "b3"], "a5-b5"),
    ],
)
def test_alphabeta_finds_a_forced_win_in_three_plies(
    white: list[str], black: list[str], winning: str
) -> None:
    # Each position has exactly one first move that wins by force within three plies.
    state = AlquerqueState.from_board(white, black, game=ALQUERQUE)
    for seed in range(3):
        agent = AlphaBetaAgent(ALQUERQUE, random.Random(seed), depth=3)
        assert state.action_to_string(agent.step(state)) == winning
    assert not state.is_terminal()  # the agent searched on copies


def test_alphabeta_node_budget_stops_deepening() -> None:
    state = ALQUERQUE.new_initial_state()
    agent = AlphaBetaAgent(ALQUERQUE, random.Random(0), depth=30, nodes=200)
    assert agent.step(state) in state.legal_actions()
    assert 1 <= agent.completed_depth < 30


def test_mcts_visits_add_up() -> None:
    state = ALQUERQUE.new_initial_state()
    root = MctsAgent(ALQUERQUE, random.Random(0), iterations=150).search(state)
    assert root.visits == 150
    assert sum(child.visits for child in root.children) == 150
    assert {child.action for child in root.children} == set(state.legal_actions())


def _multiplayer_games() -> list[str]:
    return [n for n in game_names() if game_class(n).game_type.max_players > 2]


@pytest.mark.parametrize("name", _multiplayer_games() or ["none"])
def test_mcts_plays_games_with_more_than_two_players(name: str) -> None:
    if name == "none":
        pytest.skip("no registered game takes more than two players")
    game = load_game(name, players=3)
    agents = [
        make_agent(game, {"name": "mcts", "iterations": 20}, random.Random(s)) for s in range(3)
    ]
    result = play_match(game, agents, seed=5, max_plies=12)
    # Replaying the moves checks each one against the rules and shows who made it.
    state = game.new_initial_state(5)
    movers = []
    for move in result.moves:
        movers.append(state.current_player())
        state.apply_string(move)
    assert set(movers) == {0, 1, 2}
    assert result.plies == len(result.moves)
    if state.is_terminal():
        assert result.ended_by != Ending.MAX_PLIES
        assert result.returns == tuple(state.returns())
    else:
        assert (result.plies, result.ended_by) == (12, Ending.MAX_PLIES)
        assert result.returns == pytest.approx([1 / 3] * 3)
        root = MctsAgent(game, random.Random(1), iterations=30).search(state)
        assert root.visits == sum(child.visits for child in root.children) == 30
    with pytest.raises(OptionError) as caught:
        make_agent(game, {"name": "alphabeta"})
    assert caught.value.field == "agent.name"


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"name": "mcts", "budget": 3}, "agent.budget"),
        ({"name": "mcts", "iterations": 0}, "agent.iterations"),
        ({"name": "mcts", "iterations": 2_000_000}, "agent.iterations"),
        ({"name": "mcts", "exploration": -0.5}, "agent.exploration"),
        ({"name": "mcts", "rollout": "smart"}, "agent.rollout"),
        ({"name": "alphabeta", "depth": 0}, "agent.depth"),
        ({"name": "alphabeta", "nodes": -1}, "agent.nodes"),
        ({"name": "alphabeta", "depth": "deep"}, "agent.depth"),
        ({"name": "hard", "nodes": 5}, "agent.nodes"),
        ({"name": "easy", "greedy_share": 1.5}, "agent.greedy_share"),
    ],
)
def test_bad_parameters_name_the_field(spec: dict[str, object], field: str) -> None:
    with pytest.raises(OptionError) as caught:
        make_agent(ALQUERQUE, spec)
    assert caught.value.field == field
    assert field.split(".")[1] in str(caught.value)
