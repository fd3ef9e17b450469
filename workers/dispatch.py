"""Progressive enqueue: a batch of any size is queued a few chunks at a time.

Submitting a batch sends one control task (``playtester.start_batch``), so accepting a
million-match batch costs the same as a ten-match one. That task queues the first
``max_chunks_in_flight`` chunks. Each chunk task, once its results are committed, queues the
next chunk not queued yet, so about that many chunks of a batch are in flight at any time.

Which chunk comes next is a per-batch cursor in Redis, advanced with ``INCRBY``: atomic, so two
workers never take the same chunk number, and cheap. Chunk ``k`` covers match indices
``[k * chunk_size, min((k + 1) * chunk_size, matches))``, the same fixed chunking local mode uses.

Chunks can be lost for good (a worker killed with its message unacknowledged until the broker's
visibility timeout, a broker restarted without its data, retries exhausted while the database
was down). A sweep, run by the one sweeper (``workers.sweeper``) for every unfinished batch,
notices a batch that wrote no chunk for ``stall_seconds`` and queues its missing chunks again.
A chunk queued twice is harmless: the second run finds the chunk row and skips, because every
write is idempotent.

Functions that send take an optional ``settings``: the API's sweeper and dispatcher pass their
app's, workers use the environment's.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING

import redis
import sqlalchemy as sa
from sqlalchemy import Engine

from storage.models import Batch, BatchStatus, Chunk
from storage.settings import Settings, get_settings

if TYPE_CHECKING:
    from celery import Celery

KEY_PREFIX = "playtester:batch:"
KEY_TTL = 30 * 24 * 3600
"""Cursor keys outlive any sensible batch, then vanish instead of piling up in Redis."""


@lru_cache(maxsize=8)
def redis_client(url: str) -> redis.Redis:
    """A Redis client for the broker URL (one connection pool per URL and process)."""
    return redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)


def _broker(settings: Settings | None = None) -> redis.Redis:
    url = (settings or get_settings()).broker_url
    if not url:
        raise RuntimeError("distributed mode needs BROKER_URL (redis://host:6379/0)")
    return redis_client(url)


_senders: dict[str, Celery] = {}


def celery_for(settings: Settings | None = None) -> Celery:
    """The Celery app that sends to ``settings``' broker (the environment's app by default)."""
    from workers.celery_app import app, make_celery

    if settings is None or settings.broker_url == get_settings().broker_url:
        return app
    url = settings.broker_url or ""
    if url not in _senders:
        _senders[url] = make_celery(settings)
    return _senders[url]


def cursor_key(batch_id: str) -> str:
    return f"{KEY_PREFIX}{batch_id}:next"


def sweep_key(batch_id: str) -> str:
    return f"{KEY_PREFIX}{batch_id}:sweep"


def chunk_count(batch: Batch) -> int:
    """How many chunks the batch's fixed chunking has."""
    return math.ceil(batch.matches / batch.chunk_size)


def chunk_bounds(batch: Batch, k: int) -> tuple[int, int]:
    """Match index range ``[start, stop)`` of chunk ``k``."""
    start = k * batch.chunk_size
    return start, min(start + batch.chunk_size, batch.matches)


def send_chunk(batch_id: str, start: int, stop: int, settings: Settings | None = None) -> None:
    """Queue one chunk task (by name, so callers need not import the task module)."""
    celery_for(settings).send_task("playtester.play_chunk", args=[batch_id, start, stop])


def start(batch_id: str, settings: Settings | None = None, *, retry: bool = True) -> None:
    """Hand a stored batch to the workers: one small message, whatever its size.

    ``retry=False`` fails at once when the broker is down (the caller keeps the start request
    in the outbox for the sweeper) instead of retrying the connection.
    """
    celery_for(settings).send_task("playtester.start_batch", args=[batch_id], retry=retry)


def open_batch(batch: Batch, settings: Settings | None = None) -> list[int]:
    """Queue the first chunks of a batch, once: a second delivery of the start task is a no-op."""
    settings = settings or get_settings()
    client = _broker(settings)
    if not client.set(cursor_key(batch.id), 0, nx=True, ex=KEY_TTL):
        return []
    return fill(batch, settings.max_chunks_in_flight, settings)


def fill(batch: Batch, count: int, settings: Settings | None = None) -> list[int]:
    """Reserve the next ``count`` chunk numbers of the cursor and queue those that exist."""
    if count <= 0:
        return []
    client = _broker(settings)
    key = cursor_key(batch.id)
    end = int(client.incrby(key, count))
    client.expire(key, KEY_TTL)
    chunks = [k for k in range(end - count, end) if k < chunk_count(batch)]
    for k in chunks:
        send_chunk(batch.id, *chunk_bounds(batch, k), settings)
    return chunks


def advance(batch: Batch) -> list[int]:
    """After a chunk: queue the next one, keeping the number in flight steady."""
    if batch.status in BatchStatus.FINISHED:
        return []
    return fill(batch, 1)


def last_activity(engine: Engine, batch: Batch) -> datetime:
    """When the batch last showed life: creation, start, or its latest chunk write."""
    with engine.connect() as conn:
        latest = conn.execute(
            sa.select(sa.func.max(Chunk.finished_at)).where(Chunk.batch_id == batch.id)  # type: ignore[arg-type]
        ).scalar()
    moments = [m for m in (batch.created_at, batch.started_at, latest) if m is not None]
    return max(_aware(m) for m in moments)


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive datetimes; every timestamp here is written in UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def sweep(
    engine: Engine, batch: Batch, *, settings: Settings | None = None, now: datetime | None = None
) -> list[int]:
    """Queue again the chunks of a stalled batch; return the chunk numbers queued.

    A batch is stalled when it is unfinished and wrote no chunk for ``stall_seconds``. Only
    chunks already handed out by the cursor are queued again (at most ``max_chunks_in_flight``);
    if none is missing there, the cursor moves on instead. A Redis key with that lifetime makes
    sure one sweep per stall period happens, however many API processes run it.
    """
    from storage.crud import missing_chunks

    settings = settings or get_settings()
    if batch.status in BatchStatus.FINISHED:
        return []
    now = now or datetime.now(UTC)
    if (now - last_activity(engine, batch)).total_seconds() < settings.stall_seconds:
        return []
    client = _broker(settings)
    if not client.set(
        sweep_key(batch.id), int(time.time()), nx=True, ex=max(1, math.ceil(settings.stall_seconds))
    ):
        return []
    raw = client.get(cursor_key(batch.id))
    if raw is None:
        # The start task or the cursor was lost (e.g. Redis restarted empty): begin again;
        # chunks already written are skipped in a moment.
        return open_batch(batch, settings)
    missing = missing_chunks(engine, batch)
    if not missing:
        # Every chunk is written but completion was never recorded (its worker died between
        # the write and the check): record it now, still exactly once.
        from workers.lifecycle import after_chunk

        after_chunk(engine, batch.id)
        return []
    handed_out = min(int(raw), chunk_count(batch))
    lost = [
        start // batch.chunk_size
        for start, _stop in missing
        if start // batch.chunk_size < handed_out
    ][: settings.max_chunks_in_flight]
    for k in lost:
        send_chunk(batch.id, *chunk_bounds(batch, k), settings)
    if lost:
        return lost
    return fill(batch, settings.max_chunks_in_flight, settings)
