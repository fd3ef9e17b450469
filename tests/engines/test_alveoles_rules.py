"""Les Alvéoles rules: the facts of docs/rules/alveoles.md, golden games and hand-built chains."""

from __future__ import annotations

import json
import random

import pytest
from repo_paths import DATA

from engines import IllegalActionError, NotationError, load_game, replay
from engines.alveoles.notation import GROOVE_NAMES, NUM_GROOVES, parse_groove
from engines.alveoles.rules import AlveolesState

GOLDEN = DATA / "alveoles_golden.json"
"""Two complete recorded games (2 and 4 players) with the mover before every plate, the owners
and the final scores, kept with the tests."""


def new_state(players: int = 2, **options: object) -> AlveolesState:
    state = load_game("alveoles", players=players, **options).new_initial_state()
    assert isinstance(state, AlveolesState)
    return state


def play_random(state: AlveolesState, rng: random.Random) -> AlveolesState:
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    return state


def test_opening_has_144_unforced_moves() -> None:
    state = new_state()
    assert state.legal_actions() == list(range(NUM_GROOVES))
    assert state.forced_moves() == {}
    assert state.current_player() == 0


def test_three_plates_force_the_fourth() -> None:
    state = new_state().play(["a1N", "a1E", "a1S"])
    assert [state.action_to_string(a) for a in state.legal_actions()] == ["a1W"]
    with pytest.raises(IllegalActionError, match="must be closed first"):
        state.string_to_action("h8N")
    state.apply_string("a1W")
    # a1 is worth 15: seat 1 closed it and plays again.
    assert state.owner(0) == 1
    assert state.current_player() == 1


def test_filled_groove_is_illegal_under_any_name() -> None:
    state = new_state().play(["d4N"])
    with pytest.raises(IllegalActionError, match="already has a plate"):
        state.string_to_action("d5S")


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_finished_classic_game_has_500_square_points(players: int) -> None:
    rng = random.Random(players)
    for _ in range(20):
        state = play_random(new_state(players), rng)
        assert state.placements == NUM_GROOVES
        assert sum(state.square_points()) == 500
        assert "." not in state.owners_string()
        assert state.current_player() == -1 and state.legal_actions() == []


@pytest.mark.parametrize("index", [0, 1])
def test_golden_games(index: int) -> None:
    golden = json.loads(GOLDEN.read_text())["games"][index]
    game = load_game(
        "alveoles",
        players=golden["players"],
        layout=golden["layout"],
        square_bonus=golden["square_bonus"],
    )
    state = game.new_initial_state()
    movers = []
    for text in golden["moves"]:
        movers.append(state.current_player())
        state.apply_string(text)
    assert movers == golden["mover_of_each_move"]
    assert state.owners_string() == golden["owner_of_squares_a1_h1_then_a2_h2_and_so_on"]
    assert state.scores() == [float(x) for x in golden["final_scores"]]
    assert state.is_terminal()
    assert state.stats()["owners"] == golden["owner_of_squares_a1_h1_then_a2_h2_and_so_on"]


def test_white_chain_alternates_one_square_per_turn() -> None:
    # b1, c1, d1 are white; walls above and below, then seat 0 opens the chain at b1.
    state = new_state().play(["b1N", "b1S", "c1N", "c1S", "d1N", "d1S", "a1E"])
    closers = []
    for expected in ("b1E", "c1E", "d1E"):
        assert [state.action_to_string(a) for a in state.legal_actions()] == [expected]
        closers.append(state.current_player())
        state.apply_string(expected)
    assert closers == [1, 0, 1]
    assert [state.owner(sq) for sq in (1, 2, 3)] == [1, 0, 1]
    assert state.current_player() == 0


def test_numbered_chain_stays_with_the_player_who_enters_it() -> None:
    # d4 and e4 are worth 50; seat 0 opens the pair at d4W.
    state = new_state().play(["d4N", "d4S", "e4N", "e4S", "c4E"])
    assert state.current_player() == 1
    state.play(["d4E"])
    assert state.current_player() == 1
    state.play(["e4E"])
    assert state.owner(27) == 1 and state.owner(28) == 1
    assert state.current_player() == 1  # replay earned by the last 50
    assert state.stats()["per_seat"][1]["replays"] == 2


def test_one_plate_closes_two_squares() -> None:
    # A white 2 × 2 block b1 c1 b2 c2 walled all round, then opened in the middle.
    walls = ["b1S", "c1S", "a1E", "a2E", "b2N", "c2N", "c1E", "c2E"]
    state = new_state().play([*walls, "b1N"])
    assert sorted(state.action_to_string(a) for a in state.legal_actions()) == ["b1E", "b2E"]
    state.play(["b1E"])  # seat 1 takes b1, c1 now has three plates
    assert state.current_player() == 0
    assert sorted(state.action_to_string(a) for a in state.legal_actions()) == ["b2E", "c1N"]
    state.play(["b2E"])  # seat 0 takes b2; c1 and c2 now both miss only c1N
    assert [state.action_to_string(a) for a in state.legal_actions()] == ["c1N"]
    state.play(["c2S"])
    assert [state.owner(sq) for sq in (1, 2, 9, 10)] == [1, 1, 0, 1]
    assert state.current_player() == 0  # white squares: the turn passes


