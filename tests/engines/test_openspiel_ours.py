"""Our games inside OpenSpiel (``engines.openspiel``): OpenSpiel's own checks, and its MCTSBot.

The expected game facts (player counts, Alhambra's 54 tiles, Alquerque's start) come from the
pages in docs/rules/, the OpenSpiel conventions (TERMINAL = −4, zero returns before
the end, ids below ``num_distinct_actions``) from OpenSpiel's API; ``random_sim_test`` is
OpenSpiel's own test of a game.
"""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest

import engines.openspiel  # registers playtester_* with OpenSpiel
from engines.core import agent_rng, play_match
from engines.registry import load_game, make_agent

KIND = pyspiel.GameType

# Every player count of each game (docs/rules/<game>.md); Abalone's move limit and Alquerque's
# no-capture rule are shortened so that random games end soon (both are options of the rules).
SIM_CASES = [
    ("playtester_alveoles", {"players": 2}),
    ("playtester_alveoles", {"players": 3}),
    ("playtester_alveoles", {"players": 4}),
    ("playtester_abalone", {"players": 2, "move_limit": 40}),
    ("playtester_abalone", {"players": 3, "move_limit": 40}),
    ("playtester_alquerque", {"players": 2, "no_capture_limit": 20}),
    *[("playtester_alhambra", {"players": n}) for n in range(2, 7)],
]


@pytest.mark.parametrize(("name", "params"), SIM_CASES, ids=lambda v: str(v))
def test_openspiel_random_sim_test_with_serialization(name: str, params: dict) -> None:
    game = pyspiel.load_game(name, params)
    assert game.num_players() == params["players"]
    # OpenSpiel's own checks: legal ids in range, chance probabilities, terminal returns within
    # the utilities and summing to the constant, serialization round trips, observations.
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize(
    ("name", "low", "high", "chance", "information"),
    [
        ("playtester_alveoles", 2, 4, KIND.ChanceMode.DETERMINISTIC, "PERFECT"),
        ("playtester_abalone", 2, 3, KIND.ChanceMode.DETERMINISTIC, "PERFECT"),
        ("playtester_alquerque", 2, 2, KIND.ChanceMode.DETERMINISTIC, "PERFECT"),
        ("playtester_alhambra", 2, 6, KIND.ChanceMode.EXPLICIT_STOCHASTIC, "IMPERFECT"),
    ],
)
def test_game_types(name: str, low: int, high: int, chance: object, information: str) -> None:
    spiel_type = pyspiel.load_game(name).get_type()
    assert (spiel_type.min_num_players, spiel_type.max_num_players) == (low, high)
    assert spiel_type.chance_mode == chance
    assert spiel_type.information.name == f"{information}_INFORMATION"
    assert spiel_type.dynamics == KIND.Dynamics.SEQUENTIAL
    assert spiel_type.reward_model == KIND.RewardModel.TERMINAL
    assert spiel_type.utility == KIND.Utility.CONSTANT_SUM
    assert "players" in spiel_type.parameter_specification


def test_parameters_are_our_options() -> None:
    game = pyspiel.load_game("playtester_abalone", {"players": 2, "layout": "belgian_daisy"})
    assert game.ours.options["layout"] == "belgian_daisy"
    with pytest.raises(Exception, match="layout"):
        pyspiel.load_game("playtester_abalone", {"players": 3, "layout": "belgian_daisy"})


def test_a_custom_layout_travels_as_json_text() -> None:
    grid = [[1 + (r * 8 + c) % 7 for c in range(8)] for r in range(8)]
    ours = load_game("alveoles", 3, layout=grid)
    game = engines.openspiel.spiel_game_of(ours)
    assert game.num_players() == 3
    assert game.ours.values == ours.values and game.ours.values != load_game("alveoles").values


