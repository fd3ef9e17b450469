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
    effective, matches = block.get("effective_n"), block.get("matches")
    return (
        f"{counted(matches, 'match', 'matches')}, "
        f"{counted(block.get('distinct_games'), 'distinct game')}, "
        + (
            counted(openings, "distinct opening")
            if openings is not None
            else "openings not recorded"
        )
        + f", {counted(block.get('units'), 'unit')} of sampling, effective sample "
        f"{num(shown_effective_n(effective, matches), 1)}"
        f"{balance_note(effective, matches, block.get('design_effect'))}; variation: {declared}"
    )


def shown_effective_n(effective_n: Any, matches: Any) -> Any:
    """The effective sample size as shown: never more than the matches. Matches / design effect
    passes the matches where the seating's balance makes the variance smaller than independent
    matches would (design effect below 1), and a sample larger than the matches played reads
    as nonsense; ``balance_note`` says what the balance gives instead."""
    numbers = isinstance(effective_n, int | float) and isinstance(matches, int | float)
    # One match per unit gives matches / (1 ± rounding): that is the matches, not more.
    if numbers and math.isfinite(effective_n) and effective_n > matches * (1 + 1e-9):
        return float(matches)
    return effective_n


def balance_note(effective_n: Any, matches: Any, design_effect: Any) -> str:
    """`` (…)`` after an effective sample capped at the matches (``shown_effective_n``): the
    seating's balance narrows the interval beyond what independent matches would, by the
    design effect; empty otherwise."""
    if shown_effective_n(effective_n, matches) == effective_n:
        return ""
    return (
        f" (every match; the seating's balance narrows the interval further: design effect "
        f"{num(design_effect, 2)})"
    )


def counted(k: Any, one: str, many: str | None = None) -> str:
    """``k`` with the noun in the right number: ``1 unit``, ``3 units``."""
    return f"{num(k)} {one if k == 1 else many or one + 's'}"
