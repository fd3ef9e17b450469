"""Who sits where: the seat policy of a batch, applied match by match.

A seating is a list ``order`` with ``order[seat]`` the index of the agent spec in that seat.
Play goes round the table: seat s + 1 plays right after seat s, and seat 0 right after the
last seat. Three policies:

``balanced`` (the default when the agents differ)
    Every agent sits in every seat equally often, and every ordered pair "X plays right after
    Y" occurs equally often, once the batch holds whole rounds of the design:

    - 2 players: matches 2k and 2k+1 are the same pairing with the seats swapped (a round is
      2 matches), exactly as ``rotate``.
    - 3 players: all 6 seatings, match i taking ``BALANCED_ORDERS[3][i % 6]``: the 3 cyclic
      shifts 012, 120, 201, then 021, 102, 210. Each block of 3 is a Latin square (every agent
      once in every seat); the "right after" pairs balance over the 6 (a round is 6 matches,
      the fewest that can balance both).
    - 4 players: all 24 seatings, match i taking ``BALANCED_ORDERS[4][i % 24]``, in six
      Latin-square blocks of 4::

          0213 2031 1320 3102 | 0123 1032 2301 3210 | 0231 2013 1302 3120 |
          0312 3021 1230 2103 | 0132 1023 2310 3201 | 0321 3012 1203 2130

      Seats balance after every block of 4; the 12 "right after" pairs balance after 6, 12,
      18 and 24 matches (each half holds every cyclic order of the four agents twice), so a
      round is 12 matches, the fewest that can balance both (seats need a multiple of 4
      matches, the pairs a multiple of 3). No prefix is off by more than 2 in any "right
      after" count, nor by more than 1 in any seat count.
    - 5 or more players: all n! seatings in blocks of n: the seatings with agent 0 in seat 0,
      in lexicographic order, each followed by its agent shifts (agent a becomes
      (a + k) mod n, k = 1 … n − 1). Each block is a Latin square; the pairs balance over n!.

``rotate`` (kept for batches stored with it)
    Seat s gets agent (s + match_index) % n: every agent sits in every seat equally often over
    each block of n matches, but each agent always plays right after the same agent. With two
    players it is the same as ``balanced``.

``fixed``
    Agent i always sits in seat i (the default when every agent is the same).

These orders are part of what a stored batch means (``replay`` and ``resume`` recompute the
seating of match i from the stored policy), so they must never change.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any


class SeatPolicy(StrEnum):
    """How a batch seats its agents, match by match (the module doc). Stored as its text."""

    BALANCED = "balanced"
    ROTATE = "rotate"
    FIXED = "fixed"


BALANCED, ROTATE, FIXED = SeatPolicy.BALANCED, SeatPolicy.ROTATE, SeatPolicy.FIXED
POLICIES = tuple(SeatPolicy)

_FOUR_PLAYERS = (
    "0213 2031 1320 3102 0123 1032 2301 3210 0231 2013 1302 3120 "
    "0312 3021 1230 2103 0132 1023 2310 3201 0321 3012 1203 2130"
)
BALANCED_ORDERS: dict[int, tuple[tuple[int, ...], ...]] = {
    1: ((0,),),
    2: ((0, 1), (1, 0)),
    3: ((0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 2, 1), (1, 0, 2), (2, 1, 0)),
    4: tuple(tuple(int(c) for c in word) for word in _FOUR_PLAYERS.split()),
}
"""The ``balanced`` design for 1–4 players: match i takes entry i % len (see the module doc)."""

BALANCED_ROUND = {1: 1, 2: 2, 3: 6, 4: 12}
"""Matches after which a ``balanced`` batch of n players is balanced (and again at multiples)."""


def _check(n_agents: int, match_index: int) -> None:
    if n_agents < 1:
        raise ValueError(f"need at least one agent, got {n_agents}")
    if match_index < 0:
        raise ValueError(f"match index must be >= 0, got {match_index}")


def _nth_permutation(items: list[int], index: int) -> list[int]:
    """Permutation number ``index`` of ``items`` in lexicographic order (factorial base)."""
    pool = list(items)
    out = []
    for left in range(len(pool), 0, -1):
        step = math.factorial(left - 1)
        digit, index = divmod(index, step)
        out.append(pool.pop(digit))
    return out


def _balanced(n: int, match_index: int) -> list[int]:
    if n in BALANCED_ORDERS:
        table = BALANCED_ORDERS[n]
        return list(table[match_index % len(table)])
    position = match_index % math.factorial(n)
    block, shift = divmod(position, n)
    base = [0, *_nth_permutation(list(range(1, n)), block)]
    return [(a + shift) % n for a in base]


def seat_agents(n_agents: int, policy: str, match_index: int) -> list[int]:
    """The agent index for each seat of match ``match_index`` (see the module docstring)."""
    _check(n_agents, match_index)
    if policy == BALANCED:
        return _balanced(n_agents, match_index)
    if policy == ROTATE:
        shift = match_index % n_agents
        return [(seat + shift) % n_agents for seat in range(n_agents)]
    if policy == FIXED:
        return list(range(n_agents))
    raise ValueError(f"unknown seat policy {policy!r}; one of {', '.join(POLICIES)}")


def seat_swapped_pairs(players: int, policy: str) -> bool:
    """True when matches 2k and 2k+1 are one pairing with the seats swapped (two players,
    ``balanced`` or ``rotate``): what pentanomial statistics need."""
    return players == 2 and policy in (BALANCED, ROTATE)


@dataclass(frozen=True)
class SeatingDesign:
    """Whether a batch's size holds whole rounds of its seating design.

    ``design_size``: the matches of one round (the batch is balanced at every multiple);
    ``complete``: the batch's matches are a multiple of it; ``note``: one sentence for people.
    """

    policy: str
    design_size: int
    complete: bool
    note: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def design_size(players: int, policy: str) -> int:
    """Matches in one round of the policy's design for ``players`` seats."""
    if players < 1:
        raise ValueError(f"need at least one player, got {players}")
    if policy == BALANCED:
        return BALANCED_ROUND.get(players) or math.factorial(players)
    if policy == ROTATE:
        return players
    if policy == FIXED:
        return 1
    raise ValueError(f"unknown seat policy {policy!r}; one of {', '.join(POLICIES)}")