def test_terminal_player_zero_returns_and_dense_ids_in_alquerque() -> None:
    game = pyspiel.load_game("playtester_alquerque")
    # Captures may chain up to 12 jumps, so the engine's own codes run past 26^12; the ids
    # stay within a table of every path on the board.
    assert game.num_distinct_actions() < 2**21
    state = game.new_initial_state()
    rng = random.Random(3)
    longest = 0
    while not state.is_terminal():
        assert state.returns() == [0.0, 0.0]
        legal = state.legal_actions()
        assert legal == sorted(legal) and all(0 <= a < game.num_distinct_actions() for a in legal)
        action = rng.choice(legal)
        text = state.action_to_string(state.current_player(), action)
        longest = max(longest, text.count("x"))
        assert state.string_to_action(text) == action
        state.apply_action(action)
    assert state.current_player() == pyspiel.PlayerId.TERMINAL == -4
    assert sorted(state.returns()) in ([0.0, 1.0], [0.5, 0.5])


def test_alquerque_observation_tensor_at_the_start() -> None:
    # The start (docs/rules/alquerque.md): White on rows 1-2 and d3, e3; Black on rows 4-5 and
    # a3, b3; c3 empty; White to move.
    state = pyspiel.load_game("playtester_alquerque").new_initial_state()
    tensor = np.array(state.observation_tensor(0))
    assert tensor.shape == (77,)
    white, black, empty = tensor[:25], tensor[25:50], tensor[50:75]
    assert white.sum() == 12 and black.sum() == 12 and empty.sum() == 1
    assert empty[12] == 1  # c3 = row 2 * 5 + column 2
    assert list(tensor[75:]) == [1.0, 0.0]


def test_alhambra_deal_is_explicit_chance() -> None:
    # The first draw of the deal shuffles the 54 building tiles (docs/rules/alhambra.md).
    state = pyspiel.load_game("playtester_alhambra", {"players": 3}).new_initial_state()
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 54
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)
    rng = random.Random(5)
    draws = 0
    while state.is_chance_node():
        state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
        draws += 1
    # 53 swaps for the bag, 107 for the 108 money cards, 2 scoring-card places at least.
    assert draws >= 53 + 107 + 2
    assert 0 <= state.current_player() < 3
    # What a seat sees names no tile still in the bag: only the count.
    seen = state.observation_string(0)
    assert "bag 50 tiles" in seen
    assert state.information_state_string(0) != state.information_state_string(1)


def test_states_clone_and_serialize_independently() -> None:
    game = pyspiel.load_game("playtester_alveoles", {"players": 3})
    state = game.new_initial_state()
    for action in state.legal_actions()[:5]:
        state.apply_action(action)
    copy = state.clone()
    copy.apply_action(copy.legal_actions()[0])
    assert len(copy.history()) == len(state.history()) + 1
    text = pyspiel.serialize_game_and_state(game, state)
    _, again = pyspiel.deserialize_game_and_state(text)
    assert str(again) == str(state) and again.history() == state.history()


# OpenSpiel's MCTSBot against our agents, through the bridge: one full match per game and
# player count's extreme, the bot cheap (a few simulations valued by the rules' evaluation).
BOT_CASES = [
    ("alveoles", 2, {}),
    ("alveoles", 4, {}),
    ("abalone", 2, {"move_limit": 30}),
    ("abalone", 3, {"move_limit": 30}),
    ("alquerque", 2, {"no_capture_limit": 20}),
    ("alhambra", 2, {}),
]


@pytest.mark.parametrize(("name", "players", "options"), BOT_CASES)
def test_openspiel_mcts_plays_whole_matches_against_our_agents(
    name: str, players: int, options: dict
) -> None:
    game = load_game(name, players, **options)
    bot = {"name": "openspiel_mcts", "iterations": 4, "leaves": "evaluation"}
    specs = [bot] + ["random"] * (players - 1)
    agents = [make_agent(game, spec, agent_rng(11, s)) for s, spec in enumerate(specs)]
    result = play_match(game, agents, seed=11)
    assert result.ended_by != "max_plies"
    assert sum(result.returns) == pytest.approx(1.0)
    again = play_match(
        game, [make_agent(game, spec, agent_rng(11, s)) for s, spec in enumerate(specs)], seed=11
    )
    assert again.moves == result.moves  # seeded: the match replays
