"""Building rules and the longest wall on hand-built Alhambras (docs/rules/alhambra.md, "Building").

Tiles by their walls (CSV): open 7, 14, 22, 23, 31, 32, 41, 42, 52, 53; N only 5, 20; E only 6;
S only 13; W only 12; N+E 9; N+W 4; E+S 3; S+W 2; N+E+W 1.
"""

from __future__ import annotations

from engines.alhambra import building
from engines.alhambra.building import cell_of, new_alhambra
from engines.alhambra.tiles import WALLS

OPEN = (7, 14, 22, 23, 31, 32, 41, 42, 52, 53)


def build(*placed: tuple[int, int, int]) -> dict[int, int]:
    """An Alhambra from (tile, x, y) in order, each placement checked legal."""
    grid = new_alhambra()
    for tile, x, y in placed:
        cell = cell_of(x, y)
        assert building.can_place(grid, cell, WALLS[tile]), (tile, x, y)
        grid[cell] = tile
    return grid


def legal(grid: dict[int, int], tile: int, x: int, y: int) -> bool:
    return building.can_place(grid, cell_of(x, y), WALLS[tile])


def test_sides_must_match_wall_to_wall_and_open_to_open() -> None:
    grid = new_alhambra()
    assert legal(grid, 5, 0, 1)  # N wall on top, open below onto the open fountain
    assert not legal(grid, 13, 0, 1)  # S wall against the fountain's open side
    assert not legal(grid, 7, 1, 1)  # touches nothing (diagonal)
    grid = build((5, 0, 1))
    assert not legal(grid, 7, 0, 2)  # open S side against tile 5's N wall


def test_a_tile_touching_only_walls_is_unreachable() -> None:
    grid = build((5, 0, 1))
    # Tile 13's S wall matches tile 5's N wall, but it joins the Alhambra by walls only.
    assert building.fits(grid, cell_of(0, 2), WALLS[13]) is False
    assert not legal(grid, 13, 0, 2)
    # Once an open neighbour reaches it, the same tile may go there.
    grid = build((5, 0, 1), (7, 1, 0), (14, 1, 1), (22, 1, 2))
    assert legal(grid, 13, 0, 2)


def test_a_single_hole_is_refused() -> None:
    grid = build((7, 1, 0), (14, 2, 0), (22, 2, 1), (23, 2, 2), (31, 1, 2), (32, 0, 2))
    # (0, 1) would close the ring around the empty (1, 1).
    assert not legal(grid, 41, 0, 1)
    assert legal(grid, 41, -1, 0)


def test_an_enclosed_area_of_two_cells_is_refused() -> None:
    ring = [(1, 0), (2, 0), (3, 0), (3, 1), (3, 2), (2, 2), (1, 2), (0, 2)]
    grid = build(*((tile, x, y) for tile, (x, y) in zip(OPEN, ring, strict=False)))
    assert not legal(grid, OPEN[8], 0, 1)  # would enclose (1, 1) and (2, 1)
    assert legal(grid, OPEN[8], 4, 1)


def test_a_removal_that_disconnects_or_leaves_a_hole_is_refused() -> None:
    line = build((7, 1, 0), (14, 2, 0))
    assert not building.can_remove(line, cell_of(1, 0))  # tile 14 would float
    assert building.can_remove(line, cell_of(2, 0))
    assert not building.can_remove(line, cell_of(0, 0))  # the fountain never moves
    block = [(1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2)]
    grid = build(*((tile, x, y) for tile, (x, y) in zip(OPEN, block, strict=False)))
    assert not building.can_remove(grid, cell_of(1, 1))  # its cell would be a hole
    assert building.can_remove(grid, cell_of(2, 2))
    assert building.removable(grid) == {cell_of(x, y) for x, y in block if (x, y) != (1, 1)}


def test_a_removal_keeping_the_rest_reachable_through_another_path() -> None:
    # A loop of open tiles around nothing: (1,0) may go since (1,1) is reached via (0,1).
    grid = build((7, 1, 0), (14, 0, 1), (22, 1, 1))
    assert building.can_remove(grid, cell_of(1, 0))
    # Tile 6 (E wall) at (0,1) leaves (1,1) reachable only through (1,0).
    walled = build((7, 1, 0), (6, 0, 1), (12, 1, 1))
    assert not building.can_remove(walled, cell_of(1, 0))


def test_an_exchange_must_match_every_neighbour() -> None:
    grid = build((5, 0, 1))
    here = cell_of(0, 1)
    assert building.can_swap(grid, here, WALLS[20])  # same walls (N only)
    assert building.can_swap(grid, here, WALLS[7])  # differs only on the free north side
    assert not building.can_swap(grid, here, WALLS[13])  # S wall against the fountain
    assert not building.can_swap(grid, cell_of(0, 0), WALLS[7])  # the fountain stays


def test_longest_wall_of_one_tile() -> None:
    assert building.longest_wall(build((1, 0, 1))) == 3  # W, N, E sides in one chain
    assert building.longest_wall(new_alhambra()) == 0


def test_a_double_wall_between_two_tiles_does_not_count() -> None:
    grid = build((7, 1, 0), (6, 0, 1), (12, 1, 1))
    assert building.wall_segments(grid) == []
    assert building.longest_wall(grid) == 0
    # Two north walls side by side make a chain of 2; the E/W double wall between the
    # tiles below them (6 and 12) adds nothing.
    grid = build((7, 1, 0), (6, 0, 1), (12, 1, 1), (5, 0, 2), (20, 1, 2))
    assert building.longest_wall(grid) == 2


def test_a_closed_outer_wall_counts_all_its_segments() -> None:
    ring = build(
        (5, 0, 1), (6, 1, 0), (13, 0, -1), (12, -1, 0),
        (9, 1, 1), (3, 1, -1), (2, -1, -1), (4, -1, 1),
    )  # fmt: skip
    assert len(building.wall_segments(ring)) == 12
    assert building.longest_wall(ring) == 12


def test_separate_walls_count_the_longest_only() -> None:
    # Tile 1 at (0,1) (W, N, E: 3 segments); tile 2 (S+W) at (1,-1)... reached from (1,0).
    grid = build((1, 0, 1), (7, 1, 0), (2, 1, -1))
    assert len(building.wall_segments(grid)) == 5
    assert building.longest_wall(grid) == 3


def test_a_corner_is_used_once_where_four_segments_meet() -> None:
    # Not a legal Alhambra (the two tiles touch at a corner only) but a clear wall shape:
    # tile 9 (N+E) at (0,1) and tile 2 (S+W) at (1,2) put four segments on corner (1,2).
    grid = new_alhambra()
    grid[cell_of(0, 1)] = 9
    grid[cell_of(1, 2)] = 2
    assert len(building.wall_segments(grid)) == 4
    assert building.longest_wall(grid) == 2
    # A longer arm on one side: tile 5 (N) at (-1,1) extends the north wall westwards.
    grid[cell_of(-1, 1)] = 5
    assert building.longest_wall(grid) == 3
