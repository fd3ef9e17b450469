"""The write path: one chunk's match and seat rows stored in one idempotent transaction.

Results are written with SQLAlchemy Core and the driver's fastest load path (executemany on
SQLite, COPY on PostgreSQL): building one ORM object per row costs about 100 µs, far too much
for tens of thousands of rows a second.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from sqlalchemy import Connection, Engine, Insert, Table, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, IntegrityError

from storage.crud.chunks import overlaps_written
from storage.models import BATCH, CHUNK, MATCH_COLUMNS, SEAT_COLUMNS, STOP_COLUMNS, utcnow
from storage.records import MatchRecord, join_moves


def _insert_ignore(engine: Engine, table: Table, keys: Sequence[str]) -> Insert:
    """``INSERT ... ON CONFLICT (keys) DO NOTHING`` in the engine's dialect."""
    if engine.dialect.name == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing(index_elements=list(keys))
    if engine.dialect.name == "sqlite":
        return sqlite.insert(table).on_conflict_do_nothing(index_elements=list(keys))
    raise NotImplementedError(f"unsupported database dialect {engine.dialect.name!r}")


def match_rows(batch_id: str, records: Iterable[MatchRecord]) -> tuple[list[tuple], list[tuple]]:
    """Row tuples for the match and seat_result tables, in ``MATCH_COLUMNS`` / ``SEAT_COLUMNS``
    order, with stats and move times already serialised to JSON text (what ``write_chunk``
    stores)."""
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    matches: list[tuple] = []
    seats: list[tuple] = []
    for r in records:
        index = r.match_index
        matches.append(
            (
                batch_id,
                index,
                r.seed,
                r.ok,
                r.plies,
                r.ended_by,
                r.duration,
                join_moves(r.moves),
                dumps(r.stats),
                r.error,
                r.first_seat,
                r.opening,
            )
        )
        seats.extend(
            (
                batch_id,
                index,
                *seat[:-1],
                None if seat.move_ms is None else dumps(list(seat.move_ms)),
            )
            for seat in r.seats
        )
    return matches, seats


def _insert_sql(table: str, columns: Sequence[str], keys: Sequence[str], mark: str) -> str:
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join([mark] * len(columns))}) "
        f"ON CONFLICT ({', '.join(keys)}) DO NOTHING"
    )


_SQLITE_MATCH = _insert_sql("match", MATCH_COLUMNS, ("batch_id", "match_index"), "?")
_SQLITE_SEAT = _insert_sql("seat_result", SEAT_COLUMNS, ("batch_id", "match_index", "seat"), "?")
_PG_MATCH = _insert_sql("match", MATCH_COLUMNS, ("batch_id", "match_index"), "%s")
_PG_SEAT = _insert_sql("seat_result", SEAT_COLUMNS, ("batch_id", "match_index", "seat"), "%s")
_COPY_MATCH = f"COPY match ({', '.join(MATCH_COLUMNS)}) FROM STDIN"
_COPY_SEAT = f"COPY seat_result ({', '.join(SEAT_COLUMNS)}) FROM STDIN"


def insert_rows(conn: Connection, matches: list[tuple], seats: list[tuple]) -> None:
    """Insert result rows (``match_rows``' tuples), ignoring any already there, as fast as the
    driver allows (the chunk writer and ``storage.archive``'s import share it).

    SQLite: the driver's executemany of plain tuples (type processing per value would cost
    more than the insert itself). PostgreSQL: COPY, the fastest load path; COPY cannot skip
    conflicts, so should a row already exist (an overlapping range written by other means)
    the COPY is rolled back to a savepoint and the rows go in with ON CONFLICT DO NOTHING.
    """
    if conn.dialect.name == "sqlite":
        if matches:
            conn.exec_driver_sql(_SQLITE_MATCH, matches)
        if seats:
            conn.exec_driver_sql(_SQLITE_SEAT, seats)
        return
    try:
        with conn.begin_nested():
            cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
            with cursor.copy(_COPY_MATCH) as copy:
                for row in matches:
                    copy.write_row(row)
            with cursor.copy(_COPY_SEAT) as copy:
                for row in seats:
                    copy.write_row(row)
    except Exception as exc:
        if not _is_unique_violation(exc):
            base = conn.dialect.loaded_dbapi.Error
            if isinstance(exc, base):
                # Wrapped as SQLAlchemy wraps every other statement's error, so a lock timeout
                # or a lost connection in the COPY is an outage like any other
                # (workers.outages), not a bug.
                raise DBAPIError.instance(_COPY_MATCH, None, exc, base) from exc
            raise
        if matches:
            conn.exec_driver_sql(_PG_MATCH, matches)
        if seats:
            conn.exec_driver_sql(_PG_SEAT, seats)


