"""Alquerque: why drawn games were drawn (no-capture rule, repetition, the batch's ply cap)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from sqlalchemy import Engine

from analysis import frames
from analysis.formatting import TextTable, num, pct
from analysis.games import GameReport
from analysis.tidy import Wide
from engines.core import Ending

CAUSES: dict[str, str] = {
    Ending.NO_CAPTURE: "no-capture rule",
    Ending.REPETITION: "threefold repetition",
    Ending.MAX_PLIES: "batch ply cap (max_plies)",
}
EARLIER: dict[str, str] = {Ending.MOVE_LIMIT: "batch ply cap (stored as move_limit)"}
"""Endings of rows stored before the batch's cap had its own name: Alquerque has no move-limit
rule, so a ``move_limit`` there was the batch's cap."""


def alquerque_section(draw_endings: pd.DataFrame) -> dict[str, Any]:
    """Draw causes from ``draw_endings`` (columns ``ended_by``, ``count``: drawn matches only).

    ``draw_causes`` lists every cause (zero counts included) with its share of the draws.
    """
    counts = {
        str(k): int(v) for k, v in zip(draw_endings["ended_by"], draw_endings["count"], strict=True)
    }
    total = sum(counts.values())
    causes = []
    for key, label in CAUSES.items():
        c = counts.pop(key, 0)
        causes.append(
            {"cause": key, "label": label, "draws": c, "share": c / total if total else None}
        )
    for key, c in sorted(counts.items()):
        label = EARLIER.get(key, key)
        causes.append(
            {"cause": key, "label": label, "draws": c, "share": c / total if total else None}
        )
    return {"name": "alquerque", "draws": total, "draw_causes": causes}


def build(engine: Engine, batch: Any, w: Wide) -> dict[str, Any]:
    """The section of a stored batch: causes of its drawn games."""
    return alquerque_section(frames.draw_endings(engine, batch.id))


def tables(g: Mapping[str, Any]) -> list[TextTable]:
    """One table: each cause with its draws and share of all draws."""
    rows = [[c["label"], num(c["draws"]), pct(c["share"])] for c in g["draw_causes"]]
    return [TextTable("Draw causes", ("cause", "draws", "share"), rows, css_class="draws")]


REPORT = GameReport(name="alquerque", title="Alquerque: draw causes", build=build, tables=tables)
