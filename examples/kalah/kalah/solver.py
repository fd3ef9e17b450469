"""Kalah solved exactly for small boards: the ``perfect`` agent.

Seeds in a store never come back into play, so what the player to move can still gain depends
only on the houses: ``future(houses)`` is the store difference the player to move adds from
here on against any defence, and a position's solved margin is the store difference so far
plus that. The memo is keyed on the houses alone, the mover's row first, which makes every
position and its mirror (same houses, other seat to move) one entry, whatever the stores hold.

A move that lands in one's own store keeps the turn, so a child's value is added, not negated,
when the mover is the same. Moves are played by ``KalahState.apply`` itself, so the solver
follows every rule and option of the game (``empty_capture`` included) without a second copy
of them. The agent plays a move of the best margin, drawn from its generator among equals. The
search is whole-game, so the agent refuses boards beyond ``MAX_SEEDS_SOLVED`` seeds in all.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping
from typing import Any

from engines.contract import Action, AgentType, Game, OptionError, State
from kalah.rules import KalahState

MAX_SEEDS_SOLVED = 24
"""Seeds on the board (2 x houses x seeds) up to which the whole game is searched: 4 houses
of 3 (the largest) takes about a minute and a half and 1.5 GB here."""

_memo: dict[tuple[Hashable, bytes], int] = {}


def _rules_key(game: Game) -> Hashable:
    """What of a game's options changes the value of a row of houses (the seeds at the start
    do not: only the houses now)."""
    return (int(game.options["houses"]), bool(game.options.get("empty_capture", False)))


def _mover_first(state: KalahState) -> bytes:
    """The houses, the mover's row first."""
    mine, theirs = state.side(state.to_move), state.side(1 - state.to_move)
    return bytes(mine + theirs)


def _played(game: Game, rows: bytes, action: Action) -> KalahState:
    """``action`` played by seat 0 from ``rows`` (its houses first) with both stores empty."""
    houses = len(rows) // 2
    state = KalahState.__new__(KalahState)
    state.game = game
    state.houses = houses
    state.pits = [*rows[:houses], 0, *rows[houses:], 0]
    state.to_move = 0
    state.over = False
    state.apply(action)
    return state


def _gain(game: Game, rows: bytes, action: Action) -> int:
    """The store difference the mover ends with after ``action`` from ``rows`` and best play
    on both sides after it."""
    child = _played(game, rows, action)
    gained = child.pits[child.store(0)] - child.pits[child.store(1)]
    if child.over:
        return gained
    after = _future(game, _mover_first(child))
    return gained + after if child.to_move == 0 else gained - after


def _future(game: Game, rows: bytes) -> int:
    """What the player to move adds to the store difference from ``rows`` with best play."""
    key = (_rules_key(game), rows)
    known = _memo.get(key)
    if known is not None:
        return known
    houses = len(rows) // 2
    best = max(_gain(game, rows, a) for a in range(houses) if rows[a])
    _memo[key] = best
    return best


def margin(state: KalahState) -> int:
    """The final store difference, seat 0's minus seat 1's, under best play from ``state``."""
    so_far = state.pits[state.store(0)] - state.pits[state.store(1)]
    if state.over:
        return so_far
    ahead = _future(state.game, _mover_first(state))
    return so_far + ahead if state.to_move == 0 else so_far - ahead


def best_actions(state: KalahState) -> list[tuple[Action, int]]:
    """Every legal move with the final store difference it secures for the player to move
    (the mover's store minus the other's, under best play after it)."""
    seat = state.to_move
    so_far = state.pits[state.store(seat)] - state.pits[state.store(1 - seat)]
    rows = _mover_first(state)
    return [(a, so_far + _gain(state.game, rows, a)) for a in state.legal_actions()]


def forget() -> None:
    """Drop every solved position (the memo grows with each board solved)."""
    _memo.clear()


class PerfectAgent:
    """Plays a move of the best solved margin (ties drawn from its generator)."""

    def __init__(self, game: Game, rng: random.Random) -> None:
        self.rng = rng

    def step(self, state: State) -> Action:
        assert isinstance(state, KalahState)
        valued = best_actions(state)
        top = max(v for _, v in valued)
        return self.rng.choice([a for a, v in valued if v == top])


def _check_small(game: Game, params: Mapping[str, Any], prefix: str) -> None:
    seeds = 2 * int(game.options["houses"]) * int(game.options["seeds"])
    if seeds > MAX_SEEDS_SOLVED:
        raise OptionError(
            f"perfect solves boards of up to {MAX_SEEDS_SOLVED} seeds; this one has {seeds}",
            field=f"{prefix}name",
        )


PERFECT = AgentType(
    name="perfect",
    description=f"Exact play from a whole-game search (boards of up to {MAX_SEEDS_SOLVED} seeds).",
    factory=PerfectAgent,
    games=("kalah",),
    check=_check_small,
)
