"""Abalone on its board: the 61-cell hexagon with row I on top, the row letters A–I at the left
ends of the rows and the diagonal numbers 1–9 below row A and at the right ends of rows A–D (as
on a printed board), each seat's marbles ringed in its seat colour, the last move's cells
highlighted, and the marbles each seat has pushed off counted under the board."""

from __future__ import annotations

import math
import re
from typing import cast

from api.web.boards.svg import HIGHLIGHT, seat_colour, text
from engines.abalone import AbaloneState
from engines.abalone.board import ROWS, on_board
from engines.abalone.rules import COLOURS
from engines.core import State

STEP = 52
"""Distance between the centres of two neighbouring cells."""
RISE = STEP * math.sqrt(3) / 2
MARGIN = 14
RADIUS = 22
MAX_PIPS = 8
LINE = 30
"""Height of one seat's line in the pushed-off panel."""
WIDTH = round(2 * MARGIN + 9.5 * STEP)
BOARD_HEIGHT = round(MARGIN + 10.3 * RISE)
"""Down to the numbers printed under row A."""

FILLS = {"black": "#1b1b1b", "white": "#ffffff", "red": "#c0392b"}
"""Marble colours as the game names them; the ring around each is the seat colour."""

# Direction name -> (rows up, numbers right), as docs/rules/abalone.md defines them.
VECTORS = {"E": (0, 1), "W": (0, -1), "NE": (1, 1), "NW": (1, 0), "SE": (-1, 0), "SW": (-1, -1)}
_MOVE = re.compile(r"([a-i][1-9])([a-i][1-9])?(ne|nw|se|sw|e|w)")
_PLACE = re.compile(r"\+([a-i][1-9])")

Cell = tuple[int, int]
"""(row 0..8 for A..I, number 1..9)."""


def _xy(row: float, number: float) -> tuple[float, float]:
    """Centre of cell (row, number); the numbers' diagonals lean up and to the left."""
    return MARGIN + (number - row / 2 + 2) * STEP, MARGIN + (8 - row + 0.5) * RISE


def _cell(name: str) -> Cell:
    return ROWS.index(name[0].upper()), int(name[1])


def _name(cell: Cell) -> str:
    return f"{ROWS[cell[0]]}{cell[1]}"


