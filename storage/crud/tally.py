"""How far a batch is: done, failed, rate and ETA, summed over its chunk rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, func, select

from storage.chunking import chunks_total
from storage.crud.ids import NotFound
from storage.models import BATCH, CHUNK, BatchStatus, utcnow


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


def aware(moment: datetime | None) -> datetime | None:
    """``moment`` with its UTC zone: SQLite hands back naive datetimes; everything stored is
    UTC."""
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
    started, finished = aware(started), aware(finished)
    # Batches started before the run columns existed count from their first start.
    if run_started is not None:
        run_from, played = aware(run_started), done + failed - (run_base or 0)
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
        chunks_total=chunks_total(matches, chunk_size, written, done + failed),
    )


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
