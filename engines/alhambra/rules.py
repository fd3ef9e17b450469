"""Alhambra (Dirk Henn, 2003) for 2–6 players: the ``Game`` and its ``State``.

Rules as on ``shared/rules/alhambra.md``. A turn is one ply per decision: the action phase
(take money, buy, or redesign; another action after each exact purchase), then one ply per tile
bought this turn (place it, reserve it, or give it to the two-player collector). The end of a
turn (refills, scorings, the collector's gifts, the end of the game) is in
:mod:`engines.alhambra.flow`; the hidden draw order and its re-sampling in
:mod:`engines.alhambra.infostate`.

Hidden information: the order of the money deck (and where the scoring cards sit in their piles)
and the order of the tile bag. Hands, Alhambras, reserves, the market, the display and the spent
cards are public (every card enters a hand face up, and agents have perfect memory).
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping
from typing import Any

from engines.alhambra import flow, infostate, notation, policy, render
from engines.alhambra.building import Cell
from engines.alhambra.flow import BEFORE_FINAL, MISSED_SCORING_MODES, SKIP
from engines.alhambra.notation import NOTATION_HELP, NUM_ACTIONS
from engines.alhambra.table import ACTION, OVER, PLACE, AlhambraTable
from engines.alhambra.tiles import COST
from engines.core import (
    TERMINAL,
    Action,
    Game,
    GameError,
    GameType,
    IllegalActionError,
    NotationError,
    Option,
    Seat,
    State,
    VariationDefaults,
)

MAX_PLIES = 6000


class Alhambra(Game):
    """Alhambra with a fixed number of players (the two-player game adds the collector)."""

    game_type = GameType(
        short_name="alhambra",
        long_name="Alhambra",
        min_players=2,
        max_players=6,
        chance=True,
        perfect_information=False,
        num_distinct_actions=NUM_ACTIONS,
        max_game_length=MAX_PLIES,
        options=(
            Option(
                "missed_scoring",
                str,
                SKIP,
                "a scoring card still in the deck when the game ends: 'skip' (the literal "
                "rule: that scoring never happens) or 'before_final' (scored, in order, just "
                "before the final scoring)",
                choices=MISSED_SCORING_MODES,
            ),
        ),
        points=True,
        # The deal is the opening: a round of matches shares it, with no forced move.
        variation=VariationDefaults(
            opening_plies=0, noise_plies=4, noise_margin=0.02, max_plies=10
        ),
        description=(
            "Buy building tiles with four currencies (an exact payment earns another action), "
            "build them into an Alhambra by the wall rules, and score type majorities and the "
            "longest outer wall three times; hidden money deck and tile bag."
        ),
    )

    def __init__(self, players: int, options: Mapping[str, Any]) -> None:
        opts = dict(options)
        opts.setdefault("missed_scoring", SKIP)
        super().__init__(players, opts)
        self.collector = players == 2
        self.missed_scoring: str = opts["missed_scoring"]

    def new_initial_state(self, seed: int = 0) -> AlhambraState:
        """Tiles and money shuffled from ``seed``, hands dealt, the start player chosen."""
        state = AlhambraState(self, random.Random(seed))
        flow.setup(state)
        return state


class AlhambraState(AlhambraTable, State):
    """One position of Alhambra: the table (:mod:`engines.alhambra.table`) and its moves."""

    __slots__ = ("game",)

    game: Alhambra

    def __init__(self, game: Alhambra, rng: random.Random) -> None:
        super().__init__(game.num_players, rng, score_missed=game.missed_scoring == BEFORE_FINAL)
        self.game = game

    def clone(self) -> AlhambraState:
        new = self.copy_table()
        new.game = self.game
        return new

    # -- the contract ----------------------------------------------------------------
    def current_player(self) -> Seat:
        return TERMINAL if self.phase == OVER else self.player

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def apply(self, action: Action) -> None:
        d = notation.decode(action)
        seat = self.player
        kind = d.kind
        if self.phase != ACTION:
            self.pending.remove(d.tile)
            if kind == "place":
                self._build(seat, d.tile, d.cell)
            elif kind == "reserve":
                self._to_reserve(seat, d.tile)
            else:  # give
                self.collector_tiles.append(d.tile)
            if not self.pending:
                if self.phase == PLACE:
                    flow.end_turn(self)
                else:
                    flow.next_gift(self)
            return
        if kind == "buy":
            tile = self.market[d.slot]
            hand = self.hands[seat]
            for v in d.values:
                c = d.slot * 10 + v
                hand.remove(c)
                self.discard.append(c)
            self.market[d.slot] = 0
            self.pending.append(tile)
            if sum(d.values) == COST[tile]:
                self.exact[seat] += 1
                return
        elif kind == "take":
            display = self.display
            picked = [display[i] for i in range(len(display)) if d.mask >> i & 1]
            for c in picked:
                display.remove(c)
            self.hands[seat].extend(picked)
            self.hands[seat].sort()
        elif kind == "place":
            self.reserves[seat].remove(d.tile)
            self._build(seat, d.tile, d.cell)
        elif kind == "remove":
            cell = self.where[seat].pop(d.tile)
            del self.grids[seat][cell]
            self.changed(seat, cell)
            self._to_reserve(seat, d.tile)
        elif kind == "swap":
            cell = self.where[seat].pop(d.other)
            self.reserves[seat].remove(d.tile)
            self.grids[seat][cell] = d.tile
            self.where[seat][d.tile] = cell
            self.changed(seat, cell)
            self._to_reserve(seat, d.other)
        # Any action but an exact purchase ends the action phase.
        if self.pending:
            self.phase = PLACE
        else:
            flow.end_turn(self)

    def _build(self, seat: Seat, tile: int, cell: Cell) -> None:
        self.grids[seat][cell] = tile
        self.where[seat][tile] = cell
        self.changed(seat, cell)

    def _to_reserve(self, seat: Seat, tile: int) -> None:
        reserve = self.reserves[seat]
        reserve.append(tile)
        reserve.sort()
        self.forget_redesign(seat)  # the Alhambra's own entries stay valid

    def returns(self) -> list[float]:
        n = self.game.num_players
        if self.phase != OVER:
            return [1.0 / n] * n
        totals = self.scores()
        top = max(totals)
        winners = [s for s in range(n) if totals[s] == top]
        return [1.0 / len(winners) if s in winners else 0.0 for s in range(n)]

    def action_to_string(self, action: Action) -> str:
        try:
            return notation.to_text(action, self.display)
        except ValueError as exc:
            raise GameError(f"alhambra: {exc}") from None

    def string_to_action(self, text: str) -> Action:
        parsed = notation.parse(text) if isinstance(text, str) else None
        if parsed is None:
            raise NotationError("alhambra", str(text), NOTATION_HELP)
        if self.phase == OVER:
            raise IllegalActionError("alhambra", text, str(self), "the game is over")
        if parsed.action is not None:
            return parsed.action
        # A take names cards: find the display slots holding them (the first such slots).
        wanted = list(parsed.cards)
        mask = 0
        for i, c in enumerate(self.display):
            if c in wanted:
                wanted.remove(c)
                mask |= 1 << i
        if wanted:
            reason = "the display does not hold those cards"
            raise IllegalActionError("alhambra", text, str(self), reason)
        return notation.take(mask)

    def resample_from_infostate(self, seat: Seat, rng: random.Random) -> AlhambraState:
        view = self.clone()
        infostate.redraw(view, rng)
        return view

    def stats(self) -> dict[str, Any]:
        return render.stats(self)

    def __str__(self) -> str:
        return render.text(self)

    def key(self) -> Hashable:
        return (
            tuple(self.bag),
            tuple(self.market),
            tuple(self.deck),
            tuple(self.display),
            tuple(tuple(h) for h in self.hands),
            tuple(tuple(sorted(g.items())) for g in self.grids),
            tuple(tuple(r) for r in self.reserves),
            tuple(self.pending),
            tuple(self.collector_tiles),
            self.player,
            self.phase,
        )

    # -- hooks for generic agents ----------------------------------------------------
    def evaluate(self, seat: Seat) -> float:
        if self.phase == OVER:
            return super().evaluate(seat)
        return policy.evaluate(self, seat)

    def rollout_action(self, rng: random.Random) -> Action:
        return policy.rollout_action(self, rng)

    def ordered_actions(self) -> list[Action]:
        return policy.ordered_actions(self)
