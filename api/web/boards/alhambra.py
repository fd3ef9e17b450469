"""Alhambra on the table: every seat's Alhambra as a grid of square tiles (north up, the fountain
at the origin), each tile filled with its building type's colour, labelled with its id and type
letter and walled with thick lines on the sides the tile data gives; under each Alhambra its
reserve; a legend of the types; the tile the last move put down highlighted.

Panels share one tile size and one grid size (the largest Alhambra's), two to a row: six
players make a drawing about as tall as a phone's screen is against its width, which is what
the page fits it to (the width, and 80 % of the height); three to a row would leave a phone's
tiles a third smaller.
"""

from __future__ import annotations

import math
import re
from typing import cast

from api.web.boards.svg import HIGHLIGHT, seat_colour, seat_tint, text
from engines.alhambra import AlhambraState
from engines.alhambra.tiles import TILE_BY_ID, TYPES, E, N, S, W
from engines.core import State

TILE = 60
PAD = 12
HEADER = 44
GAP = 16
"""Between panels."""
SMALL = 44
"""Side of a reserve tile."""
SMALL_GAP = 5
RESERVE_LABEL = 118
"""Width of the "Reserve" label before the reserve's tiles."""
MIN_GRID = 3
"""The smallest grid drawn, in tiles (the fountain and its eight neighbours)."""
MIN_PANEL_TILES = 4
"""A panel is at least this many tiles wide, for its header and a few reserve tiles."""
LEGEND_ROW = 38
LEGEND_ENTRY = 160
"""Width of one legend entry."""
LABEL_FONT = 26

TYPE_FILLS = {
    "pavilion": "#9ccbe8",
    "seraglio": "#f3aaa3",
    "arcades": "#dcb68a",
    "chambers": "#ebe3d3",
    "garden": "#a9d6a2",
    "tower": "#c9b5e3",
}
"""Light versions of the printed tiles' colours, so that the dark id on them reads."""
FOUNTAIN_FILL = "#e3f2f8"
WALL = "#3a2a1a"
WALL_WIDTH = 7

_PLACE = re.compile(r"place\s+(\d{1,2})\s+at\s+\(?\s*(-?\d+)\s*,\s*(-?\d+)\s*\)?")
_SWAP = re.compile(r"swap\s+(\d{1,2})\s+for\s+(\d{1,2})")
_TO_RESERVE = re.compile(r"(?:reserve|remove)\s+(\d{1,2})")


def last_tile(move: str | None) -> tuple[int, str] | None:
    """``(tile id, where)`` for a move that puts a tile down: ``"built"`` when it went into an
    Alhambra (``place``, or the reserve tile of a ``swap``), ``"reserve"`` when it went into a
    reserve (``reserve``, ``remove``); ``None`` for any other move."""
    if not move:
        return None
    t = " ".join(move.strip().lower().split())
    if found := _PLACE.fullmatch(t):
        return int(found.group(1)), "built"
    if found := _SWAP.fullmatch(t):
        return int(found.group(1)), "built"
    if found := _TO_RESERVE.fullmatch(t):
        return int(found.group(1)), "reserve"
    return None


def _type_name(tile: int) -> str:
    return TYPES[TILE_BY_ID[tile].type]


def _walls(tile: int, x: float, y: float, size: float, width: float) -> str:
    """The tile's walls as lines along its sides (N is the top)."""
    if tile == 0:
        return ""
    walls = TILE_BY_ID[tile].walls
    half = width / 2
    # Each wall runs inside its side, corner to corner, so that neighbouring walls meet.
    ends = {
        N: (x, y + half, x + size, y + half),
        E: (x + size - half, y, x + size - half, y + size),
        S: (x, y + size - half, x + size, y + size - half),
        W: (x + half, y, x + half, y + size),
    }
    names = {N: "n", E: "e", S: "s", W: "w"}
    return "".join(
        f'<line class="wall wall-{names[side]}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" '
        f'y2="{y2:.1f}" stroke="{WALL}" stroke-width="{width}" stroke-linecap="square"/>'
        for side, (x1, y1, x2, y2) in ends.items()
        if walls & side
    )


