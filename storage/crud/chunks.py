"""Chunk rows of a batch: which ranges are written, which are missing, their stop-rule counts.

The arithmetic on ranges is ``storage.chunking``'s; this module reads the rows it works on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, func, select, text

from storage.chunking import Range, missing_pieces, uncovered
from storage.crud.tally import aware
from storage.models import CHUNK, STOP_COLUMNS, BatchBase


def written_ranges(engine: Engine, batch_id: str) -> list[Range]:
    """The ``[start, stop)`` ranges of a batch's chunk rows, in order."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(CHUNK.c.start, CHUNK.c.stop)
            .where(CHUNK.c.batch_id == batch_id)
            .order_by(CHUNK.c.start)
        )
        return [(int(a), int(b)) for a, b in rows]


def gaps(engine: Engine, batch: BatchBase) -> list[Range]:
    """The maximal ranges of match indices of ``batch`` that no chunk row covers, in order."""
    return uncovered(written_ranges(engine, batch.id), batch.matches)


def missing_chunks(engine: Engine, batch: BatchBase) -> list[Range]:
    """The missing match ranges of ``batch``, in order: with a fixed chunk size, the chunks of
    the fixed chunking that have no row yet; otherwise the gaps, whole (the runner cuts them)."""
    return missing_pieces(gaps(engine, batch), batch.chunk_size)


def chunk_exists(engine: Engine, batch_id: str, start: int) -> bool:
    """True when the chunk starting at ``start`` has been written."""
    with engine.connect() as conn:
        row = conn.execute(
            select(CHUNK.c.start).where(CHUNK.c.batch_id == batch_id, CHUNK.c.start == start)
        ).first()
    return row is not None


def overlaps_written(
    conn: Connection, batch_id: str, start: int, stop: int, *, besides: int | None = None
) -> bool:
    """True when a chunk row of the batch (other than the one starting at ``besides``) covers
    part of ``[start, stop)``; ``conn`` may be inside the transaction that writes a chunk."""
    # Rows of a batch never overlap one another, so among the rows that start before ``stop``
    # only the last one can reach into ``[start, stop)``: one index lookup, whatever the size.
    query = select(CHUNK.c.stop).where(CHUNK.c.batch_id == batch_id, CHUNK.c.start < stop)
    if besides is not None:
        query = query.where(CHUNK.c.start != besides)
    last = conn.execute(query.order_by(CHUNK.c.start.desc()).limit(1)).scalar()
    return last is not None and int(last) > start


def range_written(engine: Engine, batch_id: str, start: int, stop: int) -> bool:
    """True when some chunk row of the batch covers part of ``[start, stop)``."""
    with engine.connect() as conn:
        return overlaps_written(conn, batch_id, start, stop)


def last_written_at(engine: Engine, batch_id: str) -> datetime | None:
    """When the batch's latest chunk row was written (UTC), None before its first."""
    with engine.connect() as conn:
        latest = conn.execute(
            select(func.max(CHUNK.c.finished_at)).where(CHUNK.c.batch_id == batch_id)
        ).scalar()
    return aware(latest)


@dataclass(frozen=True)
class StopTotals:
    """Chunk rows of a batch summed for its stop rule.

    ``counts`` is None when no chunk is written or some written chunk carries no counts (written
    before counts were stored): the caller must then count from the seat results.
    """

    chunks: int
    matches: int
    counts: list[int] | None


_STOP_TOTALS = text(
    "SELECT COUNT(*), COUNT(stop_0), COALESCE(SUM(stop - start), 0), "
    + ", ".join(f"COALESCE(SUM({name}), 0)" for name in STOP_COLUMNS)
    + " FROM chunk WHERE batch_id = :b"
)
# Plain SQL text: it runs after every chunk of a batch with a stop rule, and building the
# equivalent select() each time cost several times more than the query itself.


def stop_count_totals(engine: Engine, batch_id: str) -> StopTotals:
    """Written chunks, the matches they hold, and their stop-rule counts summed (one query)."""
    with engine.connect() as conn:
        row = conn.execute(_STOP_TOTALS, {"b": batch_id}).one()
    chunks, counted, matches = int(row[0]), int(row[1]), int(row[2])
    # No chunk row at all says nothing about seat rows stored by other means: count those.
    counts = [int(v) for v in row[3:]] if chunks and counted == chunks else None
    return StopTotals(chunks=chunks, matches=matches, counts=counts)
