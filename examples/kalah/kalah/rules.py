"""Kalah's rules (docs/rules.md; each decision cited as ``docs/rules.md K1``...).

The board is one list: seat 0's houses left to right, its store, seat 1's houses, its store.
Sowing goes round that list and skips the opponent's store.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from engines.contract import (
    TERMINAL,
    Action,
    Ending,
    Game,
    GameType,
    IllegalActionError,
    NotationError,
    Option,
    Seat,
    State,
)

MAX_HOUSES = 8
MAX_SEEDS = 8


class KalahState(State):
    """A position: the pits and the seat to move."""

    def __init__(self, game: KalahGame) -> None:
        self.game = game
        self.houses: int = game.options["houses"]
        seeds: int = game.options["seeds"]
        row = [seeds] * self.houses
        self.pits: list[int] = [*row, 0, *row, 0]  # docs/rules.md K1
        self.to_move: Seat = 0
        self.over = False

    # -- layout
    def store(self, seat: Seat) -> int:
        """The index of ``seat``'s store."""
        return self.houses if seat == 0 else 2 * self.houses + 1

    def house(self, seat: Seat, number: int) -> int:
        """The index of ``seat``'s house ``number`` (0 = its first, from its left)."""
        return number if seat == 0 else self.houses + 1 + number

    def side(self, seat: Seat) -> list[int]:
        """``seat``'s houses, from its first."""
        start = self.house(seat, 0)
        return self.pits[start : start + self.houses]

    # -- the contract
    def current_player(self) -> Seat:
        return TERMINAL if self.over else self.to_move

    def legal_actions(self) -> list[Action]:
        if self.over:
            return []
        return [n for n in range(self.houses) if self.pits[self.house(self.to_move, n)] > 0]

    def apply(self, action: Action) -> None:
        seat = self.to_move
        pits = self.pits
        size = len(pits)
        skip = self.store(1 - seat)
        at = self.house(seat, action)
        hand, pits[at] = pits[at], 0
        while hand:  # docs/rules.md K2: one seed a pit, round the board, skipping their store
            at = (at + 1) % size
            if at == skip:
                continue
            pits[at] += 1
            hand -= 1
        own_store = self.store(seat)
        first, last = self.house(seat, 0), self.house(seat, self.houses - 1)
        opposite = 2 * self.houses - at
        if first <= at <= last and pits[at] == 1:
            if pits[opposite] > 0:
                # docs/rules.md K4: the last seed in an empty house of one's own takes the
                # opposite
                pits[own_store] += pits[opposite] + 1
                pits[at] = pits[opposite] = 0
            elif self.game.options["empty_capture"]:
                # docs/rules.md K4: under the empty-capture rule the lone seed is taken too
                pits[own_store] += 1
                pits[at] = 0
        if not any(self.side(0)) or not any(self.side(1)):
            # docs/rules.md K5: a side empty ends the game; the other side's seeds go home
            for s in (0, 1):
                pits[self.store(s)] += sum(self.side(s))
                for n in range(self.houses):
                    pits[self.house(s, n)] = 0
            self.over = True
            return
        if at != own_store:  # docs/rules.md K3: the last seed in one's own store plays again
            self.to_move = 1 - seat

    def is_terminal(self) -> bool:
        return self.over

    def returns(self) -> list[float]:
        mine, theirs = self.pits[self.store(0)], self.pits[self.store(1)]
        if not self.over or mine == theirs:
            return [0.5, 0.5]  # docs/rules.md K6: equal stores draw
        return [1.0, 0.0] if mine > theirs else [0.0, 1.0]

    def scores(self) -> list[float]:
        return [float(self.pits[self.store(0)]), float(self.pits[self.store(1)])]

    def ended_by(self) -> Ending:
        return Ending.NORMAL

    def action_to_string(self, action: Action) -> str:
        if not 0 <= action < self.houses:
            raise IllegalActionError("kalah", str(action), str(self), "no such house")
        return str(action + 1)  # docs/rules.md K7: houses numbered from the mover's left

    def string_to_action(self, text: str) -> Action:
        cleaned = text.strip() if isinstance(text, str) else ""
        if not cleaned.isdigit() or not 1 <= int(cleaned) <= self.houses:
            raise NotationError("kalah", str(text), f"a house number from 1 to {self.houses}")
        return int(cleaned) - 1

    def clone(self) -> KalahState:
        copy = KalahState.__new__(KalahState)
        copy.game = self.game
        copy.houses = self.houses
        copy.pits = list(self.pits)
        copy.to_move = self.to_move
        copy.over = self.over
        return copy

    def key(self) -> Hashable:
        return (tuple(self.pits), self.to_move, self.over)

    def evaluate(self, seat: Seat) -> float:
        """The store margin as a share of the seeds: what search reads before the end."""
        if self.over:
            return super().evaluate(seat)
        total = 2 * self.houses * int(self.game.options["seeds"])
        margin = self.pits[self.store(seat)] - self.pits[self.store(1 - seat)]
        return max(-1.0, min(1.0, margin / total))

    def __str__(self) -> str:
        top = " ".join(f"{n:2d}" for n in reversed(self.side(1)))
        bottom = " ".join(f"{n:2d}" for n in self.side(0))
        mover = "over" if self.over else f"seat {self.to_move} to move"
        return (
            f"   {top}\n{self.pits[self.store(1)]:2d}{' ' * (3 * self.houses)} "
            f"{self.pits[self.store(0)]:2d}\n   {bottom}\n{mover}"
        )


class KalahGame(Game):
    """Kalah with its houses per side and seeds per house fixed."""

    game_type = GameType(
        short_name="kalah",
        long_name="Kalah",
        min_players=2,
        max_players=2,
        chance=False,
        perfect_information=True,
        num_distinct_actions=MAX_HOUSES,
        max_game_length=2000,
        options=(
            Option("houses", int, 6, "Houses per side (docs/rules.md K1).", minimum=1, maximum=8),
            Option("seeds", int, 4, "Seeds per house at the start.", minimum=1, maximum=8),
            Option(
                "empty_capture",
                bool,
                False,
                "The last seed in an empty house of one's own goes to the store even when the "
                "opposite house is empty (docs/rules.md K4; the rule Kalah was solved under).",
            ),
        ),
        description="Sow seeds round the board; the last in your store plays again, the last "
        "in an empty house of yours takes the opposite house.",
    )

    def __init__(self, players: int, options: Mapping[str, Any]) -> None:
        super().__init__(players, options)

    def new_initial_state(self, seed: int = 0) -> KalahState:
        return KalahState(self)
