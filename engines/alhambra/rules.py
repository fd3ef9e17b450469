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

from engines.alhambra import building, flow, infostate, notation, policy, render
from engines.alhambra.building import ORIGIN, Cell, xy_of
from engines.alhambra.flow import ACTION, OVER, PLACE
from engines.alhambra.money import TAKE_LIMIT, Card, minimal_payments
from engines.alhambra.notation import NOTATION_HELP, NUM_ACTIONS
from engines.alhambra.tiles import COST, TYPE_OF, TYPES, WALLS
from engines.core import (
    TERMINAL,
    Action,
    Game,
    GameError,
    GameType,
    IllegalActionError,
    NotationError,
    Seat,
    State,
)

MAX_PLIES = 6000
CACHE_LIMIT = 200_000
"""Most entries kept in each of the module's memo tables (displays, payments)."""
_TAKES: dict[tuple[Card, ...], list[int]] = {}
_PAYMENTS: dict[tuple[tuple[int, ...], int], list[tuple[int, ...]]] = {}


_BITS = [tuple(i for i in range(4) if mask >> i & 1) for mask in range(16)]


def _take_masks(display: tuple[Card, ...]) -> list[int]:
    values = [c % 10 for c in display]
    distinct = len(set(display)) == len(display)
    seen: set[tuple[Card, ...]] = set()
    out = []
    for mask in range(1, 1 << len(display)):
        bits = _BITS[mask]
        if len(bits) > 1 and sum(values[i] for i in bits) > TAKE_LIMIT:
            continue
        if not distinct:
            picked = tuple(display[i] for i in bits)
            if picked in seen:
                continue
            seen.add(picked)
        out.append(mask)
    return out


def payments(values: tuple[int, ...], price: int) -> list[tuple[int, ...]]:
    """``minimal_payments``, remembered (a hand's values of one currency, sorted, and a price)."""
    key = (values, price)
    found = _PAYMENTS.get(key)
    if found is None:
        found = minimal_payments(values, price) if sum(values) >= price else []
        if len(_PAYMENTS) < CACHE_LIMIT:
            _PAYMENTS[key] = found
    return found


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
        options=(),
        points=True,
        description=(
            "Buy building tiles with four currencies (an exact payment earns another action), "
            "build them into an Alhambra by the wall rules, and score type majorities and the "
            "longest outer wall three times; hidden money deck and tile bag."
        ),
    )

    def __init__(self, players: int, options: Mapping[str, Any]) -> None:
        super().__init__(players, options)
        self.collector = players == 2

    def new_initial_state(self, seed: int = 0) -> AlhambraState:
        """Tiles and money shuffled from ``seed``, hands dealt, the start player chosen."""
        state = AlhambraState(self, random.Random(seed))
        flow.setup(state)
        return state


