"""Batch rows: store a plan, read batches by full id (or by what a person typed), list them,
move their status."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import Engine, case, func, select, update

from storage.crud.ids import NotFound, resolve_batch_id
from storage.db import session
from storage.models import BATCH, CHUNK, MATCH, Batch, BatchPlan, BatchStatus, utcnow
from storage.soundness import check_batch
from storage.usertext import matches_nothing


def create_batch(engine: Engine, *, plan: BatchPlan) -> Batch:
    """Store a validated plan as a new queued batch and return it."""
    batch = Batch(**plan.model_dump(), status=BatchStatus.QUEUED)
    with session(engine) as s:
        s.add(batch)
        s.commit()
        s.refresh(batch)
    return batch


def get_batch(engine: Engine, batch_id: str) -> Batch | None:
    """The batch with exactly this id, else ``None``.

    A prefix finds nothing here: the edges turn what a person typed into a full id first
    (``resolve_batch_id``), so the worker path can never pick a batch by a partial match.
    """
    with session(engine) as s:
        return s.get(Batch, batch_id)


def find_batch(engine: Engine, text: str) -> Batch:
    """The batch a person named: ``text`` is a full id or a unique prefix of one (see
    ``resolve_batch_id``). Raises ``NotFound``, saying why, when no batch answers to it, and
    ``UnsoundBatch`` when its stored row cannot be read (``storage.soundness``).

    The faces call this (a route's 404, the command line's ``error:`` line); the worker path,
    which has full ids, calls ``get_batch``.
    """
    full = resolve_batch_id(engine, text)
    batch = get_batch(engine, full)
    if batch is None:  # pragma: no cover - resolved just above, deleted since
        raise NotFound(f"no batch {full!r}")
    return check_batch(batch)


def list_batches(
    engine: Engine,
    *,
    game: str | None = None,
    status: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[Batch]:
    """Batches, newest first, optionally of one game or in one status."""
    if matches_nothing(game, status):
        return []
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
    set_status(
        engine, batch_id, BatchStatus.CANCELLED, only_from={BatchStatus.QUEUED, BatchStatus.RUNNING}
    )
    batch = get_batch(engine, batch_id)
    if batch is None:
        raise NotFound(f"no batch {batch_id!r}")
    return batch


def clear_stopped_early(engine: Engine, batch_id: str) -> bool:
    """Unmark ``stopped_early`` (every match got played after all); True if it was set."""
    stmt = (
        update(BATCH)
        .where(BATCH.c.id == batch_id, BATCH.c.stopped_early.is_(True))
        .values(stopped_early=False)
    )
    with engine.begin() as conn:
        return conn.execute(stmt).rowcount == 1


def first_error(engine: Engine, batch_id: str) -> str | None:
    """The error text of the lowest-index failed match, if any failed."""
    with engine.connect() as conn:
        return conn.execute(
            select(MATCH.c.error)
            .where(MATCH.c.batch_id == batch_id, MATCH.c.ok.is_(False))
            .order_by(MATCH.c.match_index)
            .limit(1)
        ).scalar()
