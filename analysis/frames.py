"""Tidy DataFrames of a batch's stored results, straight from SQL.

Columns are documented per function; every frame is sorted by match index (then seat).
"""

from __future__ import annotations

import pandas as pd
from sqlalchemy import Engine, select

from storage.crud import MATCH, SEAT_RESULT

SEAT_COLUMNS = ["match_index", "seat", "agent", "agent_index", "points", "win_share", "rank"]
MATCH_COLUMNS = ["match_index", "seed", "ok", "plies", "ended_by", "duration", "error"]


def seat_results(engine: Engine, batch_id: str) -> pd.DataFrame:
    """One row per seat of every successful match.

    Columns: match_index, seat, agent (label), agent_index, points, win_share, rank.
    """
    t = SEAT_RESULT
    query = (
        select(*(t.c[name] for name in SEAT_COLUMNS))
        .where(t.c.batch_id == batch_id)
        .order_by(t.c.match_index, t.c.seat)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    frame = pd.DataFrame(rows, columns=SEAT_COLUMNS)
    return frame.astype(
        {
            "match_index": "int64",
            "seat": "int64",
            "agent": "object",
            "agent_index": "int64",
            "points": "float64",
            "win_share": "float64",
            "rank": "int64",
        }
    )


def matches(engine: Engine, batch_id: str) -> pd.DataFrame:
    """One row per stored match, played or failed (stats excluded: see ``match_stats``).

    Columns: match_index, seed, ok, plies, ended_by, duration, error (None when ok).
    """
    t = MATCH
    query = (
        select(*(t.c[name] for name in MATCH_COLUMNS))
        .where(t.c.batch_id == batch_id)
        .order_by(t.c.match_index)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    frame = pd.DataFrame(rows, columns=MATCH_COLUMNS)
    return frame.astype(
        {
            "match_index": "int64",
            "seed": "int64",
            "ok": "bool",
            "plies": "int64",
            "ended_by": "object",
            "duration": "float64",
            "error": "object",
        }
    )


def match_stats(engine: Engine, batch_id: str) -> pd.DataFrame:
    """Columns: match_index, stats (the game's ``stats()`` dict) for every successful match."""
    t = MATCH
    query = (
        select(t.c.match_index, t.c.stats)
        .where(t.c.batch_id == batch_id, t.c.ok.is_(True))
        .order_by(t.c.match_index)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    frame = pd.DataFrame(rows, columns=["match_index", "stats"])
    return frame.astype({"match_index": "int64", "stats": "object"})
