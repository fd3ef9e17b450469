"""Tidy DataFrames of a batch's stored results, straight from SQL.

Columns are documented per function; every frame is sorted by match index (then seat).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from sqlalchemy import Engine, case, func, select, text

from engines.core import Ending
from storage.models import MATCH, MATCH_COLUMNS, SEAT_COLUMNS, SEAT_RESULT

SEAT_FRAME_COLUMNS = [c for c in SEAT_COLUMNS if c not in ("batch_id", "move_ms")]
"""Columns of ``seat_results``: the stored seat columns of one batch but the move times
(``move_times`` reads those)."""
MATCH_FRAME_COLUMNS = [c for c in MATCH_COLUMNS if c not in ("batch_id", "moves", "stats")]
"""Columns of ``matches``: the stored match columns of one batch, without the move list and
the stats (``match_stats`` reads those)."""


def seat_results(engine: Engine, batch_id: str) -> pd.DataFrame:
    """One row per seat of every successful match.

    Columns: match_index, seat, agent (label), agent_index, points, win_share, rank.
    ``win_share`` is the game result (``returns()``); ``rank`` is a placing by result, then
    points, kept for display: a drawn game is a draw even when its ranks differ.
    """
    t = SEAT_RESULT
    query = (
        select(*(t.c[name] for name in SEAT_FRAME_COLUMNS))
        .where(t.c.batch_id == batch_id)
        .order_by(t.c.match_index, t.c.seat)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    frame = pd.DataFrame(rows, columns=SEAT_FRAME_COLUMNS)
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

    Columns: match_index, seed, ok, plies, ended_by, duration, error (None when ok),
    first_seat and opening (nullable integers: null for failed matches and for rows stored
    before they were kept).
    """
    t = MATCH
    query = (
        select(*(t.c[name] for name in MATCH_FRAME_COLUMNS))
        .where(t.c.batch_id == batch_id)
        .order_by(t.c.match_index)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    frame = pd.DataFrame(rows, columns=MATCH_FRAME_COLUMNS)
    return frame.astype(
        {
            "match_index": "int64",
            "seed": "int64",
            "ok": "bool",
            "plies": "int64",
            "ended_by": "object",
            "duration": "float64",
            "error": "object",
            "first_seat": "Int64",
            "opening": "Int64",
        }
    )


def match_design(
    engine: Engine, batch_id: str, starting_seat: Callable[[int], int] | None = None
) -> pd.DataFrame:
    """Columns: match_index, first_seat, opening and game (nullable) for every successful
    match.

    ``game`` is equal for matches that played the same move list and differs otherwise (a
    dense rank of the move lists, taken in SQL so the moves never leave the database); null
    where no move was recorded (an archive exported without moves). ``starting_seat(seed)``
    fills in the first seat of rows stored before it was kept (the game's first mover from
    that seed); without it they stay null.
    """
    t = MATCH
    game = case((t.c.moves == "", None), else_=func.dense_rank().over(order_by=t.c.moves))
    query = (
        select(t.c.match_index, t.c.seed, t.c.first_seat, t.c.opening, game)
        .where(t.c.batch_id == batch_id, t.c.ok.is_(True))
        .order_by(t.c.match_index)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    frame = pd.DataFrame(rows, columns=["match_index", "seed", "first_seat", "opening", "game"])
    frame = frame.astype(
        {"match_index": "int64", "first_seat": "Int64", "opening": "Int64", "game": "Int64"}
    )
    missing = frame["first_seat"].isna()
    if starting_seat is not None and bool(missing.any()):
        frame.loc[missing, "first_seat"] = [
            starting_seat(int(seed)) for seed in frame.loc[missing, "seed"]
        ]
    return frame.drop(columns="seed")


def match_stats(engine: Engine, batch_id: str) -> pd.DataFrame:
    """Columns: match_index, stats (the game's ``stats()`` dict), ended_by (how the match
    ended, which the stats of a match the rules did not end cannot say) for every successful
    match."""
    t = MATCH
    query = (
        select(t.c.match_index, t.c.stats, t.c.ended_by)
        .where(t.c.batch_id == batch_id, t.c.ok.is_(True))
        .order_by(t.c.match_index)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    frame = pd.DataFrame(rows, columns=["match_index", "stats", "ended_by"])
    return frame.astype({"match_index": "int64", "stats": "object", "ended_by": "object"})


# --------------------------------------------------------------------------- report loaders
FETCH_ROWS = 200_000
# The report reads the seat table once, without its text columns, and lets SQL aggregate the
# match table (lengths and endings), so a million-match batch costs one narrow scan.


def seat_results_numeric(
    engine: Engine, batch_id: str, labels: Sequence[str] | None = None
) -> pd.DataFrame:
    """``seat_results`` without ``rank``, with ``agent`` a categorical built from ``labels``.

    Reads only the numeric columns (the label comes from ``agent_index``), which is what makes
    reports over millions of rows cheap. Without ``labels`` the agent names are read from SQL
    (one row per agent).
    """
    mark = "?" if engine.dialect.paramstyle == "qmark" else "%s"
    sql = (
        "SELECT match_index, seat, agent_index, points, win_share FROM seat_result "
        f"WHERE batch_id = {mark} ORDER BY match_index, seat"
    )
    parts: list[np.ndarray] = []
    with engine.connect() as conn:
        # The DB-API cursor hands out plain tuples, which NumPy converts in C; SQLAlchemy rows
        # would cost a Python-level lookup per value.
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.execute(sql, (batch_id,))
            while rows := cursor.fetchmany(FETCH_ROWS):
                parts.append(np.array(rows, dtype=np.float64))
        finally:
            cursor.close()
        if labels is None:
            found = conn.execute(
                text(
                    "SELECT agent_index, MIN(agent) FROM seat_result WHERE batch_id = :b "
                    "GROUP BY agent_index"
                ),
                {"b": batch_id},
            ).all()
            names = {int(i): str(a) for i, a in found}
            labels = [names.get(i, f"agent{i}") for i in range(max(names, default=-1) + 1)]
    data = np.concatenate(parts) if parts else np.zeros((0, 5))
    codes = data[:, 2].astype(np.int64)
    agent = pd.Categorical.from_codes(codes, categories=pd.Index(list(labels)).unique())
    return pd.DataFrame(
        {
            "match_index": data[:, 0].astype(np.int64),
            "seat": data[:, 1].astype(np.int64),
            "agent": agent,
            "agent_index": codes,
            "points": data[:, 3],
            "win_share": data[:, 4],
        }
    )


def plies_counts(engine: Engine, batch_id: str) -> pd.DataFrame:
    """Columns: plies, count — the length distribution of successful matches."""
    sql = text(
        "SELECT plies, COUNT(*) FROM match WHERE batch_id = :b AND ok = :ok "
        "GROUP BY plies ORDER BY plies"
    )
    with engine.connect() as conn:
        rows = conn.execute(sql, {"b": batch_id, "ok": True}).all()
    return pd.DataFrame(rows, columns=["plies", "count"]).astype(
        {"plies": "int64", "count": "int64"}
    )


def ended_by_counts(engine: Engine, batch_id: str) -> pd.DataFrame:
    """Columns: ended_by, count (successful matches), plus one ``Ending.FAILED`` row when any
    failed."""
    sql = text(
        "SELECT CASE WHEN ok = :ok THEN ended_by ELSE :failed END AS how, COUNT(*) FROM match "
        "WHERE batch_id = :b GROUP BY how ORDER BY how"
    )
    with engine.connect() as conn:
        rows = conn.execute(sql, {"b": batch_id, "ok": True, "failed": Ending.FAILED.value}).all()
    return pd.DataFrame(rows, columns=["ended_by", "count"]).astype({"count": "int64"})


def distinct_games(engine: Engine, batch_id: str) -> int:
    """How many different move lists the batch's successful matches played (SQL
    ``COUNT(DISTINCT moves)``): matches that replay one line count once."""
    sql = text("SELECT COUNT(DISTINCT moves) FROM match WHERE batch_id = :b AND ok = :ok")
    with engine.connect() as conn:
        return int(conn.execute(sql, {"b": batch_id, "ok": True}).scalar_one() or 0)


def draw_endings(engine: Engine, batch_id: str) -> pd.DataFrame:
    """Columns: ended_by, count — over matches where no seat took the whole win."""
    sql = text(
        "SELECT m.ended_by, COUNT(*) FROM match m JOIN ("
        " SELECT match_index FROM seat_result WHERE batch_id = :b"
        " GROUP BY match_index HAVING MAX(win_share) < 1) d"
        " ON d.match_index = m.match_index "
        "WHERE m.batch_id = :b GROUP BY m.ended_by ORDER BY m.ended_by"
    )
    with engine.connect() as conn:
        rows = conn.execute(sql, {"b": batch_id}).all()
    return pd.DataFrame(rows, columns=["ended_by", "count"]).astype({"count": "int64"})


def pair_outcomes(
    engine: Engine, batch_id: str, agent_a: str, agent_b: str, *, pairs: bool
) -> list[int]:
    """Outcome counts of ``agent_a`` against ``agent_b``, worst first, aggregated in SQL.

    Each meeting (two seats of one match) scores 0, 1 or 2 half-points for ``a`` by the game
    result: a larger win share wins, equal shares draw, whatever the points. ``pairs=False``:
    three counts (loss, draw, win). ``pairs=True``: matches 2k and 2k+1 form a seat-swapped
    pair; five counts of a's half-points over the pair (0 … 4), complete pairs only.
    """
    meet = (
        "SELECT x.match_index AS mi, CASE WHEN x.win_share > y.win_share THEN 2 "
        "WHEN x.win_share = y.win_share "
        "THEN 1 ELSE 0 END AS o FROM seat_result x JOIN seat_result y "
        "ON y.batch_id = x.batch_id AND y.match_index = x.match_index AND y.seat <> x.seat "
        "WHERE x.batch_id = :b AND x.agent = :a AND y.agent = :c"
    )
    if pairs:
        sql = (
            f"SELECT s, COUNT(*) FROM (SELECT mi / 2 AS p, SUM(o) AS s, COUNT(*) AS k "
            f"FROM ({meet}) q GROUP BY mi / 2) r WHERE k = 2 GROUP BY s"
        )
        size = 5
    else:
        sql = f"SELECT o, COUNT(*) FROM ({meet}) q GROUP BY o"
        size = 3
    counts = [0] * size
    with engine.connect() as conn:
        for value, count in conn.execute(text(sql), {"b": batch_id, "a": agent_a, "c": agent_b}):
            counts[int(value)] = int(count)
    return counts


def move_times(engine: Engine, batch_id: str) -> pd.DataFrame:
    """One row per seat of every successful match that kept its move times (a batch with
    clocks). Columns: match_index, seat, agent, win_share, ended_by, move_ms (the list of the
    seat's move times in milliseconds)."""
    s, m = SEAT_RESULT, MATCH
    query = (
        select(s.c.match_index, s.c.seat, s.c.agent, s.c.win_share, m.c.ended_by, s.c.move_ms)
        .join(m, (m.c.batch_id == s.c.batch_id) & (m.c.match_index == s.c.match_index))
        .where(s.c.batch_id == batch_id, m.c.ok.is_(True), s.c.move_ms.is_not(None))
        .order_by(s.c.match_index, s.c.seat)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    columns = ["match_index", "seat", "agent", "win_share", "ended_by", "move_ms"]
    return pd.DataFrame(rows, columns=columns).astype(
        {"match_index": "int64", "seat": "int64", "win_share": "float64"}
    )
