"""Read queries the HTTP API and the command line answer from: stored matches with their seats,
the export's rows, and whether the database answers. The faces call these functions (and
``storage.crud``'s) and never build a query themselves.

Rows come back as plain dicts keyed by column name, so callers shape them without knowing the
tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from sqlalchemy import Connection, Engine, Select, and_, select, text

from storage.crud import MATCH, SEAT_RESULT

EXPORT_SLICE = 2000
"""Matches read per query by ``export_row_slices``."""

EXPORT_MATCH_COLUMNS = (
    "batch_id",
    "match_index",
    "seed",
    "ok",
    "plies",
    "ended_by",
    "duration",
    "error",
)
EXPORT_SEAT_COLUMNS = ("seat", "agent", "agent_index", "points", "win_share", "rank")
EXPORT_COLUMNS = EXPORT_MATCH_COLUMNS + EXPORT_SEAT_COLUMNS
"""The columns of an export row, in order: the match's, then its seat's."""


class StoredMatch(NamedTuple):
    """A stored match row and its seat rows (in seat order), each as a dict by column name."""

    match: dict[str, Any]
    seats: list[dict[str, Any]]


def ping(engine: Engine) -> None:
    """Run ``SELECT 1``; raises whatever the driver raises when the database does not answer."""
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))


# --------------------------------------------------------------------------- matches


def list_matches(
    engine: Engine, batch_id: str, *, limit: int, offset: int = 0
) -> list[StoredMatch]:
    """Up to ``limit`` stored matches of a batch in index order, after skipping ``offset``."""
    return _with_seats(
        engine, batch_id, select(MATCH).where(MATCH.c.batch_id == batch_id), limit, offset
    )


def get_match(engine: Engine, batch_id: str, match_index: int) -> StoredMatch | None:
    """The stored match ``match_index`` of a batch (a full id) with its seats, else ``None``."""
    query = select(MATCH).where(MATCH.c.batch_id == batch_id, MATCH.c.match_index == match_index)
    found = _with_seats(engine, batch_id, query, 1, 0)
    return found[0] if found else None


def _with_seats(
    engine: Engine, batch_id: str, query: Select[Any], limit: int, offset: int
) -> list[StoredMatch]:
    """The match rows ``query`` selects (index order, one page), each with its seat rows."""
    query = query.order_by(MATCH.c.match_index).limit(limit).offset(offset)
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(query)]
        if not rows:
            return []
        by_match = _seats_between(conn, batch_id, rows[0]["match_index"], rows[-1]["match_index"])
    return [StoredMatch(r, by_match.get(r["match_index"], [])) for r in rows]


def _seats_between(
    conn: Connection, batch_id: str, low: int, high: int
) -> dict[int, list[dict[str, Any]]]:
    """Seat rows of the matches ``low`` to ``high`` (inclusive), by match index, in seat order."""
    seats = conn.execute(
        select(SEAT_RESULT)
        .where(
            SEAT_RESULT.c.batch_id == batch_id,
            SEAT_RESULT.c.match_index.between(low, high),
        )
        .order_by(SEAT_RESULT.c.match_index, SEAT_RESULT.c.seat)
    )
    by_match: dict[int, list[dict[str, Any]]] = {}
    for s in seats:
        by_match.setdefault(s.match_index, []).append(dict(s._mapping))
    return by_match


# --------------------------------------------------------------------------- export


_EXPORT_SELECT = select(
    *(MATCH.c[name] for name in EXPORT_MATCH_COLUMNS),
    *(SEAT_RESULT.c[name] for name in EXPORT_SEAT_COLUMNS),
).select_from(
    MATCH.outerjoin(
        SEAT_RESULT,
        and_(
            SEAT_RESULT.c.batch_id == MATCH.c.batch_id,
            SEAT_RESULT.c.match_index == MATCH.c.match_index,
        ),
    )
)


def export_row_slices(
    engine: Engine, batch_id: str, size: int = EXPORT_SLICE
) -> Iterator[list[dict[str, Any]]]:
    """Export rows (``EXPORT_COLUMNS``, one per seat of every stored match), ``size`` matches at
    a time, in (match index, seat) order.

    Keyset pagination on the match index: each slice is two queries on a fresh connection, so
    memory does not grow with the batch and no connection is held between slices. A match
    without seat rows gives one row whose seat columns are ``None``.
    """
    after = -1
    while True:
        with engine.connect() as conn:
            indices = list(
                conn.execute(
                    select(MATCH.c.match_index)
                    .where(MATCH.c.batch_id == batch_id, MATCH.c.match_index > after)
                    .order_by(MATCH.c.match_index)
                    .limit(size)
                ).scalars()
            )
            if not indices:
                return
            query = _EXPORT_SELECT.where(
                MATCH.c.batch_id == batch_id,
                MATCH.c.match_index.between(after + 1, indices[-1]),
            ).order_by(MATCH.c.match_index, SEAT_RESULT.c.seat)
            rows = [dict(r._mapping) for r in conn.execute(query)]
        yield rows
        after = indices[-1]
