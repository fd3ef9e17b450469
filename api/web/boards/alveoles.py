"""Les Alvéoles on its board (8 × 8, or the layout's smaller size): the valued squares with
their values printed, owned squares filled with their owner's colour, plates in the grooves
drawn, the last plate highlighted."""

from __future__ import annotations

from typing import cast

from api.web.boards.svg import HIGHLIGHT, seat_colour, seat_tint, text
from engines.alveoles import AlveolesState
from engines.alveoles.layouts import FILES, SIZE
from engines.alveoles.notation import HORIZONTAL, board_squares, parse_groove
from engines.core import State

CELL = 60
MARGIN = 26


def _groove_ends(groove: int, rows: int) -> tuple[int, int, int, int]:
    """SVG coordinates (x1, y1, x2, y2) of a groove (numbering in ``engines.alveoles.notation``)
    on a board of ``rows`` rows, drawn from its top."""
    if groove < HORIZONTAL:
        line, col = divmod(groove, SIZE)
        y = MARGIN + (rows - line) * CELL
        return MARGIN + col * CELL, y, MARGIN + (col + 1) * CELL, y
    row, line = divmod(groove - HORIZONTAL, SIZE + 1)
    x = MARGIN + line * CELL
    return x, MARGIN + (rows - row - 1) * CELL, x, MARGIN + (rows - row) * CELL


def render(state: State, last_move: str | None) -> str:
    """The position as SVG (see ``api.web.boards`` for the contract)."""
    s = cast(AlveolesState, state)
    values, rows, cols = s.game.values, s.game.rows, s.game.cols
    width, height = cols * CELL + 2 * MARGIN, rows * CELL + 2 * MARGIN
    last = parse_groove(last_move) if last_move else None
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'class="board board-alveoles" role="img">',
        f"<title>Les Alvéoles after {s.placements} plates</title>",
        f'<rect width="{width}" height="{height}" fill="#fbf8f1"/>',
    ]
    for sq in board_squares(rows, cols):
        row, col = divmod(sq, SIZE)
        x, y = MARGIN + col * CELL, MARGIN + (rows - 1 - row) * CELL
        owner = s.owner(sq)
        fill = seat_tint(owner) if owner >= 0 else "#ffffff"
        cls = f"sq owned-{owner}" if owner >= 0 else "sq"
        parts.append(
            f'<rect class="{cls}" x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}"/>'
        )
        value = values[sq]
        size = 18 if value < 100 else 14 if value < 10_000 else 10
        colour = seat_colour(owner) if owner >= 0 else "#333333"
        weight = "bold" if owner >= 0 else "normal"
        parts.append(
            f'<text x="{x + CELL // 2}" y="{y + CELL // 2}" font-size="{size}" '
            f'font-weight="{weight}" fill="{colour}" text-anchor="middle" '
            f'dominant-baseline="central">{text(value)}</text>'
        )
    empty: list[str] = []
    for groove in s.game.grooves:
        x1, y1, x2, y2 = _groove_ends(groove, rows)
        if s.has_plate(groove):
            colour = HIGHLIGHT if groove == last else "#222222"
            width = 7 if groove == last else 5
            cls = "plate last" if groove == last else "plate"
            parts.append(
                f'<line class="{cls}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" '
                f'stroke="{colour}" stroke-width="{width}" stroke-linecap="round"/>'
            )
        else:
            empty.append(f'<line class="groove" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>')
    parts.append('<g stroke="#b9b2a3" stroke-width="1.5" stroke-dasharray="4 4">')
    parts.extend(empty)
    parts.append("</g>")
    for i in range(cols):
        cx = MARGIN + i * CELL + CELL // 2
        parts.append(
            f'<text x="{cx}" y="{height - 8}" font-size="18" text-anchor="middle" '
            f'fill="#444444">{FILES[i]}</text>'
        )
    for i in range(rows):
        cy = MARGIN + (rows - 1 - i) * CELL + CELL // 2
        parts.append(
            f'<text x="{MARGIN // 2}" y="{cy}" font-size="18" text-anchor="middle" '
            f'dominant-baseline="central" fill="#444444">{i + 1}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
