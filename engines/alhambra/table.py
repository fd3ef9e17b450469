"""The table of an Alhambra game: everything on it, what each seat may do, and read access.

:class:`AlhambraTable` holds the position (bag, market, money, Alhambras, reserves, the
collector, scores) and lists the legal actions; :class:`~engines.alhambra.rules.AlhambraState`
adds the game contract and the moves. The helpers of this package (:mod:`flow`,
:mod:`infostate`, :mod:`policy`, :mod:`render`) work on the table.
"""

from __future__ import annotations

import random
from typing import Any, Self

from engines.alhambra import building, notation
from engines.alhambra.building import ORIGIN, RING_SPLITS, Cell, xy_of
from engines.alhambra.money import TAKE_LIMIT, Card, minimal_payments
from engines.alhambra.outline import Outline
from engines.alhambra.tiles import COST, TYPE_OF, TYPES, WALLS
from engines.core import Action, Seat

ACTION, PLACE, FINAL, OVER = 0, 1, 2, 3
"""Phases: choosing the turn's actions, placing bought tiles, placing end-of-game gifts, over."""
CACHE_LIMIT = 200_000
"""Most entries kept in each memo table of this module (displays, payments)."""
_TAKES: dict[tuple[Card, ...], list[int]] = {}
_VALUE_TAKES: dict[tuple[int, ...], list[int]] = {}
"""Take masks of displays of distinct cards by their values: at most 10 ** 4 entries."""
_PAYMENTS: dict[tuple[tuple[int, ...], int], list[tuple[int, ...]]] = {}
_SPLITS: dict[tuple[Card, ...], list[tuple[int, ...]]] = {}
_BUYS: dict[tuple[int, tuple[int, ...], int], list[Action]] = {}


_BITS = [tuple(i for i in range(4) if mask >> i & 1) for mask in range(16)]


def _take_masks(display: tuple[Card, ...]) -> list[int]:
    values = tuple(c % 10 for c in display)
    if len(set(display)) == len(display):
        # Distinct cards: which sets may be taken depends on their values alone.
        found = _VALUE_TAKES.get(values)
        if found is None:
            found = _VALUE_TAKES[values] = _masks_of(display, values, True)
        return found
    return _masks_of(display, values, False)


def _masks_of(display: tuple[Card, ...], values: tuple[int, ...], distinct: bool) -> list[int]:
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


