"""Kalah's board for playtester's replay page: the module's ``RENDER_BOARD`` names ``render``.

The board as it is played (docs/rules.md K1): seat 0's row at the bottom, read left to right
towards its store on the right; seat 1's row at the top, facing it, so its first house is at
the top right and its store on the left. Each house and store shows its seeds as a number,
and each row its house numbers as the notation writes them (K7: from the mover's own left).
"""

from __future__ import annotations

from html import escape

from engines.contract import State
from kalah.rules import KalahState

CELL = 64
"""Width of a house; a store is a house wide and two tall."""
MARGIN = 28
SEAT_COLOURS = ("#1f5fa8", "#b3261e")
"""Seat 0 blue and seat 1 red: the dashboard's own seat colours, so the board agrees with the
page's seat swatches."""
WOOD = "#c8a46e"
PIT = "#efe2c8"


def render(state: State, last_move: str | None) -> str:
    """The position as one ``<svg>`` (``engines.contract.BoardRenderer``)."""
    if not isinstance(state, KalahState):
        raise TypeError(f"a Kalah board draws a KalahState, not a {type(state).__name__}")
    houses = state.houses
    width = (houses + 2) * CELL + 2 * MARGIN
    height = 2 * CELL + 2 * MARGIN
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        'class="board board-kalah" role="img">',
        f"<title>{escape(_title(state, last_move))}</title>",
        f'<rect x="{MARGIN // 2}" y="{MARGIN // 2}" width="{width - MARGIN}" '
        f'height="{height - MARGIN}" rx="24" fill="{WOOD}"/>',
    ]
    for seat in (0, 1):
        parts.append(_store(state, seat, width))
        for number in range(houses):
            parts.extend(_house(state, seat, number))
    parts.append("</svg>")
    return "".join(parts)


def _title(state: KalahState, last_move: str | None) -> str:
    stores = f"stores {state.pits[state.store(0)]} to {state.pits[state.store(1)]}"
    move = f"after house {last_move}" if last_move else "at the start"
    who = "game over" if state.is_terminal() else f"seat {state.current_player()} to move"
    return f"Kalah, {state.houses} houses a side, {move}: {stores}, {who}"


def _column(seat: int, number: int, houses: int) -> int:
    """The column (0 = the left store's) of ``seat``'s house ``number``: seat 0 reads left to
    right, seat 1, facing it, right to left."""
    return 1 + number if seat == 0 else houses - number


def _house(state: KalahState, seat: int, number: int) -> list[str]:
    x = MARGIN + _column(seat, number, state.houses) * CELL + CELL // 2
    y = MARGIN + (CELL if seat == 0 else 0) + CELL // 2
    seeds = state.pits[state.house(seat, number)]
    label_y = y + CELL // 2 + 12 if seat == 0 else y - CELL // 2 - 4
    return [
        f'<circle class="house seat-{seat}" cx="{x}" cy="{y}" r="{CELL // 2 - 6}" '
        f'fill="{PIT}" stroke="{SEAT_COLOURS[seat]}" stroke-width="3"/>',
        f'<text class="seeds" x="{x}" y="{y}" font-size="24" text-anchor="middle" '
        f'dominant-baseline="central" fill="#222222">{seeds}</text>',
        f'<text class="house-number" x="{x}" y="{label_y}" font-size="13" '
        f'text-anchor="middle" fill="#3b2a12">{number + 1}</text>',
    ]


def _store(state: KalahState, seat: int, width: int) -> str:
    x = width - MARGIN - CELL if seat == 0 else MARGIN
    seeds = state.pits[state.store(seat)]
    return (
        f'<rect class="store seat-{seat}" x="{x + 6}" y="{MARGIN + 6}" width="{CELL - 12}" '
        f'height="{2 * CELL - 12}" rx="{CELL // 2 - 6}" fill="{PIT}" '
        f'stroke="{SEAT_COLOURS[seat]}" stroke-width="4"/>'
        f'<text class="seeds" x="{x + CELL // 2}" y="{MARGIN + CELL}" font-size="26" '
        f'font-weight="bold" text-anchor="middle" dominant-baseline="central" '
        f'fill="{SEAT_COLOURS[seat]}">{seeds}</text>'
    )
