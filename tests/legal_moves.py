"""A position's legal moves in its game's notation, and perft: the facts of docs/rules/<game>.md
that the rules tests check (move lists, move counts a few plies deep), read through the one
state API every game has."""

from __future__ import annotations

from engines.core import State


def names(state: State) -> list[str]:
    """The legal moves of ``state`` in its game's notation, in the order the rules give them."""
    return [state.action_to_string(a) for a in state.legal_actions()]


def perft(state: State, depth: int) -> int:
    """The number of move sequences ``depth`` plies long from ``state`` (fewer where a game
    ends), each ply played on a copy."""
    if depth == 0:
        return 1
    total = 0
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        total += perft(child, depth - 1)
    return total
