"""Blitz clocks in a report: the time each agent's moves took and the matches lost on time.

Only a batch with a ``time_control`` has a clock section. Its matches are not reproducible
from their seed (how far a search gets within its move time depends on the machine and its
load); their stored moves still replay them exactly, and the note says so.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from engines.core import Ending

NOT_REPRODUCIBLE = (
    "clocked matches are not reproducible from their seed: how far a search gets within its "
    "move time depends on the machine and its load (the stored moves still replay each match "
    "exactly)"
)


def clock_figures(times: pd.DataFrame, time_control: str, labels: list[str]) -> dict[str, Any]:
    """Per agent (in ``labels`` order): moves timed, mean, median and longest move in ms, mean
    clock time used per match in seconds, and matches lost on time; and the total lost on
    time. ``times`` is ``analysis.frames.move_times``'s frame.

    A seat loses on time when its match ended by ``Ending.TIME`` and it got no share of the
    win (the others share it).
    """
    flagged = (times["ended_by"] == Ending.TIME) & (times["win_share"] == 0.0)
    rows = []
    for label in labels:
        mine = times[times["agent"] == label]
        if mine.empty:
            continue
        ms = np.concatenate([np.asarray(v, dtype=np.float64) for v in mine["move_ms"]])
        per_match = np.array([sum(v) for v in mine["move_ms"]], dtype=np.float64) / 1000.0
        rows.append(
            {
                "agent": label,
                "seats": len(mine),
                "moves": int(ms.size),
                "mean_ms": float(ms.mean()) if ms.size else None,
                "median_ms": float(np.median(ms)) if ms.size else None,
                "max_ms": float(ms.max()) if ms.size else None,
                "seconds_per_match": float(per_match.mean()),
                "losses_on_time": int(flagged[mine.index].sum()),
            }
        )
    matches_on_time = times.loc[times["ended_by"] == Ending.TIME, "match_index"].nunique()
    return {
        "time_control": time_control,
        "matches_lost_on_time": int(matches_on_time),
        "agents": rows,
        "note": NOT_REPRODUCIBLE,
    }
