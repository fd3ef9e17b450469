"""Alquerque: why drawn games were drawn (no-capture rule, repetition, ply cap)."""

from __future__ import annotations

from typing import Any

import pandas as pd

CAUSES = {
    "no_capture": "no-capture rule",
    "repetition": "threefold repetition",
    "move_limit": "ply cap",
}


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
        causes.append(
            {"cause": key, "label": key, "draws": c, "share": c / total if total else None}
        )
    return {"name": "alquerque", "draws": total, "draw_causes": causes}
