"""Families of questions: the tests a study makes as one set, each p-value Holm-adjusted over
the family so that the chance of any false finding in it stays at the level asked.

A study that compares four starting layouts pairwise makes six tests; read one at a time, one
of them is below 0.05 one time in four even when no layout differs. The page keeps each
question's own p-value and gives the adjusted one beside it; intervals stay per question.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analysis.stats import holm
from analysis.studies.definition import Figure, Question


@dataclass(frozen=True)
class Adjusted:
    """A question's p-value adjusted over its family (None where its own test gave none)."""

    family: str
    size: int
    """How many questions the family has."""
    numbers: tuple[int, ...]
    """The family's questions, by their number on the page."""
    p_holm: float | None


def _p_value(q: Question, report: Mapping[str, Any], compared: Any) -> float:
    if q.figure is not Figure.FIRST_PLAYER_ADVANTAGE:
        raise ValueError(f"{q.figure} has no single test to adjust")
    source = compared["first_player_advantage"] if compared else report[q.figure]
    p = source.get("p_value")
    return math.nan if p is None else float(p)


def adjust(
    questions: Sequence[Question],
    reports: Mapping[str, Any],
    comparisons: Mapping[tuple[str, str], Any],
) -> dict[int, Adjusted]:
    """Each family question's adjusted p-value, by its number on the page (from 1); a
    question whose batches have no results yet (no report) is left out of its family."""
    members: dict[str, list[int]] = {}
    for number, q in enumerate(questions, start=1):
        played = q.batch in reports and (q.against is None or q.against in reports)
        if q.family is not None and played:
            members.setdefault(q.family, []).append(number)
    out: dict[int, Adjusted] = {}
    for family, numbers in members.items():
        p = []
        for number in numbers:
            q = questions[number - 1]
            compared = comparisons[(q.batch, q.against)] if q.against else None
            p.append(_p_value(q, reports[q.batch], compared))
        for number, value in zip(numbers, holm(p), strict=True):
            out[number] = Adjusted(
                family, len(numbers), tuple(numbers), None if math.isnan(value) else value
            )
    return out
