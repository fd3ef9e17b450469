"""The engine contract: everything a game's author writes against, in one versioned module.

A game is a Python package whose module (named by an entry point in the group
``playtester.games``) exposes ``GAME``, its ``Game`` subclass, and ``CONTRACT_VERSION``, the
version of this contract it was written against, as a number written out (``CONTRACT_VERSION =
1``, never imported from here, or the check would always pass). It may expose ``AGENTS``, a
tuple of its own ``AgentType``s. playtester refuses to load a package that declares another
version than ``engines.contract.CONTRACT_VERSION``, naming the package and both versions.

Two more optional members show the game on the dashboard and in reports:

- ``RENDER_BOARD``: the replay page's board, a ``BoardRenderer``; without one the page shows
  the position's text (``str(state)``).
- ``REPORT``: the game's own section of a batch's report, an ``analysis.games.GameReport``
  whose ``name`` is the game's; without one the report has the generic sections only.

One more tells ``python -m bench.ladder`` how to measure the game's players' strength:

- ``LADDER``: a ``LadderDeclaration`` (its levels, reference, table size, games a pairing and
  the game's options); without one the game gets a generic ladder of the generic agents it is
  offered. Checked when the game loads, as the other two are.

Each is the object itself or a reference to it, ``"module:attribute"`` (the form of an entry
point), imported only when a board is drawn or a report written: the engine module need not
import drawing or report code, which workers never run, and a module of playtester's own
``engines`` can declare a renderer of ``api`` without importing it. Both are checked when the
game loads (an object of the wrong kind, or a malformed reference, lists the game as broken
with the reason); a reference that does not resolve is an error naming the package when it is
first used.

The members, each documented on the object itself:

- ``CONTRACT_VERSION``: this contract's version; it changes only when a game written against
  the previous one would break.
- ``Game``: a ruleset with its player count and options fixed; subclass it, set its class
  attribute ``game_type`` and write ``new_initial_state(seed)``.
- ``State``: one position. A game writes ``current_player``, ``legal_actions`` (sorted,
  distinct, empty exactly when the game is over), ``apply`` (unchecked; ``apply_action``
  checks), ``is_terminal`` (whether the game is over), ``returns`` (each seat's share of the
  win, summing to 1), ``action_to_string`` / ``string_to_action`` (its notation, which must
  round-trip), and ``clone`` (an independent copy: playing on it never changes the original).
  Optional hooks: ``scores``, ``stats``, ``ended_by``, ``resample_from_infostate`` (games with
  hidden information), ``evaluate``, ``rollout_action``, ``ordered_actions``, ``key``.
- ``GameType``: what a game is, declared once: players, chance, information, actions, the
  longest game, its options, its default variation.
- ``VariationDefaults``: a game's default openings and player noise.
- ``Option``: one declared option of a game or an agent (validated by playtester).
- ``Ending``: how a game ended; the rules end a game with ``NORMAL`` or a draw rule of their
  own (``REPETITION``, ``NO_CAPTURE``, ``NO_MOVE``, ``MOVE_LIMIT``).
- ``Agent``: what a computer player is (``step(state) -> action``; it never mutates the state).
- ``SearchAgent``, ``TimedAgent``: the optional abilities of a searching player (root values
  for player noise; a time allowance for clocked matches).
- ``AgentType``: a registered player: its name, parameters, games and factory.
- ``BoardRenderer``: the type of ``RENDER_BOARD``.
- ``Action``, ``Seat``: the integer types of an action and of a seat (0-based).
- ``TERMINAL``: what ``current_player`` answers once the game is over (-1).
- ``GameError``, ``OptionError``, ``IllegalActionError``, ``NotationError``: the errors a
  game raises about bad input (each a ``ValueError``, safe to show a user).
- ``play_match``, ``replay``: one whole match between agents; a position from moves in
  notation (what the service does with a game, usable in an author's own tests).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engines.core import (
    TERMINAL,
    Action,
    Agent,
    AgentType,
    Ending,
    Game,
    GameType,
    SearchAgent,
    Seat,
    State,
    TimedAgent,
    VariationDefaults,
    play_match,
    replay,
)
from engines.errors import GameError, IllegalActionError, NotationError, OptionError
from engines.options import Option

CONTRACT_VERSION = 1
"""The version of this contract. A game package declares the one it was written against
(``CONTRACT_VERSION = 1`` in its entry module); playtester loads it only when they agree.

