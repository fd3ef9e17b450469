"""Deleting a batch: every row it owns, in one transaction."""

from __future__ import annotations

from sqlalchemy import Engine, Table, delete, select
from sqlmodel import SQLModel

from storage.crud.ids import NotFound
from storage.models import BATCH, BatchStatus

LIVE = (BatchStatus.QUEUED, BatchStatus.RUNNING)


class BatchIsLive(ValueError):  # noqa: N818 - the name the API and CLI speak of
    """A queued or running batch cannot be deleted: workers may be writing its chunks."""


def owned_tables() -> list[Table]:
    """Every table whose rows belong to one batch (a ``batch_id`` column): chunks, matches,
    seats, the outbox, idempotency keys, and any such table added later."""
    return [t for t in SQLModel.metadata.sorted_tables if t is not BATCH and "batch_id" in t.c]


def delete_batch(engine: Engine, batch_id: str) -> str:
    """Delete the batch with exactly this id (no prefix: nothing is deleted on a guess) with
    every row it owns (``owned_tables``), in one transaction; return the status it had.

    ``NotFound`` when there is no such batch; ``BatchIsLive`` when it is queued or running
    (cancel it first: a worker playing a chunk would otherwise write rows of a batch that is
    gone). The batch row goes last, and only if it is still not queued or running: a batch
    started meanwhile rolls the whole deletion back.
    """
    with engine.begin() as conn:
        status = conn.execute(select(BATCH.c.status).where(BATCH.c.id == batch_id)).scalar()
        if status is None:
            raise NotFound(f"no batch {batch_id!r}; `playtester batches` lists them")
        if status in LIVE:
            raise BatchIsLive(f"batch {batch_id!r} is {status}: cancel it first, then delete it")
        for table in owned_tables():
            conn.execute(delete(table).where(table.c.batch_id == batch_id))
        gone = conn.execute(
            delete(BATCH).where(BATCH.c.id == batch_id, BATCH.c.status.not_in(LIVE))
        ).rowcount
        if gone != 1:  # raising rolls back every delete above
            raise BatchIsLive(f"batch {batch_id!r} was started meanwhile: cancel it first")
    return str(status)
