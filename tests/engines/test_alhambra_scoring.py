"""Majority scoring with ties, for each round's table, and the two-player collector."""

from __future__ import annotations

import random

import pytest

from engines.alhambra import flow
from engines.alhambra.building import cell_of
from engines.alhambra.rules import Alhambra, AlhambraState
from engines.alhambra.scoring import majority_points, places
from engines.alhambra.tiles import TYPES

PAVILION, SERAGLIO, ARCADES, CHAMBERS, GARDEN, TOWER = range(6)


def one_type(kind: int, counts: list[int]) -> list[list[int]]:
    rows = []
    for c in counts:
        row = [0] * len(TYPES)
        row[kind] = c
        rows.append(row)
    return rows


@pytest.mark.parametrize(
    ("round_index", "kind", "counts", "expected"),
    [
        (0, PAVILION, [3, 1, 0], [1, 0, 0]),  # round 1 pays the first place only
        (0, TOWER, [2, 2, 1], [3, 3, 0]),  # two tied for 1st share 6 (+ nothing): 3 each
        (0, PAVILION, [2, 2, 1], [0, 0, 0]),  # 1 point shared by two, rounded down
        (1, TOWER, [3, 3, 1], [9, 9, 0]),  # (13 + 6) // 2; no third place in round 2
        (1, SERAGLIO, [0, 0, 5], [0, 0, 9]),  # holders of none score nothing
        (1, ARCADES, [4, 2, 2], [10, 1, 1]),  # 3 shared by the two tied for 2nd
        (2, GARDEN, [4, 2, 2, 0], [20, 8, 8, 0]),  # (12 + 5) // 2
        (2, PAVILION, [1, 1, 1], [8, 8, 8]),  # (16 + 8 + 1) // 3
        (2, CHAMBERS, [3, 3, 3, 3], [8, 8, 8, 8]),  # (19 + 11 + 4) // 4, no 4th place
        (2, TOWER, [5, 4, 3, 2], [21, 13, 6, 0]),
    ],
)
def test_majorities_with_ties_split_and_rounded_down(
    round_index: int, kind: int, counts: list[int], expected: list[int]
) -> None:
    assert majority_points(one_type(kind, counts), round_index) == expected


def test_places_after_a_tie_continue_after_the_tied_places() -> None:
    assert places([5, 5, 3], (16, 8, 1)) == [12, 12, 1]  # places 1–2 shared, then 3rd
    assert places([5, 3, 3], (16, 8, 1)) == [16, 4, 4]


def test_all_types_add_up() -> None:
    counts = [[1, 0, 2, 0, 0, 3], [1, 1, 0, 0, 0, 1]]
    # pavilion tie (8 + 1) // 2 = 4 each; seraglio 9 to seat 1; arcades 10 to seat 0;
    # tower 13 to seat 0 and 6 to seat 1.
    assert majority_points(counts, 1) == [4 + 10 + 13, 4 + 9 + 6]


def _two_player_state(seed: int = 3) -> AlhambraState:
    return Alhambra(2, {}).new_initial_state(seed)


def test_the_collector_takes_six_tiles_at_setup_and_only_in_two_player_games() -> None:
    state = _two_player_state()
    assert len(state.collector_tiles) == 6
    assert len(state.bag) == 54 - 4 - 6
    three = Alhambra(3, {}).new_initial_state(3)
    assert three.collector_tiles == [] and len(three.bag) == 50


def test_the_collector_counts_in_majorities_and_scores_no_walls() -> None:
    state = _two_player_state()
    state.collector_tiles = [44, 45, 46]  # three towers
    state.grids[0][cell_of(1, 0)] = 52  # one tower (open) for seat 0
    state.grids[1][cell_of(1, 0)] = 53  # one tower (open) for seat 1
    state.grids[1][cell_of(0, 1)] = 7  # a pavilion for seat 1
    before = len(state.collector_tiles)
    flow.score_round(state, -2)  # scoring card 2: round 2 table
    # Towers: collector first (13); seats tied for 2nd share (6 + 0) // 2 = 3 each.
    # Pavilion: seat 1 alone, 8.
    assert [state.round_points[s][1][0] for s in (0, 1)] == [3, 3 + 8]
    assert state.collector_points == [0, 13, 0]
    # After scoring 2 the collector takes a third of the bag, rounded down.
    assert len(state.collector_tiles) == before + 44 // 3


def test_gifts_after_scoring_one_and_the_give_action() -> None:
    state = _two_player_state()
    flow.score_round(state, -1)
    assert len(state.collector_tiles) == 12 and len(state.bag) == 38
    rng = random.Random(0)
    gave = False
    while not state.is_terminal() and not gave:
        legal = state.legal_actions()
        gives = [a for a in legal if state.action_to_string(a).startswith("give")]
        if gives:
            text = state.action_to_string(gives[0])
            held = len(state.collector_tiles)
            state.apply_string(text)
            assert len(state.collector_tiles) == held + 1
            assert state.collector_tiles[-1] == int(text.split()[1])
            gave = True
        else:
            state.apply(rng.choice(legal))
    assert gave
    assert state.tiles_in_play() == 54
