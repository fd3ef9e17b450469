"""Les Alvéoles bonuses on hand-built boards, and layout validation."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines import OptionError, load_game
from engines.alveoles.layouts import CLASSIC, normalise_layout, square_values
from engines.alveoles.scoring import (
    BLOCK_MASKS,
    DISJOINT,
    OVERLAPPING,
    block_bonuses,
    owners_from_rows,
    score_owners,
)

CLASSIC_VALUES = square_values(normalise_layout("classic"))


def score(rows: list[str], mode: str = OVERLAPPING, players: int = 2) -> list[tuple[int, ...]]:
    seats = score_owners(owners_from_rows(rows), CLASSIC_VALUES, players, mode)
    return [(s.rows, s.columns, s.blocks, s.bonus_points) for s in seats]


def test_a_row() -> None:
    board = ["........"] * 7 + ["00000000"]
    assert score(board) == [(1, 0, 0, 100), (0, 0, 0, 0)]
    seat0 = score_owners(owners_from_rows(board), CLASSIC_VALUES, 2)[0]
    assert seat0.square_points == 15 + 1 + 1 + 1 + 10 + 1 + 1 + 15
    assert seat0.total == seat0.square_points + 100


def test_a_column() -> None:
    board = ["...1...."] * 8
    assert score(board) == [(0, 0, 0, 0), (0, 1, 0, 100)]


def test_a_single_block_and_two_overlapping() -> None:
    one = ["........"] * 5 + ["111....."] * 3
    assert score(one) == [(0, 0, 0, 0), (0, 0, 1, 100)]
    # A 4 × 3 owned block holds two overlapping windows.
    four_by_three = ["........"] * 4 + ["000....."] * 4
    assert score(four_by_three) == [(0, 0, 2, 200), (0, 0, 0, 0)]
    assert score(four_by_three, DISJOINT) == [(0, 0, 1, 100), (0, 0, 0, 0)]


def test_overlapping_and_disjoint_blocks() -> None:
    six_by_six = ["........", "........"] + [".000000."] * 6
    assert score(six_by_six)[0] == (0, 0, 16, 1600)
    assert score(six_by_six, DISJOINT)[0] == (0, 0, 4, 400)
    apart = ["000.....", "000.....", "000.....", "........"] + ["....000."] * 3 + ["........"]
    assert score(apart)[0] == (0, 0, 2, 200)
    assert score(apart, DISJOINT)[0] == (0, 0, 2, 200)


def test_row_column_and_block_make_300() -> None:
    board = [
        "00000000",
        "000.....",
        "000.....",
        "0.......",
        "0.......",
        "0.......",
        "0.......",
        "0.......",
    ]
    assert score(board) == [(1, 1, 1, 300), (0, 0, 0, 0)]


def _brute_force_packing(windows: list[int]) -> int:
    for size in range(len(windows), 0, -1):
        for combo in itertools.combinations(windows, size):
            if all(a & b == 0 for a, b in itertools.combinations(combo, 2)):
                return size
    return 0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 35), min_size=0, max_size=5))
def test_disjoint_count_is_the_exact_maximum(chosen: list[int]) -> None:
    mask = 0
    for i in chosen:
        mask |= BLOCK_MASKS[i]
    owned = [m for m in BLOCK_MASKS if mask & m == m]
    assert block_bonuses(mask, DISJOINT) == _brute_force_packing(owned)
    assert block_bonuses(mask, OVERLAPPING) == len(owned)


def test_disjoint_option_changes_final_scores() -> None:
    game = load_game("alveoles", players=2, square_bonus="disjoint")
    assert game.options["square_bonus"] == "disjoint"
    with pytest.raises(OptionError) as err:
        load_game("alveoles", players=2, square_bonus="sometimes")
    assert err.value.field == "options.square_bonus"


# -------------------------------------------------------------------------- layouts


def test_classic_layout_matches_docs_rules() -> None:
    flat = [v for row in CLASSIC for v in row]
    assert sum(flat) == 500
    assert sorted(v for v in flat if v > 1) == sorted(
        [50] * 4 + [30] * 2 + [20] * 4 + [15] * 4 + [10] * 2 + [5] * 8
    )
    values = CLASSIC_VALUES
    assert values[0] == 15 and values[4] == 10 and values[59] == 10  # a1, e1, d8
    assert values[27] == values[28] == values[35] == values[36] == 50  # d4 e4 d5 e5
    assert values[14] == 30 and values[49] == 30  # g2, b7


def test_custom_layout_round_trips_and_totals() -> None:
    rows = [[r * 8 + c + 1 for c in range(8)] for r in range(8)]
    game = load_game("alveoles", players=2, layout=rows)
    again = load_game("alveoles", **game.params())
    assert again.values == game.values  # type: ignore[attr-defined]
    assert game.values[56] == 1  # type: ignore[attr-defined]  # a8 is printed first
    assert game.values[7] == 64  # type: ignore[attr-defined]  # h1 is printed last


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ([[1] * 8] * 2 + [[1] * 7] + [[1] * 8] * 5, "layout row 3 (board row 6) has 7 values"),
        ([[1] * 8] * 9, "layout has 9 rows; a board has 2 to 8 rows"),
        ([[1] * 3], "layout has 1 rows; a board has 2 to 8 rows"),
        ([[1] * 9] * 3, "layout row 1 has 9 values; a board has 2 to 8 columns"),
        ([[1]] * 3, "layout row 1 has 1 values; a board has 2 to 8 columns"),
        ("classic-1x3", "a board has 2 to 8 rows of squares, not 1"),
        ("classic-3x9", "a board has 2 to 8 columns of squares, not 9"),
        ("classic-3by4", "unknown layout 'classic-3by4'"),
        ([[1] * 8] * 7 + [[1] * 7 + [0]], "row 8 (board row 1), column h: 0 is not a positive"),
        ([[1] * 8] * 7 + [[1] * 7 + [-3]], "-3 is not a positive"),
        ([[1] * 8] * 7 + [[1] * 7 + [2.5]], "2.5 is not a whole number"),
        ([[1] * 8] * 7 + [[1] * 7 + [True]], "True is not a whole number"),
        ([[1] * 8] * 7 + ["11111111"], "row 8 (board row 1) is not a list"),
        ("spiral", "unknown layout 'spiral'"),
        ([1] * 63, "layout has 63 rows"),
    ],
)
def test_layout_errors_name_the_problem(layout: object, message: str) -> None:
    with pytest.raises(OptionError) as err:
        load_game("alveoles", players=2, layout=layout)
    assert message in str(err.value)
    assert err.value.field == "options.layout"


def test_layout_of_wrong_type() -> None:
    with pytest.raises(OptionError) as err:
        load_game("alveoles", players=2, layout=5)
    assert err.value.field == "options.layout"


def test_player_count_is_checked() -> None:
    for bad in (1, 5):
        with pytest.raises(OptionError):
            load_game("alveoles", players=bad)
