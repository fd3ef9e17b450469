"""Reading and writing batches and their results. Every function takes the engine first and
keyword-only arguments after it where the meaning would otherwise be unclear.

Results are written with SQLAlchemy Core in one transaction per chunk: building one ORM
object per row costs about 100 µs, far too much for tens of thousands of rows a second.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import Connection, Engine, Insert, Table, case, func, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from storage.db import session
from storage.models import (
    AUTO_CHUNK_SIZE,
    BATCH,
    CHUNK,
    MATCH,
    MATCH_COLUMNS,
    SEAT_COLUMNS,
    SEAT_RESULT,  # noqa: F401 - callers read the tables through this module
    STOP_COLUMNS,
    Batch,
    BatchPlan,
    BatchStatus,
    utcnow,
)
from storage.records import MatchRecord

MIN_PREFIX = 4
"""Shortest batch id prefix accepted in place of a full id."""


class NotFound(LookupError):  # noqa: N818 - the name the API and CLI speak of
    """No stored batch (or match) answers to the id given; the message says what to try.

    Callers catch this class, never ``LookupError`` as a whole: a ``KeyError`` or
    ``IndexError`` raised by a bug must surface as the bug it is, not as "not found".
    """


# --------------------------------------------------------------------------- batches


def create_batch(engine: Engine, *, plan: BatchPlan) -> Batch:
    """Store a validated plan as a new queued batch and return it."""
    batch = Batch(**plan.model_dump(), status=BatchStatus.QUEUED)
    with session(engine) as s:
        s.add(batch)
        s.commit()
        s.refresh(batch)
    return batch


def resolve_batch_id(engine: Engine, text: str) -> str:
    """The full id of the batch named by ``text`` (a full id or a unique prefix)."""
    wanted = text.strip()
    with engine.connect() as conn:
        if conn.execute(select(BATCH.c.id).where(BATCH.c.id == wanted)).first() is not None:
            return wanted
        if len(wanted) < MIN_PREFIX:
            raise NotFound(
                f"no batch {wanted!r}; give the full id or at least {MIN_PREFIX} characters of it"
            )
        escaped = wanted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        found = (
            conn.execute(
                select(BATCH.c.id).where(BATCH.c.id.like(escaped + "%", escape="\\")).limit(3)
            )
            .scalars()
            .all()
        )
    if not found:
        raise NotFound(f"no batch {wanted!r}; `playtester batches` lists them")
    if len(found) > 1:
        raise NotFound(f"batch prefix {wanted!r} is ambiguous ({', '.join(found)}, ...)")
    return str(found[0])


def get_batch(engine: Engine, batch_id: str) -> Batch | None:
    """The batch with this id (or unique id prefix of >= 4 characters), else ``None``."""
    with session(engine) as s:
        found = s.get(Batch, batch_id)
    if found is not None:
        return found
    try:
        full = resolve_batch_id(engine, batch_id)
    except NotFound:
        return None
    with session(engine) as s:
        return s.get(Batch, full)


def list_batches(
    engine: Engine,
    *,
    game: str | None = None,
    status: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[Batch]:
    """Batches, newest first, optionally of one game or in one status."""
    query = select(Batch)
    if game is not None:
        query = query.where(BATCH.c.game == game)
    if status is not None:
        query = query.where(BATCH.c.status == status)
    query = query.order_by(BATCH.c.created_at.desc(), BATCH.c.id).limit(limit).offset(offset)
    with session(engine) as s:
        return list(s.scalars(query).all())


def set_status(
    engine: Engine,
    batch_id: str,
    status: str,
    *,
    error: str | None = None,
    only_from: Collection[str] | None = None,
    stopped_early: bool | None = None,
    decision: dict[str, Any] | None = None,
) -> bool:
    """Move a batch to ``status`` (only from the ``only_from`` statuses when given).

    Returns True when this call changed the row, so concurrent workers can agree on who
    finished a batch. ``running`` stamps ``started_at`` once, and on every move into it (a
    first start or a resume) the start of the current run with the matches finished by then;
    finished statuses stamp ``finished_at``.
    """
    if status not in BatchStatus.ALL:
        raise ValueError(f"unknown batch status {status!r}; one of {', '.join(BatchStatus)}")
    values: dict[str, Any] = {"status": str(status)}
    now = utcnow()
    if status == BatchStatus.RUNNING:
        values["started_at"] = func.coalesce(BATCH.c.started_at, now)
        already = BATCH.c.status == BatchStatus.RUNNING
        finished_so_far = (
            select(func.coalesce(func.sum(CHUNK.c.done + CHUNK.c.failed), 0))
            .where(CHUNK.c.batch_id == BATCH.c.id)
            .scalar_subquery()
        )
        values["run_started_at"] = case((already, BATCH.c.run_started_at), else_=now)
        values["run_start_finished"] = case(
            (already, BATCH.c.run_start_finished), else_=finished_so_far
        )
    if status in BatchStatus.FINISHED:
        values["finished_at"] = now
    if error is not None:
        values["error"] = error
    if stopped_early is not None:
        values["stopped_early"] = stopped_early
    if decision is not None:
        values["decision"] = decision
    stmt = update(BATCH).where(BATCH.c.id == batch_id).values(**values)
    if only_from is not None:
        stmt = stmt.where(BATCH.c.status.in_(sorted(str(s) for s in only_from)))
    with engine.begin() as conn:
        return conn.execute(stmt).rowcount == 1


def cancel_batch(engine: Engine, batch_id: str) -> Batch:
    """Cancel a queued or running batch (a finished one is returned unchanged)."""
    full = resolve_batch_id(engine, batch_id)
    set_status(
        engine, full, BatchStatus.CANCELLED, only_from={BatchStatus.QUEUED, BatchStatus.RUNNING}
    )
    batch = get_batch(engine, full)
    assert batch is not None  # resolved above; batches are never deleted
    return batch


# --------------------------------------------------------------------------- progress


@dataclass(frozen=True)
class Progress:
    """How far a batch is, from its chunk rows.

    ``rate`` is matches per second of the current run (since the batch was last started, so a
    resumed batch is not measured from a start days ago); ``eta_seconds`` follows from it.
    ``chunks_total`` is exact for a fixed chunk size; when the runner sizes chunks it is an
    estimate: the chunks written plus the rest at their average size so far.
    """

    matches: int
    done: int
    failed: int
    chunks_written: int
    started_at: datetime | None
    rate: float | None
    eta_seconds: float | None
    status: str = ""
    chunks_total: int = 0

    @property
    def finished_matches(self) -> int:
        """Matches with a stored result, played or failed."""
        return self.done + self.failed


def _aware(moment: datetime | None) -> datetime | None:
    # SQLite hands back naive datetimes; everything stored is UTC.
    if moment is not None and moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment


def progress(engine: Engine, batch_id: str, *, now: datetime | None = None) -> Progress:
    """Done, failed, rate and ETA of a batch, summed over its chunk rows (``now``: the clock)."""
    with engine.connect() as conn:
        head = conn.execute(
            select(
                BATCH.c.matches,
                BATCH.c.started_at,
                BATCH.c.finished_at,
                BATCH.c.status,
                BATCH.c.chunk_size,
                BATCH.c.run_started_at,
                BATCH.c.run_start_finished,
            ).where(BATCH.c.id == batch_id)
        ).first()
        if head is None:
            raise NotFound(f"no batch {batch_id!r}")
        sums = conn.execute(
            select(
                func.coalesce(func.sum(CHUNK.c.done), 0),
                func.coalesce(func.sum(CHUNK.c.failed), 0),
                func.count(),
            ).where(CHUNK.c.batch_id == batch_id)
        ).one()
    matches, started, finished, status, chunk_size, run_started, run_base = head
    done, failed, written = int(sums[0]), int(sums[1]), int(sums[2])
    started, finished = _aware(started), _aware(finished)
    # Batches started before the run columns existed count from their first start.
    if run_started is not None:
        run_from, played = _aware(run_started), done + failed - (run_base or 0)
    else:
        run_from, played = started, done + failed
    rate: float | None = None
    eta: float | None = None
    if run_from is not None and played > 0:
        end = finished if finished is not None else (now or utcnow())
        elapsed = (end - run_from).total_seconds()
        if elapsed > 0:
            rate = played / elapsed
            remaining = matches - done - failed
            eta = 0.0 if status in BatchStatus.FINISHED else remaining / rate
    return Progress(
        matches=matches,
        done=done,
        failed=failed,
        chunks_written=written,
        started_at=started,
        rate=rate,
        eta_seconds=eta,
        status=status,
        chunks_total=_chunks_total(matches, chunk_size, written, done + failed),
    )


def _chunks_total(matches: int, chunk_size: int, written: int, finished: int) -> int:
    if chunk_size != AUTO_CHUNK_SIZE:
        return -(-matches // chunk_size)
    remaining = matches - finished
    if remaining <= 0:
        return written
    if not written or not finished:
        return written + 1
    return written + -(-remaining * written // finished)


def measured_work(engine: Engine, batch_id: str) -> tuple[int, float]:
    """Matches stored in the chunk rows of a batch and the seconds their chunks took to play."""
    with engine.connect() as conn:
        matches, seconds = conn.execute(
            select(
                func.coalesce(func.sum(CHUNK.c.done + CHUNK.c.failed), 0),
                func.coalesce(func.sum(CHUNK.c.duration), 0.0),
            ).where(CHUNK.c.batch_id == batch_id)
        ).one()
    return int(matches), float(seconds)


def chunk_ranges(matches: int, chunk_size: int) -> list[tuple[int, int]]:
    """The fixed chunking of a batch: [k*size, min((k+1)*size, matches)) for every k."""
    return [(s, min(s + chunk_size, matches)) for s in range(0, matches, chunk_size)]


class _Chunked(Protocol):
    id: str
    matches: int
    chunk_size: int


def written_ranges(engine: Engine, batch_id: str) -> list[tuple[int, int]]:
    """The ``[start, stop)`` ranges of a batch's chunk rows, in order."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(CHUNK.c.start, CHUNK.c.stop)
            .where(CHUNK.c.batch_id == batch_id)
            .order_by(CHUNK.c.start)
        )
        return [(int(a), int(b)) for a, b in rows]