def last_move_cells(move: str | None) -> tuple[list[Cell], list[Cell]]:
    """The cells the moving marbles left and the cells they reached (a placement: no cells
    left, one reached); both empty when the text is not a move in the notation."""
    if not move:
        return [], []
    clean = move.strip().lower().replace(" ", "")
    placed = _PLACE.fullmatch(clean)
    if placed:
        cell = _cell(placed.group(1))
        return ([], [cell]) if on_board(*cell) else ([], [])
    found = _MOVE.fullmatch(clean)
    if not found:
        return [], []
    first = _cell(found.group(1))
    last = _cell(found.group(2)) if found.group(2) else first
    dr, dc = last[0] - first[0], last[1] - first[1]
    length = max(abs(dr), abs(dc))
    if length > 2 or (dr and dc and dr != dc):
        return [], []
    step = (dr // length, dc // length) if length else (0, 0)
    line = [(first[0] + i * step[0], first[1] + i * step[1]) for i in range(length + 1)]
    up, right = VECTORS[found.group(3).upper()]
    reached = [(r + up, c + right) for r, c in line]
    if not all(on_board(*c) for c in line + reached):
        return [], []
    return line, reached


def _marble(cx: float, cy: float, seat: int, radius: float, attrs: str = "") -> str:
    fill = FILLS.get(COLOURS[seat], "#777777") if seat < len(COLOURS) else "#777777"
    return (
        f'<circle class="marble seat-{seat}"{attrs} cx="{cx:.1f}" cy="{cy:.1f}" r="{radius}" '
        f'fill="{fill}" stroke="{seat_colour(seat)}" stroke-width="{radius / 5:.1f}"/>'
    )


def render(state: State, last_move: str | None) -> str:
    """The position as SVG (see ``api.web.boards`` for the contract)."""
    s = cast(AbaloneState, state)
    owners = s.cells()
    seats = s.game.num_players
    height = BOARD_HEIGHT + seats * LINE + 8
    on = [COLOURS[i] if i < len(COLOURS) else f"seat {i}" for i in range(seats)]
    counts = ", ".join(f"{on[i]} {sum(1 for o in owners.values() if o == i)}" for i in range(seats))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'class="board board-abalone" role="img">',
        f"<title>Abalone after {s.plies} plies: marbles on the board {text(counts)}</title>",
        f'<rect width="{WIDTH}" height="{height}" fill="#fbf8f1"/>',
    ]
    # The wooden hexagon: the six corner cells pushed out from the centre E5.
    cx, cy = _xy(4, 5)
    corners = [(0, 1), (0, 5), (4, 9), (8, 9), (8, 5), (4, 1)]
    grow = 4.7 / 4
    points = " ".join(
        f"{cx + (x - cx) * grow:.1f},{cy + (y - cy) * grow:.1f}"
        for x, y in (_xy(r, c) for r, c in corners)
    )
    parts.append(f'<polygon points="{points}" fill="#c9a66b" stroke="#7a5c2e" stroke-width="3"/>')
    left, reached = last_move_cells(last_move)
    for name in owners:
        x, y = _xy(*_cell(name))
        parts.append(
            f'<circle class="cell" data-cell="{name}" cx="{x:.1f}" cy="{y:.1f}" r="{RADIUS}" '
            'fill="#a8864f"/>'
        )
    for r, c in left:
        x, y = _xy(r, c)
        parts.append(
            f'<circle class="last-from" data-cell="{_name((r, c))}" cx="{x:.1f}" cy="{y:.1f}" '
            f'r="{RADIUS - 3}" fill="none" stroke="{HIGHLIGHT}" stroke-width="3" '
            'stroke-dasharray="5 4"/>'
        )
    for name, owner in owners.items():
        if owner >= 0:
            x, y = _xy(*_cell(name))
            parts.append(_marble(x, y, owner, RADIUS - 2, f' data-cell="{name}"'))
    for r, c in reached:
        x, y = _xy(r, c)
        parts.append(
            f'<circle class="last-to" data-cell="{_name((r, c))}" cx="{x:.1f}" cy="{y:.1f}" '
            f'r="{RADIUS + 2}" fill="none" stroke="{HIGHLIGHT}" stroke-width="4"/>'
        )
    label = 'font-size="20" fill="#444444" text-anchor="middle" dominant-baseline="central"'
    for r in range(9):
        x, y = _xy(r, max(1, r - 3) - 1)
        parts.append(f'<text class="row-label" x="{x:.1f}" y="{y:.1f}" {label}>{ROWS[r]}</text>')
    for c in range(1, 10):
        x, y = _xy(max(0, c - 5) - 1, c)
        parts.append(f'<text class="number-label" x="{x:.1f}" y="{y:.1f}" {label}>{c}</text>')
    parts.append(_pushed_off_panel(s, on))
    parts.append("</svg>")
    return "".join(parts)


def _pushed_off_panel(s: AbaloneState, names: list[str]) -> str:
    """One line per seat: its marble, name and how many marbles it has pushed off."""
    to_win = s.game.marbles_to_win
    out = []
    # The engine's scores are the marbles each seat has pushed off.
    for seat, count in enumerate(int(x) for x in s.scores()):
        y = BOARD_HEIGHT + seat * LINE + LINE / 2
        out.append(_marble(MARGIN + 10, y, seat, 9, ' aria-hidden="true"'))
        out.append(
            f'<text class="pushed-off" data-seat="{seat}" data-count="{count}" x="{MARGIN + 26}" '
            f'y="{y:.1f}" font-size="18" fill="#222222" dominant-baseline="central">'
            f"{text(names[seat].capitalize())} (seat {seat}): pushed off {count} of {to_win}"
            "</text>"
        )
        # A pip per marble needed to win, while they fit beside the text.
        for i in range(to_win if to_win <= MAX_PIPS else 0):
            px = WIDTH - MARGIN - 8 - (to_win - 1 - i) * 18
            filled = i < count
            out.append(
                f'<circle cx="{px:.1f}" cy="{y:.1f}" r="6" '
                f'fill="{seat_colour(seat) if filled else "none"}" '
                f'stroke="{seat_colour(seat)}" stroke-width="2"/>'
            )
    return "".join(out)