def _by_currency(hand: tuple[Card, ...]) -> list[tuple[int, ...]]:
    """A sorted hand's card values in each currency, ascending (remembered)."""
    found = _SPLITS.get(hand)
    if found is None:
        split: list[list[int]] = [[], [], [], []]
        for c in hand:
            split[c // 10].append(c % 10)
        found = [tuple(values) for values in split]
        if len(_SPLITS) < CACHE_LIMIT:
            _SPLITS[hand] = found
    return found


def _buys(slot: int, values: tuple[int, ...], price: int) -> list[Action]:
    """The purchase actions of ``payments`` in market ``slot``, remembered."""
    key = (slot, values, price)
    found = _BUYS.get(key)
    if found is None:
        found = [notation.buy(slot, paid) for paid in payments(values, price)]
        if len(_BUYS) < CACHE_LIMIT:
            _BUYS[key] = found
    return found


class AlhambraTable:
    """The position. Fields are read and written by this package's modules; agents and
    analysis use the methods."""

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
        "grids",
        "hands",
        "has_collector",
        "market",
        "outlines",
        "pending",
        "phase",
        "player",
        "players",
        "ranges",
        "reserves",
        "rng",
        "round_points",
        "score_missed",
        "scorings",
        "start",
        "turns",
        "where",
    )

    def __init__(self, players: int, rng: random.Random, *, score_missed: bool = False) -> None:
        n = players
        self.players = players
        self.has_collector = players == 2
        self.score_missed = score_missed  # option ``missed_scoring`` is ``before_final``
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
        self.outlines = [Outline.of(g) for g in self.grids]
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
        self._cache: list[dict[Any, Any]] = [{} for _ in range(n)]

    def legal_actions(self) -> list[Action]:
        if self.phase == OVER:
            return []
        seat = self.player
        if self.phase != ACTION:
            placing: list[Action] = []
            for tile in sorted(set(self.pending)):
                placing.extend(notation.place(tile, c) for c in self.placements(seat, tile))
                placing.append(notation.reserve(tile))
                if self.phase == PLACE and self.has_collector:
                    placing.append(notation.give(tile))
            return sorted(placing)
        # Numbered takes < redesigns < purchases, each part ascending: no sort needed.
        out = [notation.take(m) for m in self.take_masks()]
        out.extend(self.redesign_actions(seat))
        buys = self.buy_actions()
        if len(buys) > 1:
            buys.sort()
        out.extend(buys)
        if not out:
            return [notation.PASS]
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
        """Purchases of each market tile with the slot's currency.

        Decision (rules page): only minimal payments are offered, the card sets that cover
        the price and from which no card can be left out; a larger overpayment is never better
        (no change is given).
        """
        by_currency = _by_currency(tuple(self.hands[self.player]))
        out: list[Action] = []
        for slot, tile in enumerate(self.market):
            if tile:
                out += _buys(slot, by_currency[slot], COST[tile])
        return out

    def redesign_actions(self, seat: Seat) -> list[Action]:
        """Place a reserve tile, move an Alhambra tile to the reserve, or exchange the two,
        ascending (cached until the seat's Alhambra or reserve changes)."""
        cache = self._cache[seat]
        found = cache.get("redesign")
        if found is not None:
            return found
        grid = self.grids[seat]
        reserve = sorted(self.reserves[seat])  # tile ids are distinct
        out: list[Action] = []
        for tile in reserve:
            out += notation.places(tile, self.placements(seat, tile))
        outline = self.outlines[seat]
        free = outline.removable(grid)
        touching = outline.sides
        reserve_walls = [(r, WALLS[r]) for r in reserve]
        remove, swap = notation.remove, notation.swap
        for tile, cell in self.where[seat].items():
            if cell in free:
                out.append(remove(tile))
            # An exchange keeps the old tile's walls on every side with a neighbour (the
            # fountain is never exchanged).
            if cell != ORIGIN:
                sides = touching[cell]
                old = WALLS[tile]
                for r, walls in reserve_walls:
                    if not (walls ^ old) & sides:
                        out.append(swap(r, tile))
        out.sort()
        cache["redesign"] = out
        return out

    def placements(self, seat: Seat, tile: int) -> list[Cell]:
        """Cells of ``seat``'s Alhambra where ``tile`` may legally go (cached per wall shape)."""
        walls = WALLS[tile]
        cache = self._cache[seat]
        found = cache.get(walls)
        if found is None:
            grid = self.grids[seat]
            found = []
            for cell, (touching, needed, ring) in self.outlines[seat].front.items():
                # Matching sides, one open shared side, and no empty cell cut off (the full
                # search only where the 3 × 3 square around the cell says it may happen).
                if (
                    walls & touching == needed
                    and touching & ~walls
                    and (not RING_SPLITS[ring] or building.can_place(grid, cell, walls))
                ):
                    found.append(cell)
            found.sort()
            cache[walls] = found
        return found

    def frontier_sides(self, seat: Seat) -> list[tuple[Cell, int, int]]:
        """``building.frontier_sides`` of ``seat``'s Alhambra."""
        front = self.outlines[seat].front
        return [(cell, front[cell][0], front[cell][1]) for cell in sorted(front)]

    def known_placements(self, seat: Seat, tile: int) -> list[Cell] | None:
        """``placements`` when already listed for this Alhambra, else None (nothing computed)."""
        found: list[Cell] | None = self._cache[seat].get(WALLS[tile])
        return found

    def frontier(self, seat: Seat) -> list[Cell]:
        """Empty cells next to ``seat``'s Alhambra, ascending (cached)."""
        cache = self._cache[seat]
        found: list[Cell] | None = cache.get("frontier")
        if found is None:
            found = sorted(self.outlines[seat].front)
            cache["frontier"] = found
        return found

    def copy_table(self) -> Self:
        """A copy of the position sharing nothing mutable with this one."""
        new = type(self).__new__(type(self))
        new.players = self.players
        new.has_collector = self.has_collector
        new.score_missed = self.score_missed
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
        new.outlines = [o.copy() for o in self.outlines]
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

    def forget(self, seat: Seat) -> None:
        """Work ``seat``'s Alhambra out again from its tiles (after editing them directly)."""
        self.outlines[seat] = Outline.of(self.grids[seat])
        self._cache[seat].clear()

    def changed(self, seat: Seat, cell: Cell) -> None:
        """``cell`` of ``seat``'s Alhambra was built, emptied or got another tile."""
        self.outlines[seat].changed(self.grids[seat], cell)
        self._cache[seat].clear()

    def forget_redesign(self, seat: Seat) -> None:
        """Drop ``seat``'s listed redesigns (its reserve changed, its Alhambra did not)."""
        self._cache[seat].pop("redesign", None)

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
        return (seat - self.start) % self.players
