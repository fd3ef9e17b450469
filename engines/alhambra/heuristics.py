"""What a tile, a placement or a handful of cards is worth to one seat: the greedy player's sums.

Everything here reads a state the agent was handed (the runner's re-sampled view) and only its
public parts: the market, the display, hands, Alhambras, reserves and the collector's tiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engines.alhambra import building
from engines.alhambra.building import Cell
from engines.alhambra.money import Card, currency_of, value_of
from engines.alhambra.policy import holder_counts
from engines.alhambra.scoring import MAJORITY_POINTS, places
from engines.alhambra.tiles import COST
from engines.core import Seat

if TYPE_CHECKING:
    from engines.alhambra.table import AlhambraTable


def majority_gain(state: AlhambraTable, seat: Seat, kind: int, delta: int = 1) -> float:
    """Majority points ``seat`` gains over the scorings still to come when ``delta`` more tiles
    of type ``kind`` stand in its Alhambra (the next scoring and the final one)."""
    counts = [row[kind] for row in holder_counts(state)]
    after = counts[:]
    after[seat] = max(0, after[seat] + delta)
    upcoming = min(state.scorings, 2)
    rounds = {upcoming, 2}
    gain = 0.0
    for r in rounds:
        table = MAJORITY_POINTS[r][kind]
        gain += places(after, table)[seat] - places(counts, table)[seat]
    return gain


def wall_gain(grid: dict[Cell, int], cell: Cell, tile: int, before: int) -> int:
    """Change of the longest wall when ``tile`` is put on ``cell`` (``grid`` is left as is)."""
    trial = dict(grid)
    trial[cell] = tile
    return building.longest_wall(trial) - before


def neighbours(grid: dict[Cell, int], cell: Cell) -> int:
    """Tiles sharing a side with ``cell``: compact Alhambras keep more places open."""
    return sum(cell + step in grid for step in (building.STRIDE, 1, -building.STRIDE, -1))


def exact_targets(hand: Sequence[Card], market: Sequence[int]) -> int:
    """Market slots that ``hand`` can pay exactly."""
    found = 0
    for slot, tile in enumerate(market):
        if tile and _can_make(
            sorted(value_of(c) for c in hand if currency_of(c) == slot), COST[tile]
        ):
            found += 1
    return found


def _can_make(values: list[int], target: int) -> bool:
    reachable = 1
    for v in values:
        reachable |= reachable << v
    return bool(reachable >> target & 1)


def takes_enabling(hand: Sequence[Card], picked: Sequence[Card], market: Sequence[int]) -> int:
    """How many more market slots become exactly payable after taking ``picked``."""
    return exact_targets([*hand, *picked], market) - exact_targets(hand, market)


def best_place(
    state: AlhambraTable, seat: Seat, tile: int, wall: float, compact: float
) -> tuple[float, Cell | None]:
    """The best legal cell for ``tile`` by wall gain and compactness, and its score."""
    cells = state.placements(seat, tile)
    if not cells:
        return 0.0, None
    grid = state.grids[seat]
    before = state.longest_wall(seat)
    best, where = -1e9, cells[0]
    for cell in cells:
        score = wall * wall_gain(grid, cell, tile, before) + compact * neighbours(grid, cell)
        if score > best:
            best, where = score, cell
    return best, where
