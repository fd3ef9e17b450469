"""What the OpenSpiel bridge needs to know of each of our games beyond the contract.

Per game: its action ids (:mod:`engines.openspiel.actions`), its observation tensor where the
board allows one (a shape and a function filling it from the public read API), and for a game
with chance, how to deal its start and swap its generator (:mod:`engines.openspiel.chance`).

An installed game has no entry here: :func:`adapter_of` gives it the generic one when the
contract alone is enough, that is when it has neither chance nor hidden information (the
bridge cannot show chance drawn inside ``apply`` as chance nodes, nor know what a seat's
observation may show); its action codes are its ids, below its ``num_distinct_actions``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engines.abalone.board import CELLS
from engines.abalone.board import NUM_ACTIONS as ABALONE_ACTIONS
from engines.abalone.rules import AbaloneState
from engines.alhambra import flow
from engines.alhambra.notation import NUM_ACTIONS as ALHAMBRA_ACTIONS
from engines.alhambra.rules import Alhambra, AlhambraState
from engines.alhambra.tiles import NUM_TILES
from engines.alquerque.board import POINTS
from engines.alquerque.rules import AlquerqueGame, AlquerqueState
from engines.alveoles.notation import NUM_GROOVES, NUM_SQUARES
from engines.alveoles.rules import AlveolesState
from engines.core import Game, GameType, OptionError, State
from engines.openspiel.actions import Bounded, Codec, Identity, alquerque_table

Filler = Callable[[Any, np.ndarray], None]
"""``fill(state, tensor)``: write a position into a zeroed tensor of the adapter's shape."""


@dataclass(frozen=True)
class Adapter:
    """One game's extras for the bridge; ``shape(players)`` None: no observation tensor."""

    codec: Callable[[], Codec]
    shape: Callable[[int], tuple[int, ...]] | None = None
    fill: Filler | None = None
    deal: Callable[[Game, random.Random], State] | None = None
    """A game with chance: its start position, every draw from the generator given."""
    set_rng: Callable[[State, random.Random], None] | None = None
    max_chance_outcomes: int = 0
    longest: Callable[[Game], int] | None = None
    """The longest game the rules allow, where the declared length is only a default cap."""


# --------------------------------------------------------------------------- tensors


def _alquerque(state: AlquerqueState, out: np.ndarray) -> None:
    """Planes white, black, empty over the 25 points (a1..e5), then the side to move."""
    board = out[: 3 * POINTS].reshape(3, POINTS)
    for p in range(POINTS):
        bit = 1 << p
        board[0 if state.white & bit else 1 if state.black & bit else 2, p] = 1.0
    if not state.is_terminal():
        out[3 * POINTS + state.current_player()] = 1.0


def _abalone_shape(players: int) -> tuple[int, ...]:
    return ((players + 1) * len(CELLS) + players,)


def _abalone(state: AbaloneState, out: np.ndarray) -> None:
    """One plane per seat and one for empty cells over the 61 cells (A1..I9), then the seat
    to move."""
    players = state.game.num_players
    cells = len(CELLS)
    boards = [state.board(s) for s in range(players)]
    for i, cell in enumerate(CELLS):
        bit = 1 << cell
        owner = next((s for s in range(players) if boards[s] & bit), players)
        out[owner * cells + i] = 1.0
    if not state.is_terminal():
        out[(players + 1) * cells + state.current_player()] = 1.0


def _alveoles_shape(players: int) -> tuple[int, ...]:
    return ((players + 1) * NUM_SQUARES + NUM_GROOVES + players,)


def _alveoles(state: AlveolesState, out: np.ndarray) -> None:
    """Square owners (one plane per seat, one for unclaimed) over a1..h8, then a plate flag
    per groove, then the seat to move."""
    players = state.game.num_players
    for sq in range(NUM_SQUARES):
        owner = state.owner(sq)
        out[(players if owner < 0 else owner) * NUM_SQUARES + sq] = 1.0
    grooves = (players + 1) * NUM_SQUARES
    for groove in range(NUM_GROOVES):
        if state.has_plate(groove):
            out[grooves + groove] = 1.0
    if not state.is_terminal():
        out[grooves + NUM_GROOVES + state.current_player()] = 1.0


def _alquerque_longest(game: Game) -> int:
    """At most 23 captures (the game ends when a side has no piece left, so one side loses at
    most 11 before the other's last), each after fewer than ``no_capture_limit`` quiet plies,
    and the draw after that many more."""
    assert isinstance(game, AlquerqueGame)
    return 24 * (game.no_capture_limit + 1)


# --------------------------------------------------------------------------- chance


def _alhambra_deal(game: Game, rng: random.Random) -> State:
    """Alhambra's start (``Alhambra.new_initial_state`` with the generator given)."""
    assert isinstance(game, Alhambra)
    state = AlhambraState(game, rng)
    flow.setup(state)
    return state


def _alhambra_rng(state: State, rng: random.Random) -> None:
    assert isinstance(state, AlhambraState)
    state.rng = rng


ADAPTERS: dict[str, Adapter] = {
    "alquerque": Adapter(
        codec=alquerque_table,
        shape=lambda players: (3 * POINTS + 2,),
        fill=_alquerque,
        longest=_alquerque_longest,
    ),
    "abalone": Adapter(
        codec=lambda: Identity(ABALONE_ACTIONS),
        shape=_abalone_shape,
        fill=_abalone,
    ),
    "alveoles": Adapter(codec=lambda: Identity(NUM_GROOVES), shape=_alveoles_shape, fill=_alveoles),
    "alhambra": Adapter(
        codec=lambda: Identity(ALHAMBRA_ACTIONS),
        deal=_alhambra_deal,
        set_rng=_alhambra_rng,
        # The longest shuffle is the money deck's (108 cards; the tile bag holds 54).
        max_chance_outcomes=max(108, NUM_TILES) + 1,
    ),
}


def generic_adapter(game_type: GameType) -> Adapter:
    """The adapter of an installed game that declares none: its codes as action ids (checked
    against its ``num_distinct_actions``), no observation tensor. A game with chance or hidden
    information is refused (``OptionError`` on ``game``), naming what it would need."""
    name = game_type.short_name
    if game_type.chance or not game_type.perfect_information:
        hides = "chance" if game_type.chance else "hidden information"
        raise OptionError(
            f"{name} has {hides}, and the OpenSpiel bridge plays an installed game only when "
            "every seat sees the whole position and no chance is drawn: its chance nodes and "
            "observations need an adapter (engines/openspiel/adapters.py)",
            field="game",
        )
    size = game_type.num_distinct_actions
    return Adapter(codec=lambda: Bounded(name, size))


def adapter_of(game_type: GameType) -> Adapter:
    """The bridge's adapter of a game: ours from :data:`ADAPTERS`, else the generic one."""
    found = ADAPTERS.get(game_type.short_name)
    return found if found is not None else generic_adapter(game_type)
