"""A throwaway game with hidden information for tests, ``guess``, written against the engine
contract only (so it installs as a game package).

Seat 1 is dealt a card, 0, 1 or 2, which seat 0 does not see. Seat 0 guesses it (actions 0-2)
and wins at once when right. Otherwise seat 1 plays: its card, or ``3`` (a pass); it then wins.
So the best guess is the hidden card, and which actions seat 1 has depends on it: a search from
seat 0's view meets a node whose actions change from one re-drawn card to the next.

Every re-draw a state makes for seat 0 is kept in ``GuessGame.redraws``, so a test can follow a
search's determinisations.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engines.contract import Action, Game, GameType, Seat, State

CONTRACT_VERSION = 1

CARDS = 3
PASS = 3


class GuessState(State):
    def __init__(self, game: GuessGame, card: int) -> None:
        self.game = game
        self.card = card
        self.guess: int | None = None
        self.reply: int | None = None

    def current_player(self) -> Seat:
        if self.guess is None:
            return 0
        return -1 if self.is_terminal() else 1

    def legal_actions(self) -> list[Action]:
        if self.guess is None:
            return list(range(CARDS))
        if self.is_terminal():
            return []
        return [self.card, PASS]

    def apply(self, action: Action) -> None:
        if self.guess is None:
            self.guess = action
        else:
            self.reply = action

    def is_terminal(self) -> bool:
        return self.guess == self.card or self.reply is not None

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.5, 0.5]
        return [1.0, 0.0] if self.guess == self.card else [0.0, 1.0]

    def action_to_string(self, action: Action) -> str:
        return "pass" if action == PASS else str(action)

    def string_to_action(self, text: str) -> Action:
        return PASS if text == "pass" else int(text)

    def clone(self) -> GuessState:
        other = GuessState(self.game, self.card)
        other.guess, other.reply = self.guess, self.reply
        return other

    def resample_from_infostate(self, seat: Seat, rng: random.Random) -> GuessState:
        view = self.clone()
        if seat == 0 and not self.is_terminal():
            # Seat 0 knows only that a wrong guess was wrong.
            possible = [c for c in range(CARDS) if c != self.guess]
            view.card = possible[rng.randrange(len(possible))]
            self.game.redraws.append(view.card)
        return view

    def __str__(self) -> str:
        return f"guess {self.guess}, reply {self.reply}"


class GuessGame(Game):
    game_type = GameType(
        short_name="guess",
        long_name="Guess the hidden card",
        min_players=2,
        max_players=2,
        chance=True,
        perfect_information=False,
        num_distinct_actions=CARDS + 1,
        max_game_length=2,
    )

    def __init__(self, players: int, options: Mapping[str, Any]) -> None:
        super().__init__(players, options)
        self.redraws: list[int] = []

    def new_initial_state(self, seed: int = 0) -> GuessState:
        return GuessState(self, random.Random(seed).randrange(CARDS))


GAME = GuessGame
