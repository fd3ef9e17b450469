"""Alvéoles knowledge shared by the state's agent hooks and the Alvéoles agents.

The central tool is :func:`cascade`: what happens when a plate is placed and every player after
it closes 3-sided squares as the forced-closing rule makes them (numbered first), until no square
is left with three plates. It tells who collects which square, so a sacrifice is priced by the
chain it hands over, white squares alternating between players and numbered ones staying with
whoever entered them.

Everything here reads the position through the state's read API, the part of it that
:class:`Position` names, and updates square codes with the tables of
:mod:`engines.alveoles.notation`, the same ones the state's ``apply`` uses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Protocol

from engines.alveoles.notation import GROOVE_SQUARES, GROOVE_SUM, PLATE_CODE
from engines.core import Action, Seat

EVAL_SCALE = 60.0
"""Point lead that evaluates to tanh(1) ≈ 0.76."""

Closure = tuple[Seat, int]
"""(seat that closed it, square)."""


class Rules(Protocol):
    """What the heuristics read of the game (:class:`engines.alveoles.rules.Alveoles`)."""

    @property
    def values(self) -> Sequence[int]: ...

    @property
    def next_seat(self) -> Sequence[Seat]: ...


class Position(Protocol):
    """What the heuristics read of a position: part of the read API of
    :class:`engines.alveoles.rules.AlveolesState`, documented there.

    A protocol rather than the class itself, so that this module, which the state's hooks call,
    does not import the state's module back.
    """

    @property
    def game(self) -> Rules: ...

    @property
    def square_codes(self) -> Sequence[int]: ...

    @property
    def forced(self) -> Mapping[int, int]: ...

    @property
    def empty_grooves(self) -> Sequence[Action]: ...

    @property
    def unsafe_mask(self) -> int: ...

    def current_player(self) -> Seat: ...

    def legal_actions(self) -> list[Action]: ...

    def safe_mask(self) -> int: ...

    def square_points(self) -> list[int]: ...


def cascade(state: Position, first: Action | None = None) -> tuple[list[Closure], Seat]:
    """Closures caused by placing ``first`` (or none) and then every forced closing after it.

    Each forced player closes the most valuable 3-sided square (lowest groove on ties). Returns
    the closures in order and the seat to move once nothing is forced (-1 if the board is full).
    """
    code = list(state.square_codes)
    forced = dict(state.forced)
    values = state.game.values
    nxt = state.game.next_seat
    player = state.current_player()
    left = len(state.empty_grooves)
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
        inc = PLATE_CODE[groove]
        for sq in GROOVE_SQUARES[groove]:
            c = code[sq] + inc
            code[sq] = c
            sides = c & 7
            if sides == 3:
                forced[sq] = GROOVE_SUM[sq] - (c >> 3)
            elif sides == 4:
                del forced[sq]
                closures.append((player, sq))
                if values[sq] > 1:
                    replay = True
        left -= 1
        if not left:
            return closures, -1
        if not replay:
            player = nxt[player]
        groove = None
    return closures, player


def handover(state: Position, groove: Action, seat: Seat) -> int:
    """Points others collect minus points ``seat`` collects if ``seat`` places ``groove`` now."""
    values = state.game.values
    closures, _ = cascade(state, groove)
    return sum(values[sq] if who != seat else -values[sq] for who, sq in closures)


def closing_value(state: Position, groove: Action) -> int:
    """Value of the squares ``groove`` would close right now."""
    values = state.game.values
    code = state.square_codes
    return sum(values[sq] for sq in GROOVE_SQUARES[groove] if code[sq] & 7 == 3)


def safe_grooves(state: Position) -> list[Action]:
    """Empty grooves that give no square its third plate, ascending."""
    mask = state.safe_mask()
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _exposed_value(values: Sequence[int], code: Sequence[int], groove: Action) -> int:
    """Value of the squares ``groove`` would leave with three plates (a cheap sacrifice price),
    given the square values and the square codes."""
    total = 0
    for sq in GROOVE_SQUARES[groove]:
        if code[sq] & 7 == 2:
            total += values[sq]
    return total


def evaluate(state: Position, seat: Seat) -> float:
    """Point lead over the best opponent after the pending forced closings, squashed by tanh.

    The forced chain (3-sided squares about to be handed over) is played out by
    :func:`cascade`, so a position where the opponent must open a numbered chain to us already
    counts it.
    """
    points = state.square_points()
    if state.forced:
        values = state.game.values
        closures, _ = cascade(state)
        for who, sq in closures:
            points[who] += values[sq]
    mine = points[seat]
    best_other = max(p for s, p in enumerate(points) if s != seat)
    return math.tanh((mine - best_other) / EVAL_SCALE)


def ordered_actions(state: Position) -> list[Action]:
    """Closing moves (most valuable first), then safe moves, then sacrifices cheapest first."""
    if state.forced:
        return sorted(state.legal_actions(), key=lambda g: -closing_value(state, g))
    # Sacrifices are ranked by the value they leave 3-sided, a cheap stand-in for the whole
    # chain (``handover``): the search itself and ``evaluate`` play the chain out.
    # The key is called once per sacrifice of every searched node: it gets the tables bound
    # once, not the state (one property read per call cost 11 % of ``ordered_actions``).
    unsafe = state.unsafe_mask
    risky = sorted(
        (g for g in state.empty_grooves if unsafe >> g & 1),
        key=partial(_exposed_value, state.game.values, state.square_codes),
    )
    return safe_grooves(state) + risky
