"""Typed figures read from a batch's report: an estimate with its 95 % interval, its test and
what it rests on, so the study pages read named fields instead of dictionary keys.

A report is JSON (``analysis.report`` here, the same JSON from a server); these records are
read from it and never computed: the page quotes what the report gives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def _number(value: Any) -> float | None:
    """A finite float, or None for a missing or non-finite one (JSON's null)."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


@dataclass(frozen=True)
class Interval:
    """A 95 % interval: its ends (None where the report gives none) and the method named."""

    low: float | None
    high: float | None
    method: str = ""

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Interval:
        """The interval of a report row (``ci_low``, ``ci_high``, ``interval``)."""
        return cls(
            _number(row.get("ci_low")), _number(row.get("ci_high")), str(row.get("interval", ""))
        )

    @property
    def known(self) -> bool:
        return self.low is not None and self.high is not None

    def holds(self, value: float) -> bool:
        """Whether ``value`` lies inside the interval (False where it has no ends)."""
        return self.low is not None and self.high is not None and self.low <= value <= self.high

    @property
    def half_width(self) -> float | None:
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2


@dataclass(frozen=True)
class Estimate:
    """One figure with its interval and test: a share minus its fair value, a difference."""

    value: float | None
    interval: Interval
    p_value: float | None = None
    units: int | None = None
    effective_n: float | None = None
    by: str = ""
    test: str = ""

    @classmethod
    def of(cls, row: Mapping[str, Any], key: str = "estimate") -> Estimate:
        """The estimate of a report row whose value is under ``key``."""
        units = row.get("units")
        return cls(
            value=_number(row.get(key)),
            interval=Interval.of(row),
            p_value=_number(row.get("p_value")),
            units=None if units is None else int(units),
            effective_n=_number(row.get("effective_n")),
            by=str(row.get("by", "")),
            test=str(row.get("test", "")),
        )

    @property
    def significant(self) -> bool:
        """Whether the test rejects at 5 %: the interval leaves out no difference."""
        return self.p_value is not None and self.p_value < 0.05


def first_player(report: Mapping[str, Any]) -> Estimate:
    """The starting player's win share minus 1/n, as the report gives it."""
    return Estimate.of(report["first_player_advantage"])


def compared_first_player(compared: Mapping[str, Any]) -> Estimate:
    """The difference of two batches' first-player advantages (``analysis.compare``)."""
    return Estimate.of(compared["first_player_advantage"], "difference")
