"""The facts kept move by move about each Alhambra equal the same facts worked out from
nothing, on every ply of random games with 2 to 6 players."""

from __future__ import annotations

import random

import pytest

from engines.alhambra import building
from engines.alhambra.outline import Outline
from engines.alhambra.rules import AlhambraState
from engines.alhambra.tiles import WALLS
from engines.registry import load_game


def ring_pattern(grid: dict[int, int], cell: int) -> int:
    """Bit i set when the i-th of the eight cells around ``cell`` (clockwise from north) is
    built."""
    x, y = building.xy_of(cell)
    around = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)]
    return sum(
        1 << i for i, (dx, dy) in enumerate(around) if building.cell_of(x + dx, y + dy) in grid
    )


def assert_outlines_fresh(state: AlhambraState) -> None:
    for seat, grid in enumerate(state.grids):
        outline = state.outlines[seat]
        front, touching = building.survey(grid)
        assert outline.sides == touching
        assert outline.links == {
            cell: sides & ~WALLS[grid[cell]] for cell, sides in touching.items()
        }
        assert outline.ends == sum(bin(links).count("1") for links in outline.links.values())
        assert outline.removable(grid) == building.removable(grid)
        fresh = Outline.of(grid)
        kept = (outline.front, outline.sides, outline.links, outline.ends)
        assert (fresh.front, fresh.sides, fresh.links, fresh.ends) == kept
        assert sorted(outline.front.items()) == [
            (cell, (sides, needed, ring_pattern(grid, cell))) for cell, sides, needed in front
        ]
        for walls in sorted({WALLS[tile] for tile in state.reserves[seat]}):
            tile = next(t for t in state.reserves[seat] if WALLS[t] == walls)
            assert state.placements(seat, tile) == building.placements(grid, walls)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_kept_outline_equals_a_fresh_survey_on_every_ply(players: int) -> None:
    game = load_game("alhambra", players=players)
    rng = random.Random(players)
    state = game.new_initial_state(rng.getrandbits(32))
    assert isinstance(state, AlhambraState)
    plies = 0
    while not state.is_terminal():
        legal = state.legal_actions()
        assert legal == sorted(set(legal))  # listed in parts, still ascending and distinct
        state.apply(rng.choice(legal))
        plies += 1
        assert_outlines_fresh(state)
        if plies % 50 == 0:
            copy = state.clone()  # a copy keeps its own outline
            assert_outlines_fresh(copy)
    assert plies > 100


def test_forget_works_an_edited_alhambra_out_again() -> None:
    game = load_game("alhambra", players=3)
    state = game.new_initial_state(5)
    assert isinstance(state, AlhambraState)
    grid = state.grids[0]
    # An open tile north of the fountain, one with a north wall on it, one east of the
    # fountain; then tile 5 (north wall only) in the reserve.
    grid[building.cell_of(0, 1)] = 7
    grid[building.cell_of(0, 2)] = 20
    grid[building.cell_of(1, 0)] = 14
    state.reserves[0] = [5]
    state.forget(0)
    assert_outlines_fresh(state)
    # Tile 5's open east side meets the fountain's open west side; its north wall would
    # face the fountain's open south side, and its open south side tile 20's north wall.
    cells = state.placements(0, 5)
    assert building.cell_of(-1, 0) in cells
    assert building.cell_of(0, -1) not in cells
    assert building.cell_of(0, 3) not in cells