def gaps(engine: Engine, batch: _Chunked) -> list[tuple[int, int]]:
    """The maximal ranges of match indices of ``batch`` that no chunk row covers, in order."""
    out: list[tuple[int, int]] = []
    position = 0
    for start, stop in written_ranges(engine, batch.id):
        if start > position:
            out.append((position, min(start, batch.matches)))
        position = max(position, stop)
    if position < batch.matches:
        out.append((position, batch.matches))
    return out


def split_aligned(start: int, stop: int, size: int) -> list[tuple[int, int]]:
    """``[start, stop)`` cut at the multiples of ``size``: pieces of the fixed chunking."""
    pieces = []
    while start < stop:
        end = min(stop, (start // size + 1) * size)
        pieces.append((start, end))
        start = end
    return pieces


def missing_chunks(engine: Engine, batch: _Chunked) -> list[tuple[int, int]]:
    """The missing match ranges of ``batch``, in order: with a fixed chunk size, the chunks of
    the fixed chunking that have no row yet; otherwise the gaps, whole (the runner cuts them)."""
    found = gaps(engine, batch)
    if batch.chunk_size == AUTO_CHUNK_SIZE:
        return found
    return [piece for a, b in found for piece in split_aligned(a, b, batch.chunk_size)]


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


def clear_stopped_early(engine: Engine, batch_id: str) -> bool:
    """Unmark ``stopped_early`` (every match got played after all); True if it was set."""
    stmt = (
        update(BATCH)
        .where(BATCH.c.id == batch_id, BATCH.c.stopped_early.is_(True))
        .values(stopped_early=False)
    )
    with engine.begin() as conn:
        return conn.execute(stmt).rowcount == 1


def chunk_exists(engine: Engine, batch_id: str, start: int) -> bool:
    """True when the chunk starting at ``start`` has been written."""
    with engine.connect() as conn:
        row = conn.execute(
            select(CHUNK.c.start).where(CHUNK.c.batch_id == batch_id, CHUNK.c.start == start)
        ).first()
    return row is not None


def _overlapping_stop(
    conn: Connection, batch_id: str, start: int, stop: int, *, besides: int | None = None
) -> bool:
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
        return _overlapping_stop(conn, batch_id, start, stop)


def first_error(engine: Engine, batch_id: str) -> str | None:
    """The error text of the lowest-index failed match, if any failed."""
    with engine.connect() as conn:
        return conn.execute(
            select(MATCH.c.error)
            .where(MATCH.c.batch_id == batch_id, MATCH.c.ok.is_(False))
            .order_by(MATCH.c.match_index)
            .limit(1)
        ).scalar()


# --------------------------------------------------------------------------- writes


def _insert_ignore(engine: Engine, table: Table, keys: Sequence[str]) -> Insert:
    """``INSERT ... ON CONFLICT (keys) DO NOTHING`` in the engine's dialect."""
    if engine.dialect.name == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing(index_elements=list(keys))
    if engine.dialect.name == "sqlite":
        return sqlite.insert(table).on_conflict_do_nothing(index_elements=list(keys))
    raise NotImplementedError(f"unsupported database dialect {engine.dialect.name!r}")


def match_rows(batch_id: str, records: Iterable[MatchRecord]) -> tuple[list[tuple], list[tuple]]:
    """Row tuples for the match and seat_result tables, in ``MATCH_COLUMNS`` / ``SEAT_COLUMNS``
    order, with stats already serialised to JSON text (what ``write_chunk`` stores)."""
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
                " ".join(r.moves),
                dumps(r.stats),
                r.error,
            )
        )
        seats.extend((batch_id, index, *seat) for seat in r.seats)
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


