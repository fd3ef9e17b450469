"""Sampling units: the rounds of the batch's design, linked by opening only when declared."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from analysis.independence import diversity_warning
from analysis.units import links_openings, sampling_units
from engines.seating import opening_round


def test_independent_openings_and_single_rounds_make_one_unit_per_match() -> None:
    u = sampling_units(np.arange(5), np.array([11, 12, 13, 14, 15]), 1)
    assert u.count == 5 and u.distinct_openings == 5 and u.openings_known
    assert list(u.label) == [0, 1, 2, 3, 4] and u.linked_by == "round"


def test_equal_openings_drawn_independently_stay_apart() -> None:
    # Player noise draws each match's opening afresh: forty equal keys are forty draws.
    u = sampling_units(np.arange(40), np.full(40, 7), 1)
    assert u.count == 40 and u.distinct_openings == 1
    paired = sampling_units(np.arange(40), np.full(40, 7), 2)
    assert paired.count == 20 and list(paired.label[:4]) == [0, 0, 1, 1]


def test_a_declared_book_sample_links_one_opening_into_one_unit() -> None:
    u = sampling_units(np.arange(40), np.full(40, 7), 2, by_opening=True)
    assert u.count == 1 and u.linked_by == "one line"
    two = sampling_units(np.arange(40), np.tile([7, 7, 9, 9], 10), 2, by_opening=True)
    assert two.count == 2 and two.linked_by == "opening and round"


def test_rounds_and_declared_openings_chain_into_components() -> None:
    # Pairs (0,1) (2,3) (4,5); match 1 and match 4 share an opening: pairs 0 and 2 join.
    openings = np.array([1, 2, 3, 4, 2, 5])
    u = sampling_units(np.arange(6), openings, 2, by_opening=True)
    assert list(u.label) == [0, 0, 1, 1, 0, 0]
    assert u.count == 2 and u.distinct_openings == 5
    assert sampling_units(np.arange(6), openings, 2).count == 3


def test_matches_that_replay_one_game_join_with_their_rounds() -> None:
    # Deterministic players, two seatings: two distinct games in forty matches, one per seat
    # of every pair, chain every pair into one unit.
    games = np.tile([1, 2], 20)
    u = sampling_units(np.arange(40), games, 2, game=games)
    assert u.count == 1 and u.linked_by == "one line" and u.distinct_games == 2
    # The last pair plays two other games: a unit of its own.
    other = np.concatenate([np.tile([1, 2], 19), [3, 4]])
    assert sampling_units(np.arange(40), other, 2, game=other).count == 2
    # A batch of one round is what it is: its matches are not replays of anything.
    one = sampling_units(np.arange(2), np.array([1, 2]), 2, game=np.array([1, 1]))
    assert one.count == 1 and one.linked_by == "round"


def test_unknown_openings_link_by_round_only() -> None:
    u = sampling_units(np.array([0, 1, 2, 3]), np.array([np.nan, np.nan, 9, 9]), 2, by_opening=True)
    assert list(u.label) == [0, 0, 1, 1]
    assert not u.openings_known and u.distinct_openings == 1


def test_what_links_openings_is_declared() -> None:
    assert links_openings(None)  # stored before variations: nothing says what was drawn
    assert not links_openings({"kind": "noise", "plies": 10})
    assert not links_openings({"kind": "openings", "source": "book", "book": [["a"]]})
    assert links_openings({"kind": "openings", "source": "book", "units": "line"})


def test_empty() -> None:
    u = sampling_units(np.zeros(0, np.int64), np.zeros(0), 2)
    assert u.count == 0


@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=40),
    st.integers(1, 5),
)
def test_units_are_the_components_found_by_a_plain_search(openings: list[int], size: int) -> None:
    m = len(openings)
    u = sampling_units(np.arange(m), np.array(openings, dtype=float), size, by_opening=True)
    # Independent check: flood fill over "same round or same opening".
    seen = [-1] * m
    comp = 0
    for start in range(m):
        if seen[start] >= 0:
            continue
        stack = [start]
        seen[start] = comp
        while stack:
            i = stack.pop()
            for j in range(m):
                linked = j // size == i // size or openings[j] == openings[i]
                if seen[j] < 0 and linked:
                    seen[j] = comp
                    stack.append(j)
        comp += 1
    assert u.count == comp
    assert list(u.label) == seen  # both number components by first appearance


def test_opening_rounds_follow_the_seating_design() -> None:
    assert opening_round(2, "balanced") == 2
    assert opening_round(3, "balanced") == 6
    assert opening_round(4, "balanced") == 12
    assert opening_round(5, "balanced") == 5  # a Latin block, not all 120 seatings
    assert opening_round(3, "rotate") == 3
    assert opening_round(4, "fixed") == 1


def test_a_batch_drawing_no_opening_that_begins_with_two_is_warned() -> None:
    # A deterministic `medium` with no variation: 40 matches, every one a different game after
    # the opening, but only two openings between them.
    openings = np.array([7, 9] * 20, dtype=object)
    units = sampling_units(np.arange(40), openings, 2, game=np.arange(40))
    said = diversity_warning(units, 40, 40, {"kind": "none"})
    assert said is not None and "40 matches begin with 2 distinct openings" in said
    # The same openings drawn by player noise are draws of the noise: no such warning.
    assert diversity_warning(units, 40, 40, {"kind": "noise", "plies": 4}) is None
    # Five openings in 40 matches (more than a tenth) draw no warning either.
    five = sampling_units(np.arange(40), np.array([1, 2, 3, 4, 5] * 8, dtype=object), 2,
                          game=np.arange(40))  # fmt: skip
    assert diversity_warning(five, 40, 40, {"kind": "none"}) is None
