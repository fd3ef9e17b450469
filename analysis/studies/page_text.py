"""What every section of a study page shares: where its figures are read from, and how a
share, an interval and a p-value are written on it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from analysis.studies.estimates import Interval


class Source(Protocol):
    """Where a study's batches are read back from: this machine's database
    (``analysis.studies.page.LocalSource``) or a server (``api.client.ServiceClient`` has both
    calls).

    ``compensation=False``: the caller will not read the report's ``fair_compensation``, so a
    source that computes the report may leave it out."""

    def report(self, batch_id: str, *, compensation: bool = True) -> Any: ...

    def compare(self, batch_a: str, batch_b: str) -> Any: ...


def summary_room(title: str) -> int:
    """Characters left for a study's one-line verdict in the README, which gives a study two
    lines of 100 characters, its title included."""
    return 196 - len(title)


def pct(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value * 100:+.1f} %" if signed else f"{value * 100:.1f} %"


def interval(row: Mapping[str, Any], signed: bool = False) -> str:
    return f"[{pct(row.get('ci_low'), signed)}, {pct(row.get('ci_high'), signed)}]"


def points(value: float | None) -> str:
    """A difference of two shares in percentage points (``+56.1 pp``), not a share."""
    return "–" if value is None else f"{value * 100:+.1f} pp"


def bounds(iv: Interval, signed: bool = False) -> str:
    """An interval's ends as ``[a, b]``, each a percentage."""
    return f"[{pct(iv.low, signed)}, {pct(iv.high, signed)}]"


def p_text(value: float | None) -> str:
    if value is None:
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3g}"


def p_clause(value: float | None) -> str:
    """``p = 0.0189``, or ``p < 0.001``: a p-value as a sentence writes it."""
    text = p_text(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def capitalised(text: str) -> str:
    """``text`` with its first letter upper case, as a sentence begins."""
    return text[:1].upper() + text[1:]


def listed(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


Labelled = Sequence[tuple[str, float | None, float | None]]
"""Labels with an interval's ends (none where unknown)."""


def by_side(labelled: Labelled) -> tuple[list[str], list[str], list[str]]:
    """The labels whose interval lies above an even game, those below it, and the rest."""
    above = [label for label, low, _ in labelled if (low or 0) > 0]
    below = [label for label, _, high in labelled if (high or 0) < 0]
    return above, below, [label for label, _, _ in labelled if label not in above + below]
