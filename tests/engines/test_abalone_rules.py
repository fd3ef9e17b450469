"""Abalone rules against the facts of docs/rules/abalone.md, each push rule on a hand-built
position, the end rules, free placement and three players."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from legal_moves import names, perft

from engines.abalone.rules import AbaloneState
from engines.core import IllegalActionError, NotationError, OptionError
from engines.registry import load_game

ROWS = "ABCDEFGHI"
# (row, number) steps of the six directions of docs/rules/abalone.md, written out here on purpose.
STEPS = {"E": (0, 1), "W": (0, -1), "NE": (1, 1), "NW": (1, 0), "SE": (-1, 0), "SW": (-1, -1)}


def kind_of(text: str) -> tuple[int, str]:
    """(marbles, "line" or "broadside") read from the notation alone."""
    direction = text[4:] if len(text) > 4 and text[3].isdigit() else text[2:]
    cells = [text[:2]] if len(text) - len(direction) == 2 else [text[:2], text[2:4]]
    if len(cells) == 1:
        return 1, "line"
    (r0, c0), (r1, c1) = ((ROWS.index(c[0]), int(c[1])) for c in cells)
    dr, dc = r1 - r0, c1 - c0
    size = max(abs(dr), abs(dc)) + 1
    sr, sc = STEPS[direction]
    along = (dr * sc - dc * sr) == 0  # the direction is parallel to the line
    return size, "line" if along else "broadside"


def position(marbles: list[list[str]], to_move: int = 0, **options: object) -> AbaloneState:
    game = load_game("abalone", players=len(marbles), **options)
    return AbaloneState.from_cells(game, marbles, to_move)


def cells_of(state: AbaloneState) -> list[list[str]]:
    by_seat: list[list[str]] = [[] for _ in range(state.game.num_players)]
    for name, seat in state.cells().items():
        if seat >= 0:
            by_seat[seat].append(name)
    return by_seat


# --------------------------------------------------------------------------- facts


@pytest.mark.parametrize(
    ("layout", "total", "split"),
    [
        (
            "standard",
            44,
            {(1, "line"): 14, (2, "line"): 12, (3, "line"): 8, (2, "broadside"): 8,
             (3, "broadside"): 2},
        ),
        ("belgian_daisy", 52, None),
        ("german_daisy", 80, None),
    ],
)  # fmt: skip
def test_opening_moves(layout: str, total: int, split: dict | None) -> None:
    state = load_game("abalone", layout=layout).new_initial_state()
    moves = names(state)
    assert len(moves) == total and len(set(moves)) == total
    assert state.current_player() == 0
    if split is not None:
        assert Counter(kind_of(m) for m in moves) == split


@pytest.mark.parametrize(
    ("layout", "expected"),
    [("standard", [44, 1936, 98912]), ("belgian_daisy", [52, 2692, 149322])],
)
def test_perft(layout: str, expected: list[int]) -> None:
    start = load_game("abalone", layout=layout).new_initial_state()
    assert [perft(start, d) for d in (1, 2, 3)] == expected


def split(text: str) -> set[str]:
    return set(text.split(" "))


def test_start_layouts_match_docs_rules() -> None:
    cells = cells_of(load_game("abalone").new_initial_state())
    assert sorted(cells[0]) == sorted(
        [f"A{i}" for i in range(1, 6)] + [f"B{i}" for i in range(1, 7)] + ["C3", "C4", "C5"]
    )
    assert sorted(cells[1]) == sorted(
        [f"I{i}" for i in range(5, 10)] + [f"H{i}" for i in range(4, 10)] + ["G5", "G6", "G7"]
    )
    daisy = cells_of(load_game("abalone", layout="belgian_daisy").new_initial_state())
    assert set(daisy[1]) == split("A4 A5 B4 B5 B6 C5 C6 G4 G5 H4 H5 H6 I5 I6")
    german = cells_of(load_game("abalone", layout="german_daisy").new_initial_state())
    assert set(german[0]) == split("B5 B6 C5 C6 C7 D6 D7 F3 F4 G3 G4 G5 H4 H5")
    three = cells_of(load_game("abalone", players=3).new_initial_state())
    assert set(three[2]) == split("E1 F2 G3 H4 I5 D1 E2 F3 G4 H5 I6")
    assert [len(c) for c in three] == [11, 11, 11]
    assert len(load_game("abalone").new_initial_state().cells()) == 61


def test_board_text_draws_the_hexagon() -> None:
    text = str(load_game("abalone").new_initial_state())
    lines = text.splitlines()
    assert lines[0] == "I     o o o o o"
    assert lines[4] == "E . . . . . . . . ."
    assert lines[8] == "A     x x x x x 6"
    assert "black (seat 0) to move" in text


# --------------------------------------------------------------------------- notation


def test_notation_is_canonical_and_input_is_flexible() -> None:
    state = load_game("abalone").new_initial_state()
    action = state.string_to_action("C3C5NE")
    assert state.action_to_string(action) == "C3C5NE"
    assert state.string_to_action("c5c3ne") == action  # either order, any case
    assert state.string_to_action(" C5C3Ne ") == action
    three_in_line = state.string_to_action("a1c3ne")
    assert state.action_to_string(three_in_line) == "A1C3NE"
    with pytest.raises(NotationError):
        state.string_to_action("J1E")
    with pytest.raises(IllegalActionError, match="not the ends of a line"):
        state.string_to_action("A1C4NE")
    with pytest.raises(IllegalActionError):
        state.string_to_action("A1NE")  # B2 is Black's own marble: not a move


def test_placement_notation() -> None:
    state = load_game("abalone", layout="free_placement").new_initial_state()
    assert len(state.legal_actions()) == 61
    action = state.string_to_action("+e5")
    assert state.action_to_string(action) == "+E5"


# --------------------------------------------------------------------------- pushes


def test_two_push_one_into_an_empty_cell() -> None:
    state = position([["C3", "C4"], ["C5", "I9"]])
    state.apply_string("C3C4E")
    assert cells_of(state) == [["C4", "C5"], ["C6", "I9"]]
    assert state.stats()["per_seat"][0]["pushes"] == 1
    assert state.pushed_off == [0, 0]


def test_three_push_two_off_the_board() -> None:
    state = position([["A1", "A2", "A3"], ["A4", "A5", "I9"]])
    state.apply_string("A1A3E")
    assert cells_of(state) == [["A2", "A3", "A4"], ["A5", "I9"]]
    assert state.pushed_off == [1, 0] and state.lost == [0, 1]
    seat = state.stats()["per_seat"][0]
    assert seat["ejections"] == 1 and seat["pushes"] == 1 and seat["inline"] == 1


@pytest.mark.parametrize(
    ("black", "white", "move"),
    [
        (["E1", "E2", "E3"], ["E4", "E5", "E6"], "E1E3E"),  # pac 3 v 3
        (["E1", "E2"], ["E3", "E4"], "E1E2E"),  # pac 2 v 2
        (["E1"], ["E2"], "E1E"),  # one marble never pushes
        (["E1", "E2", "E3", "E5"], ["E4"], "E1E3E"),  # own marble behind the opponent's
        (["E1", "E2", "E5"], ["E3", "E4"], "E1E2E"),  # 2 v 2, own behind
        (["E1", "E2", "E3", "E4"], ["E5", "E6", "E7"], "E2E4E"),  # a line of 4 counts 3
        (["C3", "C4"], ["D3"], "C3C4NW"),  # broadside never pushes
        (["A1"], ["I9"], "A1SW"),  # never off the board
    ],
)
def test_blocked_moves(black: list[str], white: list[str], move: str) -> None:
    state = position([black, [*white, "I5"]])
    assert move not in names(state)
    with pytest.raises(IllegalActionError):
        state.apply_string(move)


def test_a_line_of_four_pushes_two_as_three() -> None:
    state = position([["E1", "E2", "E3", "E4"], ["E5", "E6", "I9"]])
    assert "E2E4E" in names(state)
    state.apply_string("E2E4E")
    assert cells_of(state) == [["E1", "E3", "E4", "E5"], ["E6", "E7", "I9"]]


def test_broadside_into_empty_cells_and_a_gap_is_no_push() -> None:
    state = position([["C3", "C4", "E1", "E2"], ["E4", "I9"]])
    moves = names(state)
    assert "C3C4NW" in moves and "E1E2E" in moves
    state.apply_string("E1E2E")
    assert cells_of(state)[1] == ["E4", "I9"]  # the gap at E3: nothing pushed
    assert state.stats()["per_seat"][0]["pushes"] == 0


# --------------------------------------------------------------------------- the end


def test_blitz_ends_at_four() -> None:
    for goal, over in ((4, True), (6, False)):
        state = position([["A3", "A4"], ["A5", "I9", "I8"]], marbles_to_win=goal)
        state.pushed_off[0] = 3
        state.apply_string("A3A4E")
        assert state.is_terminal() is over
        if over:
            assert state.returns() == [1.0, 0.0] and state.ended_by() == "normal"
            assert state.scores() == [4.0, 0.0]


def test_third_repetition_is_a_draw() -> None:
    shuffle = ["C5NW", "G5SE", "D5SE", "F5NW"]
    state = load_game("abalone").new_initial_state()
    for move in shuffle * 2:
        assert not state.is_terminal()
        state.apply_string(move)
    assert state.is_terminal() and state.ended_by() == "repetition"
    assert state.returns() == [0.5, 0.5] and state.plies == 8
    free = load_game("abalone", repetition_draw=False).new_initial_state()
    for move in shuffle * 3:
        free.apply_string(move)
    assert not free.is_terminal()


def test_move_limit_is_a_draw() -> None:
    state = load_game("abalone", move_limit=5).new_initial_state()
    rng = random.Random(1)
    for _ in range(5):
        assert not state.is_terminal()
        state.apply_action(rng.choice(state.legal_actions()))
    assert state.is_terminal() and state.ended_by() == "move_limit"
    assert state.returns() == [0.5, 0.5] and state.legal_actions() == []


def test_a_player_without_a_move_loses_with_two_and_draws_with_three() -> None:
    boxed = position([["A1"], ["A2", "B1", "B2"]])
    assert boxed.is_terminal() and boxed.returns() == [0.0, 1.0]
    three = position([["A1"], ["A2", "B1"], ["B2"]])
    assert three.is_terminal() and three.ended_by() == "no_move"
    assert three.returns() == pytest.approx([1 / 3] * 3)


def test_free_placement_then_play() -> None:
    state = load_game("abalone", layout="free_placement", move_limit=10).new_initial_state()
    rng = random.Random(4)
    for i in range(28):
        assert state.placing and state.current_player() == i % 2
        assert all(m.startswith("+") for m in names(state))
        state.apply_action(rng.choice(state.legal_actions()))
    assert not state.placing and state.current_player() == 0
    assert [b.bit_count() for b in (state.board(0), state.board(1))] == [14, 14]
    assert not any(m.startswith("+") for m in names(state))
    for _ in range(10):  # the placements do not count towards the move limit
        assert not state.is_terminal()
        state.apply_action(rng.choice(state.legal_actions()))
    assert state.ended_by() == "move_limit" and state.stats()["plies"] == 10
    assert state.stats()["placements"] == 28


# --------------------------------------------------------------------------- three players


def test_three_players_push_a_mixed_group() -> None:
    state = position([["E1", "E2", "E3"], ["E4", "I9"], ["E5", "I5"]])
    state.apply_string("E1E3E")
    assert cells_of(state) == [["E2", "E3", "E4"], ["E5", "I9"], ["E6", "I5"]]
    assert state.current_player() == 1


def test_three_players_eject_from_a_mixed_group_and_win() -> None:
    state = position([["A1", "A2", "A3"], ["A4", "I9"], ["A5", "I5"]])
    state.pushed_off[0] = 5
    state.apply_string("A1A3E")
    assert state.lost == [0, 0, 1] and state.pushed_off[0] == 6
    assert cells_of(state)[1] == ["A5", "I9"]
    assert state.is_terminal() and state.returns() == [1.0, 0.0, 0.0]


def test_three_players_take_turns_in_order() -> None:
    state = load_game("abalone", players=3).new_initial_state()
    rng = random.Random(0)
    for ply in range(9):
        assert state.current_player() == ply % 3
        state.apply_action(rng.choice(state.legal_actions()))


def test_daisy_layouts_are_for_two_players() -> None:
    with pytest.raises(OptionError) as caught:
        load_game("abalone", players=3, layout="belgian_daisy")
    assert caught.value.field == "options.layout"


# --------------------------------------------------------------------------- invariants


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.sampled_from([2, 3]),
    plies=st.integers(0, 300),
    layout=st.sampled_from(["standard", "belgian_daisy", "free_placement"]),
)
def test_marbles_are_conserved(seed: int, players: int, plies: int, layout: str) -> None:
    if players == 3 and layout == "belgian_daisy":
        layout = "standard"
    game = load_game("abalone", players=players, layout=layout, marbles_to_win=14)
    state = game.new_initial_state()
    rng = random.Random(seed)
    each = 14 if players == 2 else 11
    for _ in range(plies):
        if state.is_terminal():
            break
        state.apply(
            state.rollout_action(rng) if rng.random() < 0.7 else rng.choice(state.legal_actions())
        )
    occupied = 0
    for seat in range(players):
        board = state.board(seat)
        assert occupied & board == 0  # no cell holds two marbles
        occupied |= board
        if not state.placing:
            assert board.bit_count() + state.lost[seat] == each
    assert sum(state.pushed_off) == sum(state.lost) == sum(state.scores())
