"""Alquerque on its board: the 5 × 5 points and their lines, White's and Black's pieces (ringed
in their seat's colour), the path of the last move highlighted."""

from __future__ import annotations

from typing import cast

from api.web.boards.svg import HIGHLIGHT, seat_colour, text
from engines.alquerque import AlquerqueState
from engines.alquerque.board import NEIGHBOURS, POINTS, SIZE, point_of
from engines.core import State

GAP = 80
MARGIN = 40
SPAN = (SIZE - 1) * GAP + 2 * MARGIN


def _xy(point: int) -> tuple[int, int]:
    row, col = divmod(point, SIZE)
    return MARGIN + col * GAP, MARGIN + (SIZE - 1 - row) * GAP


def _path(move: str | None) -> list[int]:
    """The landing points of a move written ``b2-c3`` or ``a1xc3xe3`` (empty if unreadable)."""
    if not move:
        return []
    parts = move.strip().lower().replace("-", "x").split("x")
    points = [point_of(p) for p in parts]
    return [p for p in points if p is not None] if None not in points else []


def render(state: State, last_move: str | None) -> str:
    """The position as SVG (see ``api.web.boards`` for the contract)."""
    s = cast(AlquerqueState, state)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {SPAN} {SPAN}" '
        f'class="board board-alquerque" role="img">',
        f"<title>Alquerque after {s.plies} plies: {s.white.bit_count()} white, "
        f"{s.black.bit_count()} black</title>",
        f'<rect width="{SPAN}" height="{SPAN}" fill="#f4ecd8"/>',
    ]
    parts.append('<g stroke="#6b5a3a" stroke-width="2">')
    for p in range(POINTS):
        for q in sorted(NEIGHBOURS[p]):
            if q > p:
                (x1, y1), (x2, y2) = _xy(p), _xy(q)
                parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>')
    parts.append("</g>")
    path = _path(last_move)
    if path:
        points = " ".join(f"{x},{y}" for x, y in map(_xy, path))
        parts.append(
            f'<polyline class="last" points="{points}" fill="none" stroke="{HIGHLIGHT}" '
            'stroke-width="8" stroke-linecap="round" stroke-linejoin="round" opacity="0.8"/>'
        )
    for p in range(POINTS):
        x, y = _xy(p)
        bit = 1 << p
        if s.white & bit:
            parts.append(
                f'<circle class="piece seat-0" cx="{x}" cy="{y}" r="22" fill="#ffffff" '
                f'stroke="{seat_colour(0)}" stroke-width="4"/>'
            )
        elif s.black & bit:
            parts.append(
                f'<circle class="piece seat-1" cx="{x}" cy="{y}" r="22" fill="#1b1b1b" '
                f'stroke="{seat_colour(1)}" stroke-width="4"/>'
            )
        else:
            parts.append(f'<circle cx="{x}" cy="{y}" r="5" fill="#6b5a3a"/>')
    for i in range(SIZE):
        x, _ = _xy(i)
        parts.append(
            f'<text x="{x}" y="{SPAN - 8}" font-size="18" text-anchor="middle" '
            f'fill="#444444">{text("abcde"[i])}</text>'
        )
        _, y = _xy(i * SIZE)
        parts.append(
            f'<text x="12" y="{y}" font-size="18" text-anchor="middle" '
            f'dominant-baseline="central" fill="#444444">{i + 1}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