class AlhambraState(State):
    """One position of Alhambra. Fields are shared with :mod:`flow`, :mod:`infostate` and
    :mod:`render` of this package; everything else reads the public methods."""

    __slots__ = (
        "_cache",
        "bag",
        "collector_points",
        "collector_tiles",
        "deck",
        "discard",
        "display",
        "exact",
        "final_queue",
        "game",
        "grids",
        "hands",
        "market",
        "pending",
        "phase",
        "player",
        "ranges",
        "reserves",
        "rng",
        "round_points",
        "scorings",
        "start",
        "turns",
        "where",
    )

    game: Alhambra

    def __init__(self, game: Alhambra, rng: random.Random) -> None:
        n = game.num_players
        self.game = game
        self.rng = rng
        self.bag: list[int] = []  # top at the end
        self.market = [0, 0, 0, 0]  # tile per currency slot, 0 = empty
        self.deck: list[Card] = []  # top at the end; scoring cards inside
        self.ranges: dict[Card, tuple[int, int]] = {}  # scoring card -> deck index range
        self.discard: list[Card] = []
        self.display: list[Card] = []  # sorted
        self.hands: list[list[Card]] = [[] for _ in range(n)]  # sorted
        self.grids: list[dict[Cell, int]] = [building.new_alhambra() for _ in range(n)]
        self.where: list[dict[int, Cell]] = [{0: ORIGIN} for _ in range(n)]
        self.reserves: list[list[int]] = [[] for _ in range(n)]  # sorted
        self.collector_tiles: list[int] = []
        self.collector_points = [0, 0, 0]
        self.pending: list[int] = []  # tiles bought this turn (or end-of-game gifts) to place
        self.final_queue: list[tuple[Seat, list[int]]] = []
        self.round_points = [[[0, 0] for _ in range(3)] for _ in range(n)]
        self.exact = [0] * n
        self.turns = 0
        self.scorings = 0
        self.start = 0
        self.player = 0
        self.phase = ACTION
        self._cache: list[dict[Any, list[Any]]] = [{} for _ in range(n)]

    # -- the contract ----------------------------------------------------------------
    def current_player(self) -> Seat:
        return TERMINAL if self.phase == OVER else self.player

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def legal_actions(self) -> list[Action]:
        if self.phase == OVER:
            return []
        seat = self.player
        if self.phase != ACTION:
            placing: list[Action] = []
            for tile in sorted(set(self.pending)):
                placing.extend(notation.place(tile, c) for c in self.placements(seat, tile))
                placing.append(notation.reserve(tile))
                if self.phase == PLACE and self.game.collector:
                    placing.append(notation.give(tile))
            return sorted(placing)
        out = [notation.take(m) for m in self.take_masks()]
        out.extend(self.buy_actions())
        out.extend(self.redesign_actions(seat))
        if not out:
            return [notation.PASS]
        out.sort()
        return out

    def take_masks(self) -> list[int]:
        """Display-slot masks of the legal takes, one per distinct set of cards."""
        key = tuple(self.display)
        found = _TAKES.get(key)
        if found is None:
            found = _take_masks(key)
            if len(_TAKES) < CACHE_LIMIT:
                _TAKES[key] = found
        return found

    def buy_actions(self) -> list[Action]:
        by_currency: list[list[int]] = [[], [], [], []]
        for c in self.hands[self.player]:
            by_currency[c // 10].append(c % 10)
        out = []
        for slot, tile in enumerate(self.market):
            if not tile:
                continue
            values = by_currency[slot]
            price = COST[tile]
            if sum(values) < price:
                continue
            for paid in payments(tuple(values), price):
                out.append(notation.buy(slot, paid))
        return out

    def redesign_actions(self, seat: Seat) -> list[Action]:
        """Place a reserve tile, move an Alhambra tile to the reserve, or exchange the two
        (cached until the seat's Alhambra or reserve changes)."""
        cache = self._cache[seat]
        found = cache.get("redesign")
        if found is not None:
            return found
        grid = self.grids[seat]
        reserve = sorted(set(self.reserves[seat]))
        out: list[Action] = []
        for tile in reserve:
            out.extend(notation.place(tile, c) for c in self.placements(seat, tile))
        free = building.removable(grid)
        for tile, cell in self.where[seat].items():
            if cell == ORIGIN:
                continue
            if cell in free:
                out.append(notation.remove(tile))
            for r in reserve:
                if building.can_swap(grid, cell, WALLS[r]):
                    out.append(notation.swap(r, tile))
        cache["redesign"] = out
        return out

    def placements(self, seat: Seat, tile: int) -> list[Cell]:
        """Cells of ``seat``'s Alhambra where ``tile`` may legally go (cached per wall shape)."""
        walls = WALLS[tile]
        cache = self._cache[seat]
        found = cache.get(walls)
        if found is None:
            grid = self.grids[seat]
            found = [c for c in self.frontier(seat) if building.can_place(grid, c, walls)]
            cache[walls] = found
        return found

    def known_placements(self, seat: Seat, tile: int) -> list[Cell] | None:
        """``placements`` when already listed for this Alhambra, else None (nothing computed)."""
        found: list[Cell] | None = self._cache[seat].get(WALLS[tile])
        return found

    def frontier(self, seat: Seat) -> list[Cell]:
        """Empty cells next to ``seat``'s Alhambra, ascending (cached)."""
        cache = self._cache[seat]
        found = cache.get("frontier")
        if found is None:
            found = building.frontier(self.grids[seat])
            cache["frontier"] = found
        return found

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
            self._cache[seat].clear()
            self._build(seat, d.tile, d.cell)
        elif kind == "remove":
            cell = self.where[seat].pop(d.tile)
            del self.grids[seat][cell]
            self._cache[seat].clear()
            self._to_reserve(seat, d.tile)
        elif kind == "swap":
            cell = self.where[seat].pop(d.other)
            self.reserves[seat].remove(d.tile)
            self.grids[seat][cell] = d.tile
            self.where[seat][d.tile] = cell
            self._cache[seat].clear()
            self._to_reserve(seat, d.other)
        # Any action but an exact purchase ends the action phase.
        if self.pending:
            self.phase = PLACE
        else:
            flow.end_turn(self)

    def _build(self, seat: Seat, tile: int, cell: Cell) -> None:
        self.grids[seat][cell] = tile
        self.where[seat][tile] = cell
        self._cache[seat].clear()

    def _to_reserve(self, seat: Seat, tile: int) -> None:
        reserve = self.reserves[seat]
        reserve.append(tile)
        reserve.sort()
        self._cache[seat].pop("redesign", None)  # the Alhambra's own entries stay valid

    def clone(self) -> AlhambraState:
        new = AlhambraState.__new__(AlhambraState)
        new.game = self.game
        new.rng = random.Random()
        new.rng.setstate(self.rng.getstate())
        new.bag = self.bag[:]
        new.market = self.market[:]
        new.deck = self.deck[:]
        new.ranges = dict(self.ranges)
        new.discard = self.discard[:]
        new.display = self.display[:]
        new.hands = [h[:] for h in self.hands]
        new.grids = [dict(g) for g in self.grids]
        new.where = [dict(w) for w in self.where]
        new.reserves = [r[:] for r in self.reserves]
        new.collector_tiles = self.collector_tiles[:]
        new.collector_points = self.collector_points[:]
        new.pending = self.pending[:]
        new.final_queue = [(s, t[:]) for s, t in self.final_queue]
        new.round_points = [[r[:] for r in seat] for seat in self.round_points]
        new.exact = self.exact[:]
        new.turns = self.turns
        new.scorings = self.scorings
        new.start = self.start
        new.player = self.player
        new.phase = self.phase
        # Cached legal moves depend on the Alhambras and reserves alone; the cached lists are
        # never edited, so the copies may share them.
        new._cache = [dict(c) for c in self._cache]
        return new

    def scores(self) -> list[float]:
        return [float(sum(m + w for m, w in rounds)) for rounds in self.round_points]

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
        return infostate.resample(self, rng)

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

    # -- read access for analysis and viewers ----------------------------------------
    def longest_wall(self, seat: Seat) -> int:
        """Segments of ``seat``'s longest wall (cached until the Alhambra changes)."""
        cache = self._cache[seat]
        found = cache.get("wall")
        if found is None:
            found = [building.longest_wall(self.grids[seat])]
            cache["wall"] = found
        return int(found[0])

    def alhambra(self, seat: Seat) -> dict[tuple[int, int], int]:
        """``{(x, y): tile_id}`` of ``seat``'s Alhambra, the fountain as tile 0 at (0, 0)."""
        return {xy_of(c): t for c, t in self.grids[seat].items()}

    def reserve(self, seat: Seat) -> list[int]:
        """Tile ids in ``seat``'s reserve, ascending."""
        return self.reserves[seat][:]

    def hand(self, seat: Seat) -> list[Card]:
        """``seat``'s money cards (``currency * 10 + value``), ascending."""
        return self.hands[seat][:]

    def type_counts(self, seat: Seat) -> list[int]:
        """Tiles of each type in ``seat``'s Alhambra (the reserve does not count)."""
        counts = [0] * len(TYPES)
        for tile in self.grids[seat].values():
            if tile:
                counts[TYPE_OF[tile]] += 1
        return counts

    def tiles_in_play(self) -> int:
        """Tiles in bag, market, Alhambras, reserves, collector and pending: always 54."""
        return (
            len(self.bag)
            + sum(1 for t in self.market if t)
            + sum(len(g) - 1 for g in self.grids)
            + sum(len(r) for r in self.reserves)
            + len(self.collector_tiles)
            + len(self.pending)
            + sum(len(t) for _, t in self.final_queue)
        )

    def turn_position(self, seat: Seat) -> int:
        """0 for the starting player, 1 for the next, and so on."""
        return (seat - self.start) % self.game.num_players
