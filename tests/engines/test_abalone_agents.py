"""Abalone's evaluation terms, move ordering, playout policy and computer players."""

from __future__ import annotations

import random

import pytest

from engines.abalone import heuristics
from engines.abalone.board import BY_NAME
from engines.abalone.rules import AbaloneState
from engines.core import OptionError, agent_rng, match_seed, play_match
from engines.registry import agent_types, load_game, make_agent


def position(marbles: list[list[str]], to_move: int = 0) -> AbaloneState:
    game = load_game("abalone", players=len(marbles))
    return AbaloneState.from_cells(game, marbles, to_move)


def mask(*names: str) -> int:
    return sum(1 << BY_NAME[n] for n in names)


# --------------------------------------------------------------------------- evaluation terms


def test_centre_distance_and_cohesion_on_hand_counted_boards() -> None:
    # E5 is the centre (0), D5 and F6 are one step away, A1 and I9 are corners (4).
    assert heuristics.centre_distance(mask("E5")) == 0
    assert heuristics.centre_distance(mask("D5", "F6", "A1", "I9")) == pytest.approx(10 / 4)
    # A line of three has two adjacent pairs; a triangle three.
    assert heuristics.cohesion(mask("E1", "E2", "E3")) == pytest.approx(2 / 3)
    assert heuristics.cohesion(mask("E5", "E6", "F6")) == pytest.approx(3 / 3)
    assert heuristics.cohesion(mask("A1", "I9")) == 0


def test_threatened_marbles_on_the_edge() -> None:
    # White A2 A3 facing Black A1 along the row (pushing W): A1 goes off. 2 v 1.
    assert heuristics.threatened(mask("A1"), mask("A2", "A3")) == 1
    # Black A1 A2 with three White behind (A3 A4 A5): 3 v 2 pushes A1 off.
    assert heuristics.threatened(mask("A1", "A2"), mask("A3", "A4", "A5")) == 1
    # One White marble cannot push; a Black marble in the middle is safe.
    assert heuristics.threatened(mask("A1"), mask("A2")) == 0
    assert heuristics.threatened(mask("E5"), mask("E6", "E7")) == 0


def test_evaluation_prefers_marbles_off_and_the_centre() -> None:
    ahead = position([["E5", "E4", "D4"], ["A1", "B1"]])
    ahead.pushed_off[0] = ahead.lost[1] = 2
    assert ahead.evaluate(0) > 2 / 6 and ahead.evaluate(1) == pytest.approx(-ahead.evaluate(0))
    central = position([["E5", "E4"], ["A1", "I9"]])
    assert central.evaluate(0) > 0 > central.evaluate(1)
    three = load_game("abalone", players=3).new_initial_state()
    values = [three.evaluate(s) for s in range(3)]
    assert all(-1 <= v <= 1 for v in values)


# --------------------------------------------------------------------------- ordering, playouts


def test_ordered_actions_put_ejections_then_pushes_first() -> None:
    # Black A1 A2 push White A3 on to A4; Black E5 E6 E7 push White E8 E9, and E9 goes off.
    state = position([["A1", "A2", "E5", "E6", "E7"], ["A3", "E8", "E9"]])
    ordered = [state.action_to_string(a) for a in state.ordered_actions()]
    assert ordered[0] == "E5E7E"
    assert ordered[1] == "A1A2E"
    assert sorted(state.ordered_actions()) == state.legal_actions()
    # The rest: moves toward the centre before moves away from it.
    rest = state.ordered_actions()[2:]
    gains = [heuristics.CENTRE_GAIN[a] for a in rest]
    assert gains == sorted(gains, reverse=True)


def test_rollout_policy_beats_uniform_play() -> None:
    game = load_game("abalone")
    wins = 0.0
    for i in range(6):
        rng = random.Random(i)
        state = game.new_initial_state()
        policy_seat = i % 2
        while not state.is_terminal():
            if state.current_player() == policy_seat:
                state.apply(state.rollout_action(rng))
            else:
                state.apply(rng.choice(state.legal_actions()))
        wins += state.returns()[policy_seat]
        assert state.pushed_off[policy_seat] >= state.pushed_off[1 - policy_seat]
    assert wins >= 5  # uniform against uniform nearly always reaches the move limit


# --------------------------------------------------------------------------- agents


def test_levels_and_weights_are_registered_parameters() -> None:
    names = {a.name for a in agent_types(load_game("abalone"))}
    assert {"random", "greedy", "easy", "medium", "hard", "alphabeta", "mcts"} <= names
    three = {a.name for a in agent_types(load_game("abalone", players=3))}
    assert {"greedy", "easy", "mcts"} <= three and "hard" not in three
    make_agent(load_game("abalone"), {"name": "hard", "centre": 0.5, "danger": 0})
    with pytest.raises(OptionError) as caught:
        make_agent(load_game("abalone"), {"name": "greedy", "marbles": -1})
    assert caught.value.field == "agent.marbles"


def test_greedy_takes_the_ejection() -> None:
    state = position([["E5", "E6", "E7", "E1"], ["E8", "E9", "I5"]])
    agent = make_agent(state.game, "greedy", random.Random(0))
    assert state.action_to_string(agent.step(state)) == "E5E7E"


def test_hard_leaves_no_marble_where_it_is_pushed_off_at_once() -> None:
    state = position([["E5", "E6", "D5"], ["A3", "A4", "I9"]])
    hard = make_agent(state.game, "hard", random.Random(0))
    move = hard.step(state)
    child = state.clone()
    child.apply(move)
    assert heuristics.threatened(child.board(0), child.board(1)) == 0


def test_levels_replay_exactly_from_the_seed() -> None:
    game = load_game("abalone", move_limit=10)

    def run() -> tuple[str, ...]:
        seed = match_seed(3, 0)
        agents = [
            make_agent(game, name, agent_rng(seed, s)) for s, name in enumerate(["hard", "easy"])
        ]
        return play_match(game, agents, seed).moves

    assert run() == run()


@pytest.mark.slow
def test_each_level_beats_the_one_below() -> None:
    game = load_game("abalone")
    for strong, weak in (("easy", "random"), ("medium", "easy")):
        score = 0.0
        for i in range(2):  # a seat-swapped pair
            seed = match_seed(5, i)
            names = [strong, weak] if i % 2 == 0 else [weak, strong]
            agents = [make_agent(game, n, agent_rng(seed, s)) for s, n in enumerate(names)]
            result = play_match(game, agents, seed)
            score += result.returns[names.index(strong)]
        assert score >= 1.5, (strong, weak, score)


def test_generic_search_plays_three_players() -> None:
    game = load_game("abalone", players=3, move_limit=6)
    seed = match_seed(1, 1)
    agents = [
        make_agent(game, {"name": "mcts", "iterations": 20, "max_rollout_plies": 10},
                   agent_rng(seed, 0)),
        make_agent(game, "greedy", agent_rng(seed, 1)),
        make_agent(game, "easy", agent_rng(seed, 2)),
    ]  # fmt: skip
    result = play_match(game, agents, seed)
    assert result.plies == 6 and result.ended_by == "move_limit"