def _bulk_insert(conn: Connection, matches: list[tuple], seats: list[tuple]) -> None:
    """Insert result rows, ignoring any already there, as fast as the driver allows.

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
            with cursor.copy(f"COPY match ({', '.join(MATCH_COLUMNS)}) FROM STDIN") as copy:
                for row in matches:
                    copy.write_row(row)
            with cursor.copy(f"COPY seat_result ({', '.join(SEAT_COLUMNS)}) FROM STDIN") as copy:
                for row in seats:
                    copy.write_row(row)
    except Exception as exc:
        if not _is_unique_violation(exc):
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

    The chunk row goes first: its primary key is the idempotency guard, so a chunk delivered
    twice writes nothing the second time (a concurrent second delivery waits on the first's
    row lock, then finds it). A range that overlaps another chunk row is refused too, so the
    rows of a batch never overlap and their done/failed counts add up to the matches stored.
    Writes of one batch take turns for that check (on PostgreSQL a lock on the batch row; on
    SQLite the insert takes the database's write lock). Matches and seats also ignore
    conflicts, so no index is ever stored twice.
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
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(
                    select(BATCH.c.id).where(BATCH.c.id == batch_id).with_for_update(key_share=True)
                )
            claim = _insert_ignore(engine, CHUNK, ("batch_id", "start")).returning(CHUNK.c.start)
            if conn.execute(claim, chunk).first() is None:
                return False  # already written by an earlier delivery of this chunk
            if _overlapping_stop(conn, batch_id, start, stop, besides=start):
                raise _OverlapError
            _bulk_insert(conn, matches, seats)
    except _OverlapError:
        return False  # part of the range is already stored by another chunk: rolled back
    return True


class _OverlapError(Exception):
    """Raised inside ``write_chunk``'s transaction to roll it back."""
