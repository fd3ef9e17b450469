"""How a report's figures are written for people: one set of helpers for tables and HTML.

Every function takes a value straight from the strict-JSON report (``None`` for a missing or
undefined figure) and returns plain text; HTML escapes it where it lands.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MISSING = "–"


def num(v: Any, digits: int = 1) -> str:
    """A number: whole numbers with thousands separators, others with ``digits`` decimals."""
    if v is None:
        return MISSING
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    x = float(v)
    if not math.isfinite(x):
        return MISSING
    if x != 0 and abs(x) < 10.0**-digits:
        return f"{x:.2g}"
    return f"{x:,.{digits}f}"


def pct(v: Any) -> str:
    """A share as a percentage with one decimal."""
    return MISSING if v is None else f"{100 * float(v):.1f}%"


def p_value(v: Any) -> str:
    """A p-value with three significant digits."""
    return MISSING if v is None else f"{float(v):.3g}"


def span(lo: Any, hi: Any, fmt: Callable[[Any], str] = pct) -> str:
    """An interval; missing when either end is."""
    return MISSING if lo is None or hi is None else f"{fmt(lo)}–{fmt(hi)}"


def elo_span(lo: Any, hi: Any) -> str:
    """An Elo interval; a missing end is unbounded (the score interval reached 0 or 1)."""
    return f"{'−∞' if lo is None else num(lo)}–{'+∞' if hi is None else num(hi)}"


@dataclass(frozen=True)
class TextTable:
    """A titled table of display strings, rendered alike by the terminal and the HTML page."""

    title: str
    columns: tuple[str, ...]
    rows: list[list[str]] = field(default_factory=list)
    note: str | None = None
    css_class: str = ""


def independence_line(block: Any) -> str:
    """The ``independence`` block in one line: matches, distinct games and openings, units,
    effective sample size and the declared variation."""
    if not block:
        return ""
    openings = block.get("distinct_openings")
    variation = block.get("variation")
    declared = (
        ", ".join(f"{k}={v}" for k, v in variation.items())
        if isinstance(variation, dict)
        else "none declared"
    )
    return (
        f"{counted(block.get('matches'), 'match', 'matches')}, "
        f"{counted(block.get('distinct_games'), 'distinct game')}, "
        + (
            counted(openings, "distinct opening")
            if openings is not None
            else "openings not recorded"
        )
        + f", {counted(block.get('units'), 'unit')} of sampling, effective sample "
        f"{num(block.get('effective_n'), 1)}; variation: {declared}"
    )


def counted(k: Any, one: str, many: str | None = None) -> str:
    """``k`` with the noun in the right number: ``1 unit``, ``3 units``."""
    return f"{num(k)} {one if k == 1 else many or one + 's'}"
