"""Sampling units: matches linked by a shared opening or a shared round form one unit."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from analysis.units import sampling_units
from engines.seating import opening_round


def test_independent_openings_and_single_rounds_make_one_unit_per_match() -> None:
    u = sampling_units(np.arange(5), np.array([11, 12, 13, 14, 15]), 1)
    assert u.count == 5 and u.distinct_openings == 5 and u.openings_known
    assert list(u.label) == [0, 1, 2, 3, 4]


def test_one_opening_repeated_is_one_unit_whatever_the_rounds() -> None:
    u = sampling_units(np.arange(40), np.full(40, 7), 2)
    assert u.count == 1 and u.distinct_openings == 1
    assert set(u.label) == {0}


def test_rounds_and_openings_chain_into_components() -> None:
    # Pairs (0,1) (2,3) (4,5); match 1 and match 4 share an opening: pairs 0 and 2 join.
    u = sampling_units(np.arange(6), np.array([1, 2, 3, 4, 2, 5]), 2)
    assert list(u.label) == [0, 0, 1, 1, 0, 0]
    assert u.count == 2 and u.distinct_openings == 5


def test_unknown_openings_link_by_round_only() -> None:
    u = sampling_units(np.array([0, 1, 2, 3]), np.array([np.nan, np.nan, 9, 9]), 2)
    assert list(u.label) == [0, 0, 1, 1]
    assert not u.openings_known and u.distinct_openings == 1


def test_empty() -> None:
    u = sampling_units(np.zeros(0, np.int64), np.zeros(0), 2)
    assert u.count == 0


@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=40),
    st.integers(1, 5),
)
def test_units_are_the_components_found_by_a_plain_search(openings: list[int], size: int) -> None:
    m = len(openings)
    u = sampling_units(np.arange(m), np.array(openings, dtype=float), size)
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