Adding an optional member (as ``RENDER_BOARD`` and ``REPORT`` were) keeps the version: a package
written without it loads and plays exactly as before."""

BoardRenderer = Callable[[State, str | None], str]
"""A game's board for the replay page: ``render(state, last_move) -> str``.

It receives the position after some ply (the engine's ``State``, replayed from the stored
moves) and the move just played in the game's notation (``None`` before the first move), and
returns one ``<svg>`` element as text, with a ``viewBox`` and no fixed width or height (the
page scales it) and a ``<title>`` describing the position. It reads the state without changing
it, does no I/O, and gives the same text for the same position; the page inserts the text as
it is, so it escapes whatever it writes from the state."""


@dataclass(frozen=True)
class LadderDeclaration:
    """A game's strength ladder, as its module's ``LADDER`` declares it.

    ``python -m bench.ladder`` plays each level against the next one up and against the
    reference, then the ``extra`` pairings, ``games`` matches each, on the game built with
    ``options`` for ``players`` seats; the Elo it fits for each level is what a study page of
    the game shows beside the levels the study plays. ``levels`` are agent specs as a batch
    takes them (``"mcts:iterations=100"``), weakest first as expected; ``reference`` is one of
    them, whose Elo is fixed at 0. A study whose batches play other options than the ladder's
    reads the ladder's Elo all the same, so a game whose boards differ a lot should declare the
    options of the board its studies care most about.
    """

    levels: tuple[str, ...]
    reference: str
    games: int = 200
    """Matches a pairing plays, unless the command line says otherwise."""
    players: int = 2
    extra: tuple[tuple[str, str], ...] = ()
    """Pairings beyond each level's next one up and the reference, the stronger level first."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The game's options for every match of the ladder (its defaults when empty)."""

    def problem(self, min_players: int, max_players: int) -> str:
        """What makes this declaration unusable for a game seating ``min_players`` to
        ``max_players``, or ``""``."""
        levels = list(self.levels)
        if not levels or not all(isinstance(v, str) and v.strip() for v in levels):
            return "levels should be a non-empty tuple of agent specs"
        if len(set(levels)) != len(levels):
            return f"levels {levels} name a level twice"
        if self.reference not in levels:
            return f"reference {self.reference!r} is not one of the levels {levels}"
        if not isinstance(self.games, int) or self.games < 1:
            return f"games is {self.games!r}; it should be a whole number of at least 1"
        if not isinstance(self.players, int) or not min_players <= self.players <= max_players:
            return f"players is {self.players!r}; the game seats {min_players} to {max_players}"
        for pair in self.extra:
            if len(pair) != 2 or pair[0] == pair[1] or not set(pair) <= set(levels):
                return f"extra pairing {pair!r} should be two different levels"
        if not isinstance(self.options, Mapping):
            return f"options is {self.options!r}; it should be a mapping of option to value"
        return ""


__all__ = [
    "CONTRACT_VERSION",
    "TERMINAL",
    "Action",
    "Agent",
    "AgentType",
    "BoardRenderer",
    "Ending",
    "Game",
    "GameError",
    "GameType",
    "IllegalActionError",
    "LadderDeclaration",
    "NotationError",
    "Option",
    "OptionError",
    "SearchAgent",
    "Seat",
    "State",
    "TimedAgent",
    "VariationDefaults",
    "play_match",
    "replay",
]
