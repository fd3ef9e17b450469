"""Alvéoles knowledge shared by the state's agent hooks and the Alvéoles agents.

The central tool is :func:`cascade`: what happens when a plate is placed and every player after
it closes 3-sided squares as the forced-closing rule makes them (numbered first), until no square
is left with three plates. It tells who collects which square, so a sacrifice is priced by the
chain it hands over, white squares alternating between players and numbered ones staying with
whoever entered them.
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING

from engines.alveoles.notation import GROOVE_SQUARES, NUM_GROOVES, SQUARE_GROOVES
from engines.core import Action, Seat

if TYPE_CHECKING:
    from engines.alveoles.rules import AlveolesState

_INC: tuple[int, ...] = tuple(1 + (g << 3) for g in range(NUM_GROOVES))
_SUM: tuple[int, ...] = tuple(sum(g) for g in SQUARE_GROOVES)
EVAL_SCALE = 60.0
"""Point lead that evaluates to tanh(1) ≈ 0.76."""
_ALL = (1 << NUM_GROOVES) - 1
_SAMPLES = 6
"""Random picks tried before a rollout scans for safe grooves."""

Closure = tuple[Seat, int]
"""(seat that closed it, square)."""


def cascade(state: AlveolesState, first: Action | None = None) -> tuple[list[Closure], Seat]:
    """Closures caused by placing ``first`` (or none) and then every forced closing after it.

    Each forced player closes the most valuable 3-sided square (lowest groove on ties). Returns
    the closures in order and the seat to move once nothing is forced (-1 if the board is full).
    """
    code = state._code[:]
    forced = state._forced.copy()
    values = state.game.values
    nxt = state.game.next_seat
    player = state._player
    placed = NUM_GROOVES - len(state._empty)
    closures: list[Closure] = []
    groove = first
    while True:
        if groove is None:
            if not forced:
                break
            if len(forced) == 1:
                groove = next(iter(forced.values()))
            else:
                best_sq = max(forced, key=lambda s: (values[s], -forced[s]))
                groove = forced[best_sq]
        replay = False
        inc = _INC[groove]
        for sq in GROOVE_SQUARES[groove]:
            c = code[sq] + inc
            code[sq] = c
            sides = c & 7
            if sides == 3:
                forced[sq] = _SUM[sq] - (c >> 3)
            elif sides == 4:
                del forced[sq]
                closures.append((player, sq))
                if values[sq] > 1:
                    replay = True
        placed += 1
        if placed == NUM_GROOVES:
            return closures, -1
        if not replay:
            player = nxt[player]
        groove = None
    return closures, player


def handover(state: AlveolesState, groove: Action, seat: Seat) -> int:
    """Points others collect minus points ``seat`` collects if ``seat`` places ``groove`` now."""
    values = state.game.values
    closures, _ = cascade(state, groove)
    return sum(values[sq] if who != seat else -values[sq] for who, sq in closures)


def closing_value(state: AlveolesState, groove: Action) -> int:
    """Value of the squares ``groove`` would close right now."""
    values = state.game.values
    code = state._code
    return sum(values[sq] for sq in GROOVE_SQUARES[groove] if code[sq] & 7 == 3)


def safe_grooves(state: AlveolesState) -> list[Action]:
    """Empty grooves that give no square its third plate, ascending."""
    mask = state.safe_mask()
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _exposed_value(state: AlveolesState, groove: Action) -> int:
    """Value of the squares ``groove`` would leave with three plates (a cheap sacrifice price)."""
    values = state.game.values
    code = state._code
    total = 0
    for sq in GROOVE_SQUARES[groove]:
        if code[sq] & 7 == 2:
            total += values[sq]
    return total


def evaluate(state: AlveolesState, seat: Seat) -> float:
    """Point lead over the best opponent after the pending forced closings, squashed by tanh.

    The forced chain (3-sided squares about to be handed over) is played out by
    :func:`cascade`, so a position where the opponent must open a numbered chain to us already
    counts it.
    """
    points = state._points[:]
    if state._forced:
        values = state.game.values
        closures, _ = cascade(state)
        for who, sq in closures:
            points[who] += values[sq]
    mine = points[seat]
    best_other = max(p for s, p in enumerate(points) if s != seat)
    return math.tanh((mine - best_other) / EVAL_SCALE)


def rollout_action(state: AlveolesState, rng: random.Random) -> Action:
    """Greedy playout move: close (numbered first), else a random safe groove, else any."""
    forced = state._forced
    if forced:
        if len(forced) == 1:
            for g in forced.values():
                return g
        values = state._values
        numbered = [g for sq, g in forced.items() if values[sq] > 1]
        if numbered:
            return numbered[0] if len(numbered) == 1 else rng.choice(numbered)
        grooves = list(forced.values())
        return grooves[0] if len(grooves) == 1 else rng.choice(grooves)
    empty = state._empty
    unsafe = state._unsafe
    if _ALL & ~(unsafe | state._filled):
        # Some safe groove exists: sample a few, then fall back to listing them.
        n = len(empty)
        for _ in range(_SAMPLES):
            g = empty[int(rng.random() * n)]
            if not unsafe >> g & 1:
                return g
        return rng.choice(safe_grooves(state))
    return empty[int(rng.random() * len(empty))]


def ordered_actions(state: AlveolesState) -> list[Action]:
    """Closing moves (most valuable first), then safe moves, then sacrifices cheapest first."""
    if state._forced:
        return sorted(state.legal_actions(), key=lambda g: -closing_value(state, g))
    # Sacrifices are ranked by the value they leave 3-sided, a cheap stand-in for the whole
    # chain (``handover``): the search itself and ``evaluate`` play the chain out.
    unsafe = state._unsafe
    risky = sorted(
        (g for g in state._empty if unsafe >> g & 1), key=lambda g: _exposed_value(state, g)
    )
    return safe_grooves(state) + risky