def test_every_name_is_accepted_and_output_is_canonical() -> None:
    assert parse_groove("d4N") == parse_groove("d5S")
    assert parse_groove("c2E") == parse_groove("d2W")
    assert parse_groove("d4n") == parse_groove("D4N") == parse_groove(" d4N ")
    state = new_state()
    files = "abcdefgh"
    for f, file in enumerate(files):
        for rank in range(1, 9):
            for side in "NESW":
                action = state.string_to_action(f"{file}{rank}{side}")
                name = state.action_to_string(action)
                assert state.string_to_action(name) == action
                assert name in GROOVE_NAMES
                # The canonical name is N/E of a square, S on row 1, W on column a.
                assert (
                    name[2] in "NE"
                    or (name[2] == "S" and name[1] == "1")
                    or (name[2] == "W" and name[0] == "a")
                )
                if side == "S" and rank > 1:
                    assert name == f"{file}{rank - 1}N"
                if side == "W" and f > 0:
                    assert name == f"{files[f - 1]}{rank}E"
    assert len(set(GROOVE_NAMES)) == NUM_GROOVES
    assert {state.action_to_string(a) for a in range(NUM_GROOVES)} == set(GROOVE_NAMES)


@pytest.mark.parametrize("text", ["", "a1", "i1N", "a9N", "a0S", "a1X", "a1NN", "11N"])
def test_bad_notation(text: str) -> None:
    with pytest.raises(NotationError):
        new_state().string_to_action(text)


def test_moves_are_logged_canonically() -> None:
    game = load_game("alveoles", players=2)
    state = replay(game, ["d5S", "d2W", "a1S"])
    assert state.key() == replay(game, ["d4N", "c2E", "a1S"]).key()
    text = str(state)
    assert "seat 1 to move" in text and "plates 3/144" in text


def test_ties_are_shared() -> None:
    game = load_game("alveoles", players=2, layout=[[1] * 8] * 8)
    rng = random.Random(7)
    for _ in range(300):
        state = play_random(game.new_initial_state(), rng)
        scores = state.scores()
        if scores[0] == scores[1]:
            assert state.returns() == [0.5, 0.5]
            break
        assert sorted(state.returns()) == [0.0, 1.0]
    else:
        pytest.fail("no tied game found among 300 random games")


def test_three_player_tie_on_top() -> None:
    rng = random.Random(3)
    game = load_game("alveoles", players=3, layout=[[1] * 8] * 8)
    for _ in range(500):
        state = play_random(game.new_initial_state(), rng)
        scores = state.scores()
        top = max(scores)
        winners = [s for s in range(3) if scores[s] == top]
        expected = [1.0 / len(winners) if s in winners else 0.0 for s in range(3)]
        assert state.returns() == pytest.approx(expected)
        if len(winners) == 2:
            break
    else:
        pytest.fail("no two-way tie on top found")


def test_stats_shape_and_json() -> None:
    state = play_random(new_state(3), random.Random(11))
    stats = state.stats()
    json.dumps(stats)
    assert stats["value_tiers"] == [50, 30, 20, 15, 10, 5, 1]
    assert len(stats["owners"]) == 64
    seats = stats["per_seat"]
    assert len(seats) == 3
    assert sum(s["squares"] for s in seats) == 64
    for seat, figures in enumerate(seats):
        assert list(figures["squares_by_value"]) == ["50", "30", "20", "15", "10", "5", "1"]
        assert figures["squares"] == stats["owners"].count(str(seat))
        bonus = 100 * (
            figures["row_bonuses"] + figures["column_bonuses"] + figures["block_bonuses"]
        )
        assert figures["points"] == figures["square_points"] + bonus
        assert figures["points"] == state.scores()[seat]
    total_by_value = {
        t: sum(s["squares_by_value"][t] for s in seats) for t in seats[0]["squares_by_value"]
    }
    assert total_by_value == {"50": 4, "30": 2, "20": 4, "15": 4, "10": 2, "5": 8, "1": 40}


def test_clone_is_independent() -> None:
    state = new_state().play(["a1N", "a1E"])
    copy = state.clone()
    copy.play(["a1S", "a1W"])
    assert state.placements == 2 and state.owner(0) == -1
    assert copy.owner(0) == 1 and copy.key() != state.key()
