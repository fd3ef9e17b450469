"""Position value and playout moves: the hooks the search agents use.

``evaluate`` projects each seat's total (points so far plus what the current Alhambras would
score at the next scoring) and maps the lead over the best opponent into [-1, 1].
``rollout_action`` plays quickly and plausibly: exact purchases first, otherwise money or a
purchase, bought tiles placed where they fit (never a redesign, which only slows a playout).
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING

from engines.alhambra import building, notation
from engines.alhambra.money import value_of
from engines.alhambra.scoring import majority_points
from engines.alhambra.table import ACTION
from engines.alhambra.tiles import COST, TYPE_OF, TYPES, WALLS
from engines.core import Action, Seat

if TYPE_CHECKING:
    from engines.alhambra.table import AlhambraTable

LEAD_SCALE = 20.0
"""Points of lead that count as a near-certain win (tanh(1) ≈ 0.76)."""
OVERPAY_TOLERANCE = 2
"""A playout buys with an overpayment up to this many coins."""


def holder_counts(state: AlhambraTable) -> list[list[int]]:
    """Tiles of each type per seat's Alhambra, and the collector's as one more row."""
    counts = [state.type_counts(s) for s in range(state.players)]
    if state.has_collector:
        tiles = [0] * len(TYPES)
        for tile in state.collector_tiles:
            tiles[TYPE_OF[tile]] += 1
        counts.append(tiles)
    return counts


def projected(state: AlhambraTable) -> list[float]:
    """Points so far plus the next scoring's majorities and walls on the current Alhambras."""
    n = state.players
    upcoming = min(state.scorings, 2)
    majorities = majority_points(holder_counts(state), upcoming)
    now = state.scores()
    return [now[s] + majorities[s] + state.longest_wall(s) for s in range(n)]


def evaluate(state: AlhambraTable, seat: Seat) -> float:
    totals = projected(state)
    best_other = max(t for s, t in enumerate(totals) if s != seat)
    return math.tanh((totals[seat] - best_other) / LEAD_SCALE)


def rollout_action(state: AlhambraTable, rng: random.Random) -> Action:
    seat = state.player
    if state.phase != ACTION:
        tile = state.pending[0]
        walls = WALLS[tile]
        cells = state.known_placements(seat, tile)
        if cells is None:
            # One legal cell is enough: try the frontier from a random point rather than list
            # every legal cell.
            grid = state.grids[seat]
            frontier = state.frontier(seat)
            start = int(rng.random() * len(frontier))
            for i in range(len(frontier)):
                cell = frontier[(start + i) % len(frontier)]
                if building.can_place(grid, cell, walls):
                    return notation.place(tile, cell)
            return notation.reserve(tile)
        if cells:
            return notation.place(tile, cells[int(rng.random() * len(cells))])
        return notation.reserve(tile)
    buys = state.buy_actions()
    if buys:
        exact, close = [], []
        for action in buys:
            d = notation.decode(action)
            over = sum(d.values) - COST[state.market[d.slot]]
            if over == 0:
                exact.append(action)
            elif over <= OVERPAY_TOLERANCE:
                close.append(action)
        if exact:
            return exact[int(rng.random() * len(exact))]
        if close and rng.random() < 0.5:
            return close[int(rng.random() * len(close))]
    masks = state.take_masks()
    if masks:
        # Prefer the takes worth most: pick the best of two random ones.
        display = state.display

        def worth(mask: int) -> int:
            return sum(value_of(display[i]) for i in range(len(display)) if mask >> i & 1)

        a = masks[int(rng.random() * len(masks))]
        b = masks[int(rng.random() * len(masks))]
        return notation.take(a if worth(a) >= worth(b) else b)
    if buys:
        return buys[int(rng.random() * len(buys))]
    return rng.choice(state.legal_actions())


def quick_score(state: AlhambraTable, action: Action) -> float:
    """A cheap preference between legal actions: exact purchases, then close purchases, the
    largest takes, placements next to many tiles; redesigns last."""
    d = notation.decode(action)
    kind = d.kind
    if kind == "buy":
        return 10.0 - (sum(d.values) - COST[state.market[d.slot]])
    if kind == "take":
        display = state.display
        return float(sum(value_of(display[i]) for i in range(len(display)) if d.mask >> i & 1))
    if kind == "place":
        grid = state.grids[state.player]
        near = sum(d.cell + s in grid for s in (building.STRIDE, 1, -building.STRIDE, -1))
        return 6.0 + near if state.phase != ACTION else 2.0 + near
    if kind == "reserve":
        return 1.0
    return -1.0


def ordered_actions(state: AlhambraTable) -> list[Action]:
    """Legal actions, most promising first by ``quick_score``."""
    return sorted(state.legal_actions(), key=lambda a: -quick_score(state, a))