def opening_round(players: int, policy: str) -> int:
    """Matches that play one opening with their different seatings: a round of the design, or
    one Latin-square block of ``players`` matches where the whole design (n! for five or more
    players) is too long to share one opening."""
    size = design_size(players, policy)
    return size if size <= BALANCED_ROUND[4] else players


def seating_design(players: int, policy: str, matches: int) -> SeatingDesign:
    """Is a batch of ``matches`` matches a whole number of rounds of its seating design?"""
    size = design_size(players, policy)
    complete = matches >= size and matches % size == 0
    if policy == FIXED:
        note = "fixed seats: agent i always sits in seat i"
        return SeatingDesign(policy, size, True, note)
    both = policy == BALANCED and players > 2
    if complete:
        after = ", and right after every other agent," if both else ""
        note = (
            f"{matches // size} whole round(s) of {size} matches: every agent sits in every "
            f"seat{after} equally often"
        )
    else:
        below = matches - matches % size
        suggestion = f"{below} or {below + size}" if below else str(size)
        what = "seats and who plays right after whom are" if both else "seats are"
        note = (
            f"incomplete seating design: {matches} matches is not a whole number of rounds of "
            f"{size}, so {what} not exactly balanced; {suggestion} matches would complete it"
        )
    if policy == ROTATE and players > 2:
        note += "; with rotate each agent always plays right after the same agent (see balanced)"
    return SeatingDesign(policy, size, complete, note)
