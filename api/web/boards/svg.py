"""What every board renderer shares: the seat colours and escaping for SVG text."""

from __future__ import annotations

from html import escape

SEAT_COLOURS = ("#1f5fa8", "#b3261e", "#2e7d32", "#8a5a00", "#6a3d9a", "#0e7c86")
"""Seat 0 to 5 (Alhambra seats six): blue, red, green, ochre, purple, teal; each has at least
4.5:1 contrast on white, so white text on them and them on white both read."""

SEAT_TINTS = ("#c9daf0", "#f3cdca", "#cfe6d0", "#f0dfbf", "#ded0ee", "#c8e8eb")
"""Light versions of ``SEAT_COLOURS`` for filled areas that carry dark text."""

HIGHLIGHT = "#e07b00"
"""The last move played."""


def seat_colour(seat: int) -> str:
    return SEAT_COLOURS[seat % len(SEAT_COLOURS)]


def seat_tint(seat: int) -> str:
    return SEAT_TINTS[seat % len(SEAT_TINTS)]


def text(value: object) -> str:
    """``value`` escaped for an SVG text node or attribute."""
    return escape(str(value), quote=True)