def _tile(tile: int, x: float, y: float, size: float, attrs: str, last: bool) -> str:
    """One tile with its top-left corner at (x, y)."""
    if tile == 0:
        kind, fill, label = "fountain", FOUNTAIN_FILL, ""
    else:
        kind, fill = _type_name(tile), TYPE_FILLS[_type_name(tile)]
        label = str(tile)
    cls = f"tile {kind}" + (" last" if last else "")
    out = [
        f'<g class="{cls}" data-tile="{tile}"{attrs}>',
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{size}" height="{size}" fill="{fill}" '
        'stroke="#8c7b62" stroke-width="1"/>',
    ]
    mid_x, mid_y = x + size / 2, y + size / 2
    if tile == 0:
        out.append(
            f'<circle cx="{mid_x:.1f}" cy="{mid_y:.1f}" r="{size * 0.3:.1f}" fill="#5aa9d6" '
            'stroke="#1f5f8a" stroke-width="2"/>'
        )
    else:
        out.append(
            f'<text x="{mid_x:.1f}" y="{mid_y + size * 0.06:.1f}" font-size="{size * 0.45:.0f}" '
            'font-weight="bold" fill="#222222" text-anchor="middle" '
            f'dominant-baseline="central">{label}</text>'
        )
        out.append(
            f'<text x="{x + size * 0.14:.1f}" y="{y + size * 0.24:.1f}" '
            f'font-size="{size * 0.24:.0f}" fill="#3d3d3d">{kind[0].upper()}</text>'
        )
    out.append(_walls(tile, x, y, size, WALL_WIDTH * size / TILE))
    if last:
        inset = 2.5
        out.append(
            f'<rect class="highlight" x="{x + inset:.1f}" y="{y + inset:.1f}" '
            f'width="{size - 2 * inset:.1f}" height="{size - 2 * inset:.1f}" fill="none" '
            f'stroke="{HIGHLIGHT}" stroke-width="5"/>'
        )
    out.append("</g>")
    return "".join(out)


