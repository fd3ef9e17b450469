"""Who sits where: the seat policy of a batch, applied match by match."""

from __future__ import annotations

ROTATE = "rotate"
FIXED = "fixed"
POLICIES = (ROTATE, FIXED)


def seat_agents(n_agents: int, policy: str, match_index: int) -> list[int]:
    """The agent index for each seat of match ``match_index``.

    ``rotate``: seat s gets agent (s + match_index) % n, so every agent sits in every seat
    equally often over each block of n consecutive matches (with two players, matches 2k and
    2k+1 are a seat-swapped pair). ``fixed``: agent i always sits in seat i.
    """
    if n_agents < 1:
        raise ValueError(f"need at least one agent, got {n_agents}")
    if match_index < 0:
        raise ValueError(f"match index must be >= 0, got {match_index}")
    if policy == ROTATE:
        shift = match_index % n_agents
        return [(seat + shift) % n_agents for seat in range(n_agents)]
    if policy == FIXED:
        return list(range(n_agents))
    raise ValueError(f"unknown seat policy {policy!r}; one of {', '.join(POLICIES)}")
