"""One delivery of a chunk task in distributed mode: lease, play and store, queue the next.

The Celery task is a shell around ``deliver_chunk``; this is where a delivery decides whether to
play: not before this host has compiled what the chunk's agents call (``workers.warmup``: the
chunk is deferred meanwhile), and not while another delivery holds it (``workers.attempts``).
It gives up on a chunk no worker could finish, and keeps the batch's pipeline going
(``workers.dispatch``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from engines.compiled.warm import Need
from engines.core import Ending
from storage.crud import get_batch
from storage.db import get_engine
from storage.models import BatchStatus
from storage.settings import Settings
from workers import attempts, dispatch, warmup
from workers.chunks import ChunkOutcome, default_worker_name, run_chunk
from workers.outages import TRANSIENT_ERRORS
from workers.sizing import chunk_time_limits

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Delivery:
    """What one delivery did: ``outcome`` None when another delivery held the chunk's lease,
    or when the chunk was deferred until this host has compiled ``deferred``."""

    attempt: int
    outcome: ChunkOutcome | None
    deferred: tuple[Need, ...] = ()


def give_up_reason(start: int, stop: int, failed_attempts: int) -> str:
    """The error stored with the matches of a chunk given up."""
    return (
        f"abandoned: chunk [{start}, {stop}) was delivered {failed_attempts} times without a "
        f"result (its worker was killed each time, e.g. at the hard time limit TASK_TIME_LIMIT; "
        f"MAX_CHUNK_ATTEMPTS)"
    )


def _advance(outcome: ChunkOutcome, settings: Settings) -> None:
    if outcome.batch_status in BatchStatus.FINISHED:
        return
    batch = get_batch(get_engine(settings.database_url), outcome.batch_id)
    if batch is not None:
        # Named by process, not by Celery node: a node's pool children each play a chunk.
        dispatch.advance(batch, outcome, settings, worker=default_worker_name())


def deliver_chunk(
    batch_id: str, start: int, stop: int, *, settings: Settings, worker: str | None = None
) -> Delivery:
    """Play and store matches ``[start, stop)`` unless another delivery is at it, then queue
    the next chunk. Past ``max_chunk_attempts`` attempts the range is stored as failed unplayed.

    A chunk whose agents call a compiled search this host has not compiled yet is queued again
    ``warmup.DEFER_SECONDS`` later instead, neither counted as a delivery nor as an attempt;
    one whose search failed to compile here is stored as failed with that error.

    Raises what ``run_chunk`` raises; an attempt ending on one of ``TRANSIENT_ERRORS`` is not
    counted.
    """
    where = (batch_id, start, stop)
    batch = get_batch(get_engine(settings.database_url), batch_id)
    ready = warmup.Readiness() if batch is None else warmup.readiness(batch)
    if batch is not None and ready.pending and batch.status not in BatchStatus.FINISHED:
        limits = chunk_time_limits(batch, stop - start, settings)
        dispatch.defer(batch, start, stop, settings, limits, warmup.DEFER_SECONDS)
        return Delivery(attempt=0, outcome=None, deferred=ready.pending)
    delivered = dispatch.count_delivery(batch_id, start, settings)
    if delivered > 1:
        # A retry after an outage, the sweep queueing the chunk again, or the broker handing
        # back an unacknowledged message: the log says which came before.
        log.warning("batch %s chunk %d-%d delivered again (delivery %d)", *where, delivered)
    lease = attempts.acquire(
        dispatch.broker(settings), batch_id, start, settings.chunk_lease_seconds
    )
    if lease is None:
        log.info("batch %s chunk %d-%d held by another delivery: skipped", *where)
        return Delivery(attempt=0, outcome=None)
    # Which worker holds which chunk, and how often it was taken: what an operator (or a
    # test killing a worker mid-chunk) reads from the worker's log.
    log.info("batch %s chunk %d-%d taken, attempt %d", *where, lease.attempt)
    try:
        dispatch.taken(batch_id, start, settings)
        dispatch.active_workers(batch_id, default_worker_name(), settings)
        give_up, ending = None, Ending.ABANDONED
        if lease.attempt > settings.max_chunk_attempts:
            give_up = give_up_reason(start, stop, lease.attempt - 1)
        elif ready.failure is not None:
            give_up, ending = f"{ready.failure} (on {default_worker_name()})", Ending.ERROR
        outcome = run_chunk(
            batch_id,
            start,
            stop,
            database_url=settings.database_url,
            worker=worker,
            give_up=give_up,
            give_up_as=ending,
            then=lambda done: _advance(done, settings),
        )
        if outcome.written:
            dispatch.forget_range(batch_id, start, settings)
        if outcome.skipped:
            # Written by an earlier delivery that may have died before queueing the next one.
            _advance(outcome, settings)
        return Delivery(attempt=lease.attempt, outcome=outcome)
    except TRANSIENT_ERRORS:
        lease.uncount()
        raise
    finally:
        lease.release()
