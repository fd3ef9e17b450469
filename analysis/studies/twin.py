"""A study page's machine-readable twin: every question's figure with its estimate, interval,
test and units, and the batches it was read from (keys as the study file gives them, matches,
playing time), and, where the game's ladder is committed, the strength and CPU time of the
levels it plays (``levels``).

``play_seconds`` is the wall-clock time of a batch's matches as stored, summed: CPU time only
where each match had a core to itself, and more wherever processes shared one or a run was
paused (version 1 called it ``cpu_seconds``). The CPU time a level spends on a game is the
ladder's figure.

A question in a family (``family``: its name and its questions' numbers) has its p-value
Holm-adjusted over the family as ``result.p_holm``, as the page gives it.

A study still playing lists its batches without results as ``not_played`` (absent when every
batch has some), and a question on one of them has ``result: null``. A study with a series
has it under ``series`` (``analysis.studies.series_page``).

Like the page, it copies the batches' reports and comparisons and computes nothing else.
Numbers are rounded to six decimals, so the file reads the same whichever machine's floating
point made the last digits; nothing in it says when or where it was written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from analysis.studies.context import beside
from analysis.studies.definition import Study
from analysis.studies.families import Adjusted
from analysis.studies.figures import entry as figure_entry

FORMAT = "playtester-study"
DIGITS = 6


def _batch(
    study: Study, name: str, batch_id: str, report: Mapping[str, Any], seconds: float | None
) -> dict[str, Any]:
    meta = report["batch"]
    return {
        "id": batch_id,
        "keys": study.batch(name).keys,
        "matches": meta["matches"],
        "matches_done": meta["matches_done"],
        "matches_failed": meta["matches_failed"],
        "status": meta["status"],
        "play_seconds": seconds,
    }


def page_data(
    study: Study,
    ids: Mapping[str, str],
    reports: Mapping[str, Any],
    comparisons: Mapping[tuple[str, str], Any],
    seconds: Mapping[str, float],
    adjusted: Mapping[int, Adjusted] | None = None,
) -> dict[str, Any]:
    """The twin of a study page, from the same reports and comparisons; ``adjusted``: the
    family questions' Holm-adjusted p-values, by question number."""
    adjusted = adjusted or {}
    questions = []
    for number, q in enumerate(study.questions, start=1):
        if not q.answered(ids):
            # Not yet played: the question stands with no result.
            questions.append({"number": number, "title": q.title, "figure": str(q.figure),
                              "batch": q.batch, "against": q.against, "result": None})  # fmt: skip
            continue
        compared = comparisons[(q.batch, q.against)] if q.against else None
        shown = figure_entry(q.figure)
        result = shown.data(q, reports[q.batch], compared)
        result.update(beside(q.batches, reports, shown.first_player)[1])
        entry: dict[str, Any] = {}
        if number in adjusted:
            a = adjusted[number]
            result["p_holm"] = a.p_holm
            entry["family"] = {"name": a.family, "questions": list(a.numbers)}
        questions.append(
            {
                "number": number,
                "title": q.title,
                "figure": str(q.figure),
                "batch": q.batch,
                "against": q.against,
                **entry,
                "result": result,
                "batches": {
                    name: _batch(study, name, ids[name], reports[name], seconds.get(name))
                    for name in q.batches
                },
            }
        )
    batches = {
        b.name: _batch(study, b.name, ids[b.name], reports[b.name], seconds.get(b.name))
        for b in study.batches
        if b.name in ids
    }
    unplayed = {"not_played": [b.name for b in study.batches if b.name not in ids]}
    return {
        "format": FORMAT,
        "version": 2,
        "study": study.name,
        "title": study.title,
        "description": study.description,
        "half_width": study.half_width,
        "budget_cpu_hours": study.budget_cpu_hours,
        "matches": sum(b["matches_done"] for b in batches.values()),
        "play_seconds": (
            sum(s for s in (b["play_seconds"] for b in batches.values()) if s is not None)
            if seconds
            else None
        ),
        "questions": questions,
        "batches": batches,
        # Only a study still playing names its batches without results.
        **(unplayed if unplayed["not_played"] else {}),
    }


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, DIGITS) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def to_json(data: Mapping[str, Any]) -> str:
    """The twin as text: keys sorted, numbers rounded, non-finite numbers as null."""
    return json.dumps(_rounded(dict(data)), indent=2, sort_keys=True, allow_nan=False) + "\n"