def _is_unique_violation(exc: BaseException) -> bool:
    # The COPY runs on the driver's own cursor, so its errors arrive unwrapped.
    return isinstance(exc, IntegrityError) or getattr(exc, "sqlstate", None) == "23505"


def write_chunk(
    engine: Engine,
    *,
    batch_id: str,
    start: int,
    stop: int,
    records: list[MatchRecord],
    duration: float,
    worker: str | None = None,
    stop_counts: Sequence[int] | None = None,
) -> bool:
    """Store one chunk's results in one transaction; False (and nothing written) if the chunk,
    or any part of its range, was already stored.

    ``stop_counts``: the stop rule's outcome counts over these matches (up to five, worst
    first), kept on the chunk row so the rule's check sums chunk rows (``stop_count_totals``).

    The chunk row's primary key is the idempotency guard, so a chunk delivered twice writes
    nothing the second time. A range that overlaps another chunk row is refused too, so the
    rows of a batch never overlap and their done/failed counts add up to the matches stored.
    Writes of one batch take turns for that check (on PostgreSQL a lock on the batch row; on
    SQLite the insert takes the database's write lock). Matches and seats also ignore
    conflicts, so no index is ever stored twice.

    On PostgreSQL the match and seat rows go first and the batch row is locked only for the
    claim and the check, the last statements before the commit: the bulk of the write, whose
    time grows with the chunk and the link, holds nothing the batch's other chunks need. A
    second delivery of the same range waits on the first's rows, then finds its chunk row.
    Should the writer's host be cut off mid-write, only that range waits, and only until the
    server drops the lost session (``storage.db.ConnectionOptions``).
    """
    for r in records:
        if not start <= r.match_index < stop:
            raise ValueError(f"match {r.match_index} is outside chunk [{start}, {stop})")
    matches, seats = match_rows(batch_id, records)
    done = sum(1 for r in records if r.ok)
    chunk = {
        "batch_id": batch_id,
        "start": start,
        "stop": stop,
        "done": done,
        "failed": len(records) - done,
        "duration": duration,
        "finished_at": utcnow(),
        "worker": worker[:200] if worker else None,
    }
    if stop_counts is not None:
        if len(stop_counts) > len(STOP_COLUMNS):
            raise ValueError(f"at most {len(STOP_COLUMNS)} stop counts, got {len(stop_counts)}")
        padded = [*stop_counts, *[0] * (len(STOP_COLUMNS) - len(stop_counts))]
        chunk.update({name: int(c) for name, c in zip(STOP_COLUMNS, padded, strict=True)})
    claim = _insert_ignore(engine, CHUNK, ("batch_id", "start")).returning(CHUNK.c.start)
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                insert_rows(conn, matches, seats)
                conn.execute(
                    select(BATCH.c.id).where(BATCH.c.id == batch_id).with_for_update(key_share=True)
                )
            if conn.execute(claim, chunk).first() is None:
                raise _OverlapError  # already written by an earlier delivery of this chunk
            if overlaps_written(conn, batch_id, start, stop, besides=start):
                raise _OverlapError
            if conn.dialect.name != "postgresql":
                insert_rows(conn, matches, seats)
    except _OverlapError:
        return False  # the range, or part of it, is already stored: rolled back
    return True


class _OverlapError(Exception):
    """Raised inside ``write_chunk``'s transaction to roll it back (whatever it wrote)."""
