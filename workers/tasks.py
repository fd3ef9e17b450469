"""Celery tasks: thin shells around the chunk function that local mode runs too.

A task decodes ids and calls ``workers.delivery.deliver_chunk``, which runs
``workers.chunks.run_chunk`` and queues the next chunk. Errors fall in two kinds: transient
ones (database or broker unreachable) are retried with capped exponential backoff and jitter;
bad input (an unknown game, an illegal action, a missing batch) is recorded and never retried,
since running it again would fail the same way.

A task is where a worker process's settings come in: it reads them (``get_settings()``, the
environment's) and passes them down.

Chunk tasks run under a soft time limit below the hard one (``TASK_SOFT_TIME_LIMIT``,
``TASK_TIME_LIMIT``): the soft one stops the match being played, and the chunk stores what it
finished and the rest as failed (``workers.play``).
"""

from __future__ import annotations

import logging
import random
from typing import Any

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded

from engines.core import GameError
from storage.crud import NotFound
from storage.models import BatchStatus
from storage.settings import Settings, get_settings
from workers.celery_app import app
from workers.outages import TRANSIENT_ERRORS

log = logging.getLogger(__name__)

__all__ = ["TRANSIENT_ERRORS", "backoff", "play_chunk_task", "start_batch"]

MAX_RETRIES = 40
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0


def backoff(retries: int, *, base: float = BACKOFF_BASE, cap: float = BACKOFF_CAP) -> float:
    """Seconds before retry number ``retries + 1``: doubling, capped, half of it random.

    The random half spreads the retries of many workers that lost the same database at the
    same moment, so they do not all knock at once when it comes back.
    """
    ceiling = min(cap, base * 2 ** min(retries, 30))
    return ceiling / 2 + random.uniform(0, ceiling / 2)


def _fail_batch(batch_id: str, exc: BaseException, settings: Settings) -> None:
    from storage.crud import set_status
    from storage.db import get_engine

    message = f"{type(exc).__name__}: {exc}"
    set_status(
        get_engine(settings.database_url),
        batch_id,
        BatchStatus.FAILED,
        error=message,
        only_from={BatchStatus.QUEUED, BatchStatus.RUNNING},
    )


# Registered as "playtester.play_chunk": queued messages name the task by that, so it stays.
@app.task(bind=True, name="playtester.play_chunk", max_retries=MAX_RETRIES)
def play_chunk_task(self: Task, batch_id: str, start: int, stop: int) -> dict[str, Any]:
    """Play matches ``[start, stop)`` of a batch, store them, and queue the next chunk (the
    task around ``workers.delivery.deliver_chunk``; ``workers.play.play_chunk`` plays them)."""
    from workers.delivery import deliver_chunk

    where = {"batch_id": batch_id, "start": start, "stop": stop}
    settings = get_settings()
    try:
        delivery = deliver_chunk(
            batch_id, start, stop, settings=settings, worker=self.request.hostname
        )
    except GameError as exc:
        log.error("batch %s chunk %d-%d: bad input, not retried: %s", batch_id, start, stop, exc)
        _fail_batch(batch_id, exc, settings)
        return {**where, "error": str(exc)}
    except NotFound as exc:
        log.error("batch %s chunk %d-%d: %s", batch_id, start, stop, exc)
        return {**where, "error": str(exc)}
    except SoftTimeLimitExceeded:
        # Raised outside a match (before playing, or between the stored chunk and queueing the
        # next one): the attempt stays counted and the sweep queues whatever is missing.
        log.error("batch %s chunk %d-%d: soft time limit outside a match", batch_id, start, stop)
        return {**where, "error": "soft time limit"}
    except TRANSIENT_ERRORS as exc:
        log.warning("batch %s chunk %d-%d: %s; retrying", batch_id, start, stop, exc)
        raise self.retry(exc=exc, countdown=backoff(self.request.retries)) from exc
    outcome = delivery.outcome
    if delivery.deferred:
        waiting = ", ".join(map(str, delivery.deferred))
        log.debug("batch %s chunk %d-%d waits for %s", batch_id, start, stop, waiting)
        return {**where, "deferred": [str(need) for need in delivery.deferred]}
    if outcome is None:
        return {**where, "skipped": True, "reason": "another delivery holds the chunk"}
    return {
        **where,
        "attempt": delivery.attempt,
        "done": outcome.done,
        "failed": outcome.failed,
        "skipped": outcome.skipped,
        "status": outcome.batch_status,
    }


@app.task(bind=True, name="playtester.start_batch", max_retries=MAX_RETRIES)
def start_batch(self: Task, batch_id: str) -> list[int]:
    """Queue the first chunks of a stored batch; return where they start."""
    from storage.crud import get_batch
    from storage.db import get_engine
    from workers import dispatch

    settings = get_settings()
    engine = get_engine(settings.database_url)
    try:
        batch = get_batch(engine, batch_id)
        if batch is None:
            log.error("start_batch: no batch %s", batch_id)
            return []
        if batch.status in BatchStatus.FINISHED:
            return []
        return [start for start, _stop in dispatch.open_batch(engine, batch, settings)]
    except TRANSIENT_ERRORS as exc:
        raise self.retry(exc=exc, countdown=backoff(self.request.retries)) from exc
