"""The seating designs: balance counted from scratch, Latin blocks, 2-player pairs, rotate kept."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines.seating import POLICIES, design_size, seat_agents, seating_design

Seating = Sequence[int]


def seat_counts(seatings: Sequence[Seating], n: int) -> list[int]:
    """How often each (agent, seat) cell occurs, every cell listed (zeros included)."""
    counts = Counter((agent, seat) for order in seatings for seat, agent in enumerate(order))
    return [counts[(a, s)] for a in range(n) for s in range(n)]


def follow_counts(seatings: Sequence[Seating], n: int) -> list[int]:
    """How often agent x plays right after agent y, for every ordered pair x != y.

    Play goes round the table: the player in seat s + 1 moves after seat s, and seat 0 after
    the last seat.
    """
    counts: Counter[tuple[int, int]] = Counter()
    for order in seatings:
        for seat in range(n):
            leader, follower = order[seat], order[(seat + 1) % n]
            counts[(follower, leader)] += 1
    return [counts[(x, y)] for x in range(n) for y in range(n) if x != y]


def balanced(seatings: Sequence[Seating], n: int) -> bool:
    return len(set(seat_counts(seatings, n))) == 1 and len(set(follow_counts(seatings, n))) == 1


def design(n: int, count: int, first: int = 0, policy: str = "balanced") -> list[list[int]]:
    return [seat_agents(n, policy, i) for i in range(first, first + count)]


@pytest.mark.parametrize("n", [3, 4, 5])
def test_one_full_design_is_every_seating_once(n: int) -> None:
    full = design(n, math.factorial(n))
    assert sorted(map(tuple, full)) == sorted(itertools.permutations(range(n)))


@pytest.mark.parametrize(("n", "per_cell", "per_pair"), [(3, 2, 3), (4, 6, 8), (5, 24, 30)])
def test_seats_and_right_after_pairs_are_exactly_equal_over_one_design(
    n: int, per_cell: int, per_pair: int
) -> None:
    # n! seatings: each agent in each seat (n-1)! times; each ordered pair n·(n-2)! times.
    full = design(n, math.factorial(n))
    assert seat_counts(full, n) == [per_cell] * (n * n)
    assert follow_counts(full, n) == [per_pair] * (n * (n - 1))


@pytest.mark.parametrize("n", [3, 4, 5])
def test_every_block_of_n_consecutive_matches_is_a_latin_square(n: int) -> None:
    size = math.factorial(n)
    for start in range(0, 2 * size, n):  # two cycles: the design repeats
        block = design(n, n, first=start)
        for order in block:
            assert sorted(order) == list(range(n))
        for seat in range(n):
            assert sorted(order[seat] for order in block) == list(range(n)), (start, seat)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_design_size_is_the_first_balanced_prefix_and_every_multiple_balances(n: int) -> None:
    cycle = math.factorial(n)
    seatings = design(n, 3 * cycle)
    first = next(k for k in range(1, len(seatings) + 1) if balanced(seatings[:k], n))
    assert first == design_size(n, "balanced") == {2: 2, 3: 6, 4: 12}[n]
    for k in range(first, len(seatings) + 1, first):
        assert balanced(seatings[:k], n), k


def test_four_player_prefixes_stay_close_to_balance() -> None:
    seatings = design(4, 24)
    for k in range(1, 25):
        seats, follows = seat_counts(seatings[:k], 4), follow_counts(seatings[:k], 4)
        assert max(seats) - min(seats) <= 1, k
        assert max(follows) - min(follows) <= 2, k
        assert (len(set(follows)) == 1) == (k % 6 == 0), k  # after 6, 12, 18 and 24 only


def test_three_players_start_with_the_cyclic_shifts_then_their_mirror() -> None:
    assert design(3, 6) == [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [1, 0, 2], [2, 1, 0]]
    assert seat_agents(3, "balanced", 6 * 1000 + 4) == [1, 0, 2]


FOUR_PLAYER_TABLE = (
    "0213 2031 1320 3102 | 0123 1032 2301 3210 | 0231 2013 1302 3120 | "
    "0312 3021 1230 2103 | 0132 1023 2310 3201 | 0321 3012 1203 2130"
)
"""The table printed in the module docstring and in docs/batches.md."""


def test_four_players_follow_the_documented_table() -> None:
    words = FOUR_PLAYER_TABLE.replace("|", " ").split()
    assert ["".join(map(str, order)) for order in design(4, 24, first=48)] == words


@given(i=st.integers(0, 10**9))
def test_two_players_balanced_is_the_seat_swapped_pairs_of_rotate(i: int) -> None:
    expected = [0, 1] if i % 2 == 0 else [1, 0]
    assert seat_agents(2, "balanced", i) == seat_agents(2, "rotate", i) == expected


@given(n=st.integers(1, 6), i=st.integers(0, 10**6))
def test_rotate_keeps_its_cyclic_shifts(n: int, i: int) -> None:
    assert seat_agents(n, "rotate", i) == [(s + i) % n for s in range(n)]


def test_rotate_with_three_players_always_seats_the_same_neighbours() -> None:
    # What ``balanced`` fixes: over any number of rotate matches, agent 1 always follows 0.
    counts = follow_counts(design(3, 600, policy="rotate"), 3)
    pairs = [(x, y) for x in range(3) for y in range(3) if x != y]
    assert dict(zip(pairs, counts, strict=True)) == {
        (1, 0): 600, (2, 1): 600, (0, 2): 600, (2, 0): 0, (0, 1): 0, (1, 2): 0
    }  # fmt: skip


def test_seating_design_says_when_a_batch_is_complete() -> None:
    assert seating_design(3, "balanced", 6000).complete
    short = seating_design(3, "balanced", 100)
    assert (short.policy, short.design_size, short.complete) == ("balanced", 6, False)
    assert "96 or 102" in short.note
    four = seating_design(4, "balanced", 6)
    assert (four.design_size, four.complete) == (12, False) and "12 matches" in four.note
    assert seating_design(4, "balanced", 36).complete
    assert seating_design(2, "balanced", 7).as_dict()["complete"] is False
    assert seating_design(2, "balanced", 8).complete
    rot = seating_design(3, "rotate", 99)
    assert (rot.design_size, rot.complete) == (3, True) and "right after the same" in rot.note
    assert seating_design(3, "fixed", 7).as_dict() == {
        "policy": "fixed",
        "design_size": 1,
        "complete": True,
        "note": "fixed seats: agent i always sits in seat i",
    }
    assert set(POLICIES) == {"balanced", "rotate", "fixed"}
    with pytest.raises(ValueError, match="seat policy"):
        seating_design(3, "shuffle", 6)


def test_two_player_balanced_batches_are_analysed_as_seat_swapped_pairs() -> None:
    from types import SimpleNamespace

    from analysis_data import seat_frame

    from analysis.agents import swapped_pairs
    from analysis.sprt import uses_pairs
    from analysis.tidy import to_wide

    win, loss = ((1.0, 0.0), (1.0, 0.0)), ((0.0, 1.0), (0.0, 1.0))
    # Matches 2k and 2k+1 swap the seats, as both balanced and rotate seat two players.
    w = to_wide(seat_frame([win, loss, loss, win, win, win], ["a", "b"]), 2)
    for policy in ("balanced", "rotate"):
        pairs = swapped_pairs(w, policy)
        assert pairs is not None and pairs.tolist() == [[0, 1], [2, 3], [4, 5]]
        assert uses_pairs(SimpleNamespace(players=2, seat_policy=policy))
        assert not uses_pairs(SimpleNamespace(players=3, seat_policy=policy))
    assert swapped_pairs(w, "fixed") is None
    assert not uses_pairs(SimpleNamespace(players=2, seat_policy="fixed"))