def render(state: State, last_move: str | None) -> str:
    """The position as SVG (see ``api.web.boards`` for the contract)."""
    s = cast(AlhambraState, state)
    seats = s.game.num_players
    built = [s.alhambra(seat) for seat in range(seats)]
    reserves = [s.reserve(seat) for seat in range(seats)]
    boxes = []
    for layout in built:
        xs = [x for x, _ in layout]
        ys = [y for _, y in layout]
        boxes.append((min(xs), max(xs), min(ys), max(ys)))
    columns = 2
    cols_in_grid = max(MIN_GRID, *(x1 - x0 + 1 for x0, x1, _, _ in boxes))
    panel_w = max(cols_in_grid, MIN_PANEL_TILES) * TILE + 2 * PAD
    per_line = max(1, (panel_w - 2 * PAD - RESERVE_LABEL + SMALL_GAP) // (SMALL + SMALL_GAP))
    # The two panels of a row share a height; rows differ, so that one tall Alhambra does
    # not stretch every panel.
    tops, grid_rows, panel_hs = [], [], []
    top = GAP
    for first in range(0, seats, columns):
        row_seats = range(first, min(first + columns, seats))
        rows_in_grid = max(MIN_GRID, *(boxes[i][3] - boxes[i][2] + 1 for i in row_seats))
        lines = max(1, *(math.ceil(len(reserves[i]) / per_line) for i in row_seats))
        panel_h = HEADER + rows_in_grid * TILE + PAD + lines * (SMALL + SMALL_GAP) + PAD
        tops.append(top)
        grid_rows.append(rows_in_grid)
        panel_hs.append(panel_h)
        top += panel_h + GAP
    width = columns * panel_w + (columns - 1) * GAP + 2 * GAP
    legend_top = top
    legend_rows = math.ceil((len(TYPES) + 1) / max(1, (width - 2 * GAP) // LEGEND_ENTRY))
    height = legend_top + legend_rows * LEGEND_ROW + GAP // 2
    placed = last_tile(last_move)
    summary = "; ".join(
        f"seat {seat} {len(built[seat]) - 1} built, {len(reserves[seat])} in reserve"
        for seat in range(seats)
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'class="board board-alhambra" role="img">',
        f"<title>Alhambra, {seats} players: {text(summary)}</title>",
        f'<rect width="{width}" height="{height}" fill="#fbf8f1"/>',
    ]
    for seat in range(seats):
        row, col = divmod(seat, columns)
        left = GAP + col * (panel_w + GAP)
        parts.append(
            _panel(s, seat, built[seat], reserves[seat], boxes[seat], left, tops[row], panel_w,
                   panel_hs[row], grid_rows[row], per_line, placed)
        )  # fmt: skip
    parts.append(_legend(legend_top, width, legend_rows))
    parts.append("</svg>")
    return "".join(parts)


def _panel(
    s: AlhambraState,
    seat: int,
    layout: dict[tuple[int, int], int],
    reserve: list[int],
    box: tuple[int, int, int, int],
    left: float,
    top: float,
    panel_w: float,
    panel_h: float,
    rows_in_grid: int,
    per_line: int,
    placed: tuple[int, str] | None,
) -> str:
    out = [
        f'<g class="seat-panel" data-seat="{seat}">',
        f'<rect x="{left}" y="{top}" width="{panel_w}" height="{panel_h}" rx="6" '
        f'fill="#ffffff" stroke="{seat_colour(seat)}" stroke-width="2"/>',
        f'<rect x="{left}" y="{top}" width="{panel_w}" height="{HEADER - 6}" rx="6" '
        f'fill="{seat_tint(seat)}"/>',
        f'<rect x="{left + PAD}" y="{top + 9}" width="20" height="20" fill="{seat_colour(seat)}"/>',
        f'<text x="{left + PAD + 28}" y="{top + 19}" font-size="{LABEL_FONT}" font-weight="bold" '
        f'fill="#1a1a1a" dominant-baseline="central">Seat {seat}</text>',
        f'<text x="{left + panel_w - PAD}" y="{top + 19}" font-size="{LABEL_FONT - 2}" '
        f'fill="#333333" text-anchor="end" dominant-baseline="central">'
        f"wall {s.longest_wall(seat)}</text>",
    ]
    x0, x1, y0, y1 = box
    # Centre this Alhambra in the shared grid area; north (larger y) is up.
    grid_left = left + (panel_w - (x1 - x0 + 1) * TILE) / 2
    grid_top = top + HEADER + (rows_in_grid - (y1 - y0 + 1)) * TILE / 2
    for (x, y), tile in sorted(layout.items()):
        last = placed is not None and placed == (tile, "built") and tile != 0
        tx = grid_left + (x - x0) * TILE
        ty = grid_top + (y1 - y) * TILE
        out.append(_tile(tile, tx, ty, TILE, f' data-x="{x}" data-y="{y}"', last))
    reserve_top = top + HEADER + rows_in_grid * TILE + PAD
    out.append(
        f'<text class="reserve-label" x="{left + PAD}" y="{reserve_top + SMALL / 2:.1f}" '
        f'font-size="{LABEL_FONT - 4}" fill="#333333" dominant-baseline="central">'
        f"Reserve{': empty' if not reserve else ''}</text>"
    )
    for i, tile in enumerate(reserve):
        line, slot = divmod(i, per_line)
        rx = left + PAD + RESERVE_LABEL + slot * (SMALL + SMALL_GAP)
        ry = reserve_top + line * (SMALL + SMALL_GAP)
        last = placed == (tile, "reserve")
        out.append(_tile(tile, rx, ry, SMALL, ' data-reserve="1"', last))
    out.append("</g>")
    return "".join(out)


def _legend(top: float, width: float, rows: int) -> str:
    """The six building types' colours, with the fountain, in ``rows`` rows."""
    entries = [(name, TYPE_FILLS[name]) for name in TYPES] + [("fountain", FOUNTAIN_FILL)]
    per_row = math.ceil(len(entries) / rows)
    step = (width - 2 * GAP) / per_row
    out = ['<g class="legend">']
    for i, (name, fill) in enumerate(entries):
        row, slot = divmod(i, per_row)
        x = GAP + slot * step
        y = top + row * LEGEND_ROW
        out.append(
            f'<rect class="legend-{name}" x="{x:.1f}" y="{y + 5}" width="26" height="26" '
            f'fill="{fill}" stroke="#8c7b62"/>'
            f'<text x="{x + 33:.1f}" y="{y + 18}" font-size="{LABEL_FONT - 2}" fill="#222222" '
            f'dominant-baseline="central">{name}</text>'
        )
    out.append("</g>")
    return "".join(out)
