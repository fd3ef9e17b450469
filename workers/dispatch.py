"""Progressive enqueue: a batch of any size is queued a few chunks at a time.

Submitting a batch sends one control task (``playtester.start_batch``), so accepting a
million-match batch costs the same as a ten-match one. That task hands out the first chunks.
Each chunk task, once its results are committed, hands out the next one, so about
``max_chunks_in_flight`` chunks of a batch are in flight at any time. Chunk tasks go to the
queue of the batch's game (``workers.game_queues``), which only workers that have the game
consume.

What comes next is a per-batch cursor of match indices in Redis, advanced with ``INCRBY`` by the
size of the chunk handed out: atomic, so two workers never get overlapping ranges, and cheap.
Every range handed out is also remembered (a hash ``start -> stop``) until it is written, so a
lost chunk is queued again exactly as it was.

Chunk sizes: a batch with a fixed ``chunk_size`` is cut ``[k * size, (k + 1) * size)``, the
same fixed chunking local mode uses. Otherwise the first chunk is the smallest one (one match,
or a seat-swapped pair under a stop rule) and goes alone; once it is written it has measured
the batch, and ``max_chunks_in_flight`` chunks sized from it follow; from then on every chunk
written adds its matches and seconds to the batch's totals in Redis and sizes the chunk it
queues from them (``workers.sizing``). The latest size is kept for the sweep; should Redis lose
it, it is measured again from the chunk rows.

Chunks can be lost for good (a worker killed with its message unacknowledged until the broker's
visibility timeout, a task killed at the hard time limit, a broker restarted without its data,
retries exhausted while the database was down). A sweep, run by the one sweeper
(``workers.sweeper``) for every unfinished batch, looks at a batch that wrote no chunk for
``stall_seconds`` and queues again the missing ranges below the cursor that are stalled
(``stalled``): a range a worker took (its delivery counted an attempt) whose lease is free
again, so no worker plays it any more. A range still waiting in the queue behind other work
is not stalled, however long it waits: it counts as lost only when its game's chunk queue has
stood empty without any worker taking it for a lease's length (its message is gone); chunks
waiting for a worker that has their game keep that queue from standing empty. A range queued twice
is harmless: the second run finds it written and skips, because every write is idempotent and
chunk rows never overlap; but at a hundred workers a backlog re-queued every period would be
a storm, so each delivery is counted (``deliveries_key``) to show that it does not happen.

Every function that reaches the broker takes the ``settings`` it works with: the API's sweeper
and dispatcher pass their app's, a Celery task its worker's (``workers.tasks``).
"""

from __future__ import annotations

import math
import time
from bisect import bisect_right
from collections.abc import Container, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import redis
from kombu import Queue
from sqlalchemy import Engine

from storage import chunking, crud
from storage.chunking import Range
from storage.crud.tally import aware
from storage.models import Batch, BatchStatus
from storage.settings import Settings
from workers.broker import broker
from workers.broker import redis_client as redis_client  # where callers have found it
from workers.chunks import ChunkOutcome
from workers.game_queues import CHUNK_QUEUE, chunk_queue, declared_queues
from workers.sizing import active_window, chunk_time_limits, next_chunk_size

if TYPE_CHECKING:
    from celery import Celery

KEY_PREFIX = "playtester:batch:"
KEY_TTL = 30 * 24 * 3600
"""Per-batch keys outlive any sensible batch, then vanish instead of piling up in Redis."""


def cursor_key(batch_id: str) -> str:
    """Next match index not handed out yet."""
    return f"{KEY_PREFIX}{batch_id}:next"


def ranges_key(batch_id: str) -> str:
    """Ranges handed out and not known to be written: ``start -> stop``."""
    return f"{KEY_PREFIX}{batch_id}:ranges"


def size_key(batch_id: str) -> str:
    """The latest measured chunk size of a batch without a fixed one."""
    return f"{KEY_PREFIX}{batch_id}:size"


def measure_key(batch_id: str) -> str:
    """Matches played so far and the seconds they took: ``matches``, ``seconds``."""
    return f"{KEY_PREFIX}{batch_id}:measure"


def measured_key(batch_id: str) -> str:
    """Set by the first chunk written: the batch is measured and its pipeline filled."""
    return f"{KEY_PREFIX}{batch_id}:measured"


def sweep_key(batch_id: str) -> str:
    return f"{KEY_PREFIX}{batch_id}:sweep"


def lease_key(batch_id: str, start: int) -> str:
    """Held while a delivery plays the chunk starting at ``start`` (``workers.attempts``)."""
    return f"{KEY_PREFIX}{batch_id}:lease:{start}"


def deferred_key(batch_id: str, start: int) -> str:
    """Set while the chunk starting at ``start`` waits for a worker to compile what it needs
    (``defer``)."""
    return f"{KEY_PREFIX}{batch_id}:deferred:{start}"


def attempts_key(batch_id: str) -> str:
    """Attempts per chunk of a batch: ``start -> count``; a chunk with one was taken."""
    return f"{KEY_PREFIX}{batch_id}:attempts"


def deliveries_key(batch_id: str) -> str:
    """Deliveries per chunk of a batch: ``start -> count``; above 1, the chunk came twice."""
    return f"{KEY_PREFIX}{batch_id}:deliveries"


def workers_key(batch_id: str) -> str:
    """Workers that took or wrote a chunk of the batch, scored by when (the broker's clock)."""
    return f"{KEY_PREFIX}{batch_id}:workers"


def requeued_key(batch_id: str) -> str:
    """Ranges the sweep queued again: ``start -> attempts counted then``; taken again once a
    delivery counts one more."""
    return f"{KEY_PREFIX}{batch_id}:requeued"


def idle_key(batch_id: str) -> str:
    """Ranges the last sweep found untaken while the chunk queue stood empty: ``start ->``
    when the sweeps first found it so, in seconds since the epoch."""
    return f"{KEY_PREFIX}{batch_id}:idle-since"


_senders: dict[str, Celery] = {}


def celery_for(settings: Settings) -> Celery:
    """A Celery app that sends to ``settings``' broker: the process's own when it is the same
    broker (a worker queueing its next chunk), else one per broker URL and process."""
    from workers.celery_app import app, make_celery

    url = settings.broker_url or ""
    if url == app.conf.broker_url:
        return app
    if url not in _senders:
        _senders[url] = make_celery(settings)
    return _senders[url]


def send_chunk(
    batch: Batch,
    start: int,
    stop: int,
    settings: Settings,
    limits: tuple[float, float] | None = None,
    countdown: float = 0.0,
) -> None:
    """Queue one chunk task on its game's queue (``workers.game_queues``; by the task's name,
    so callers need not import the task module), under the worker's time limits or, given
    ``limits``, under these (soft, hard) seconds; ``countdown`` seconds from now when given."""
    extra: dict[str, float] = {}
    if limits is not None:
        extra = {"soft_time_limit": limits[0], "time_limit": limits[1]}
    if countdown:
        extra["countdown"] = countdown
    celery = celery_for(settings)
    name = chunk_queue(batch.game)
    queues = celery.amqp.queues
    # A game installed after this process started has no queue declared here yet.
    queue = queues[name] if name in queues else queues.add(Queue(name))
    celery.send_task("playtester.play_chunk", args=[batch.id, start, stop], queue=queue, **extra)


def defer(
    batch: Batch,
    start: int,
    stop: int,
    settings: Settings,
    limits: tuple[float, float] | None,
    seconds: float,
) -> None:
    """Queue a chunk again ``seconds`` from now, under the same ``limits``: the worker that had
    it has not compiled what it needs yet (``workers.warmup``). Until the chunk is taken, the
    sweep counts it as being played, not lost: while it waits as a message held for later, the
    chunk queue may stand empty without it."""
    hold = max(2 * settings.stall_seconds, 10 * seconds)
    broker(settings).set(deferred_key(batch.id, start), 1, ex=math.ceil(hold))
    send_chunk(batch, start, stop, settings, limits, countdown=seconds)


def taken(batch_id: str, start: int, settings: Settings) -> None:
    """A delivery took the chunk starting at ``start``: it waits no more (``defer``)."""
    broker(settings).delete(deferred_key(batch_id, start))


def start(batch_id: str, settings: Settings, *, retry: bool = True) -> None:
    """Hand a stored batch to the workers: one small message, whatever its size.

    ``retry=False`` fails at once when the broker is down (the caller keeps the start request
    in the outbox for the sweeper) instead of retrying the connection.
    """
    celery_for(settings).send_task("playtester.start_batch", args=[batch_id], retry=retry)


def is_fixed(batch: Batch) -> bool:
    return chunking.is_fixed(batch.chunk_size)


def current_size(batch: Batch, engine: Engine | None, settings: Settings) -> int:
    """The size chunks of the batch are handed out at now.

    Without a size in Redis (the first chunk is not written yet, or Redis restarted empty)
    it is measured from the chunk rows when ``engine`` is given, else the smallest chunk.
    """
    if is_fixed(batch):
        return batch.chunk_size
    client = broker(settings)
    raw = client.get(size_key(batch.id))
    if raw is not None:
        return int(raw)
    matches, seconds = crud.measured_work(engine, batch.id) if engine is not None else (0, 0.0)
    size = next_chunk_size(batch, matches=matches, seconds=seconds, settings=settings)
    if matches:
        client.set(size_key(batch.id), size, ex=KEY_TTL)
    return size


def fill(batch: Batch, count: int, size: int, settings: Settings) -> list[Range]:
    """Hand out the next ``count`` chunks of ``size`` matches from the cursor and queue them."""
    if count <= 0 or size <= 0:
        return []
    client = broker(settings)
    key = cursor_key(batch.id)
    end = int(client.incrby(key, count * size))
    client.expire(key, KEY_TTL)
    begin = end - count * size
    ranges = chunking.cut(begin, min(end, batch.matches), size)
    _queue(client, batch, ranges, settings)
    return ranges


def _queue(client: redis.Redis, batch: Batch, ranges: list[Range], settings: Settings) -> None:
    if not ranges:
        return
    client.hset(ranges_key(batch.id), mapping={str(a): b for a, b in ranges})
    client.expire(ranges_key(batch.id), KEY_TTL)
    for a, b in ranges:
        send_chunk(batch, a, b, settings, chunk_time_limits(batch, b - a, settings))


def forget_range(batch_id: str, start: int, settings: Settings) -> None:
    """A range is written: the sweep need not remember it."""
    broker(settings).hdel(ranges_key(batch_id), str(start))


def open_batch(engine: Engine, batch: Batch, settings: Settings) -> list[Range]:
    """Queue the first chunks of a batch, once: a second delivery of the start task is a no-op.

    A batch that already has chunk rows (its cursor was lost: Redis restarted empty) resumes
    after its last written chunk, and the gaps before that are queued again.
    """
    client = broker(settings)
    resume_at = max((b for _a, b in crud.written_ranges(engine, batch.id)), default=0)
    if not client.set(cursor_key(batch.id), resume_at, nx=True, ex=KEY_TTL):
        return []
    lost = requeue_lost(engine, batch, cursor=resume_at, settings=settings) if resume_at else []
    if is_fixed(batch):
        count = settings.max_chunks_in_flight - len(lost)
        return lost + fill(batch, count, batch.chunk_size, settings)
    if lost:
        return lost  # the first of them to finish measures the batch and fills the pipeline
    return fill(batch, 1, current_size(batch, engine, settings), settings)


_SEEN = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZADD', KEYS[1], t, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t - tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[1], ARGV[3])
return redis.call('ZCARD', KEYS[1])
"""


def active_workers(batch_id: str, worker: str, settings: Settings) -> int:
    """Note that ``worker`` took or wrote a chunk of the batch now; return how many workers did
    within the sizing's active window. Noted when a chunk is taken too, so the first chunks
    written already count every worker playing. Times are the broker's, so hosts' clocks need
    not agree."""
    window = active_window(settings)
    count = broker(settings).eval(_SEEN, 1, workers_key(batch_id), worker, window, KEY_TTL)
    return int(count)


def advance(
    batch: Batch, outcome: ChunkOutcome, settings: Settings, *, worker: str | None = None
) -> list[Range]:
    """After a chunk: queue the next one, sized from the matches measured so far, keeping the
    number in flight steady. The first chunk written fills the pipeline.

    ``worker`` (``host:pid``) names the process that wrote the chunk: the workers seen lately
    and the matches not handed out yet shrink the chunks toward the end of the batch
    (``workers.sizing.next_chunk_size``)."""
    if batch.status in BatchStatus.FINISHED:
        return []
    if is_fixed(batch):
        return fill(batch, 1, batch.chunk_size, settings)
    client = broker(settings)
    first = client.set(measured_key(batch.id), 1, nx=True, ex=KEY_TTL)
    count = settings.max_chunks_in_flight if first else 1
    if outcome.played > 0:
        key = measure_key(batch.id)
        pipe = client.pipeline()
        pipe.hincrby(key, "matches", outcome.played)
        pipe.hincrbyfloat(key, "seconds", outcome.seconds)
        pipe.expire(key, KEY_TTL)
        pipe.get(cursor_key(batch.id))
        matches, seconds, _, cursor = pipe.execute()
        workers = active_workers(batch.id, worker, settings) if worker else 0
        size = next_chunk_size(
            batch,
            matches=int(matches),
            seconds=float(seconds),
            settings=settings,
            remaining=None if cursor is None else batch.matches - int(cursor),
            workers=workers,
            count=count,
        )
        client.set(size_key(batch.id), size, ex=KEY_TTL)
    else:
        size = current_size(batch, None, settings)
    return fill(batch, count, size, settings)


def lost_ranges(
    missing: list[Range], handed: Mapping[int, int], *, cursor: int, size: int, aligned: bool
) -> list[Range]:
    """The missing ranges below ``cursor``, cut so that each range handed out and still wholly
    missing comes back as it was; any other missing span is cut at the handed-out starts and
    into pieces of at most ``size`` (at multiples of it when ``aligned``)."""
    starts = sorted(handed)
    out: list[Range] = []
    for a, b in missing:
        b = min(b, cursor)
        s = a
        while s < b:
            e = handed.get(s)
            if e is None or e > b:
                i = bisect_right(starts, s)
                following = starts[i] if i < len(starts) else b
                e = min(b, following, chunking.chunk_end(s, size, aligned=aligned))
            out.append((s, e))
            s = e
    return out


def _below_cursor(
    client: redis.Redis,
    engine: Engine,
    batch: Batch,
    *,
    cursor: int,
    missing: list[Range],
    settings: Settings,
) -> tuple[list[Range], dict[int, int]]:
    """The missing ranges the cursor has passed (``lost_ranges``) and the record of what was
    handed out, with the ranges known to be written dropped from it."""
    handed = {int(a): int(b) for a, b in client.hgetall(ranges_key(batch.id)).items()}
    written = [a for a in handed if not any(lo <= a < hi for lo, hi in missing)]
    if written:
        client.hdel(ranges_key(batch.id), *map(str, written))
        for a in written:
            del handed[a]
    size = current_size(batch, engine, settings)
    below = lost_ranges(missing, handed, cursor=cursor, size=size, aligned=is_fixed(batch))
    return below, handed


def requeue_lost(
    engine: Engine,
    batch: Batch,
    *,
    cursor: int,
    settings: Settings,
    missing: list[Range] | None = None,
) -> list[Range]:
    """Queue again the missing ranges the cursor has passed (at most ``max_chunks_in_flight``):
    all of them, for a batch resumed after the broker lost its cursor and its queue."""
    client = broker(settings)
    if missing is None:
        missing = crud.gaps(engine, batch)
    lost, _handed = _below_cursor(
        client, engine, batch, cursor=cursor, missing=missing, settings=settings
    )
    lost = lost[: settings.max_chunks_in_flight]
    _queue(client, batch, lost, settings)
    return lost


def count_delivery(batch_id: str, start: int, settings: Settings) -> int:
    """Count one delivery of the chunk starting at ``start``; return how many it has had."""
    client = broker(settings)
    key = deliveries_key(batch_id)
    count = int(client.hincrby(key, str(start), 1))
    client.expire(key, KEY_TTL)
    return count


def chunks_waiting(settings: Settings, game: str | None = None) -> int:
    """Chunk messages waiting in the broker, not yet taken by any worker: in ``game``'s
    queue, or without a game in the shared queue and the queues of every game installed
    here."""
    names = [chunk_queue(game)] if game else [CHUNK_QUEUE, *declared_queues()]
    with celery_for(settings).pool.acquire(block=True) as connection:
        channel = connection.default_channel
        return sum(int(channel.queue_declare(queue=name).message_count) for name in names)


def stalled(
    below: list[Range],
    handed: Mapping[int, int],
    *,
    taken: Container[int],
    held: Container[int],
    queue_empty: bool,
    idle_since: Mapping[int, float],
    now: float,
    grace: float,
) -> tuple[list[Range], dict[int, float]]:
    """Which missing ranges below the cursor (``below``, cut by ``lost_ranges``) are stalled,
    and the ranges idle now (never taken, with the chunk queue empty): ``start ->`` since when.

    A range being played (its lease ``held``), or waiting for a worker to compile what it needs
    (deferred, counted in ``held`` too), is not stalled, however long it takes. A range
    ``taken`` whose lease is free again is stalled: its worker is gone. A range never taken
    waits in the queue behind other work and is not stalled, unless the queue stands empty now
    and the sweeps have found it idle so since ``grace`` seconds before ``now`` at least
    (``idle_since``, from earlier sweeps): its message is lost. A worker may have taken the
    message off the queue and not yet the lease: on a loaded host that took more than a
    second, so it is given as long as a lease lasts. A piece that is not a range as handed out
    (the broker lost that record) is stalled.
    """
    lost: list[Range] = []
    idle: dict[int, float] = {}
    for a, b in below:
        if handed.get(a) != b or (a in taken and a not in held):
            lost.append((a, b))
        elif a in held or a in taken or not queue_empty:
            continue
        elif now - idle_since.get(a, now) >= grace:
            lost.append((a, b))
        else:
            idle[a] = idle_since.get(a, now)
    return lost, idle


def _stalled_now(
    client: redis.Redis,
    engine: Engine,
    batch: Batch,
    below: list[Range],
    handed: Mapping[int, int],
    settings: Settings,
    now: datetime,
) -> list[Range]:
    """``stalled`` with what the broker knows at ``now`` (at most ``max_chunks_in_flight``
    ranges); remembers the idle ranges for the next sweep, and marks the ranges about to be
    queued again as untaken until a delivery takes them.

    ``below`` was read from the database before the broker: a worker may have written its
    range and let go of its lease in between, which looks like a worker gone. So the ranges
    found lost are read again from the database, after the leases: one written meanwhile is
    not queued again.
    """
    starts = [a for a, b in below if handed.get(a) == b]
    counts = {int(a): int(n) for a, n in client.hgetall(attempts_key(batch.id)).items()}
    marks = {int(a): int(n) for a, n in client.hgetall(requeued_key(batch.id)).items()}
    # Queued again, a range waits in the queue as a new message until a delivery takes it.
    taken = {a for a, n in counts.items() if n > marks.get(a, 0)}
    pipe = client.pipeline()
    for a in starts:
        pipe.exists(lease_key(batch.id, a), deferred_key(batch.id, a))
    held = {a for a, holds in zip(starts, pipe.execute(), strict=True) if holds}
    untaken = [a for a in starts if a not in taken and a not in held]
    queue_empty = bool(untaken) and chunks_waiting(settings, batch.game) == 0
    idle_since = {int(a): float(t) for a, t in client.hgetall(idle_key(batch.id)).items()}
    lost, idle = stalled(
        below,
        handed,
        taken=taken,
        held=held,
        queue_empty=queue_empty,
        idle_since=idle_since,
        now=now.timestamp(),
        grace=settings.chunk_lease_seconds,
    )
    if lost:
        still = crud.gaps(engine, batch)
        lost = [(a, b) for a, b in lost if any(c <= a and b <= d for c, d in still)]
    lost = lost[: settings.max_chunks_in_flight]
    pipe = client.pipeline()
    pipe.delete(idle_key(batch.id))
    if idle:
        pipe.hset(idle_key(batch.id), mapping={str(a): t for a, t in idle.items()})
        pipe.expire(idle_key(batch.id), KEY_TTL)
    if lost:
        pipe.hset(requeued_key(batch.id), mapping={str(a): counts.get(a, 0) for a, _b in lost})
        pipe.expire(requeued_key(batch.id), KEY_TTL)
    pipe.execute()
    return lost


def last_activity(engine: Engine, batch: Batch) -> datetime:
    """When the batch last showed life: creation, start, or its latest chunk write."""
    latest = crud.last_written_at(engine, batch.id)
    moments = (batch.created_at, batch.started_at, latest)
    return max(m for m in map(aware, moments) if m is not None)


def sweep(
    engine: Engine, batch: Batch, *, settings: Settings, now: datetime | None = None
) -> list[Range]:
    """Queue again the chunks of a stalled batch; return the ranges queued.

    A batch is looked at when it is unfinished and wrote no chunk for ``stall_seconds``. Only
    ranges already handed out by the cursor are queued again, and only the stalled ones
    (``stalled``: taken by a worker that is gone, or lost before any worker took them; at most
    ``max_chunks_in_flight``); if none is missing there, the cursor moves on instead. A Redis
    key with that lifetime makes sure one sweep per stall period happens, however many API
    processes run it.
    """
    if batch.status in BatchStatus.FINISHED:
        return []
    now = now or datetime.now(UTC)
    if (now - last_activity(engine, batch)).total_seconds() < settings.stall_seconds:
        return []
    client = broker(settings)
    if not client.set(
        sweep_key(batch.id), int(time.time()), nx=True, ex=max(1, math.ceil(settings.stall_seconds))
    ):
        return []
    raw = client.get(cursor_key(batch.id))
    if raw is None:
        # The start task or the cursor was lost (e.g. Redis restarted empty): begin again
        # after the chunks already written.
        return open_batch(engine, batch, settings)
    missing = crud.gaps(engine, batch)
    if not missing:
        # Every match is written but completion was never recorded (its worker died between
        # the write and the check): record it now, still exactly once.
        from workers.lifecycle import after_chunk

        after_chunk(engine, batch.id)
        return []
    below, handed = _below_cursor(
        client, engine, batch, cursor=int(raw), missing=missing, settings=settings
    )
    if not below:
        # Everything handed out is written, yet the batch is missing matches: the chain of
        # chunks queueing the next one broke. The cursor moves on.
        size = current_size(batch, engine, settings)
        return fill(batch, settings.max_chunks_in_flight, size, settings)
    lost = _stalled_now(client, engine, batch, below, handed, settings, now)
    _queue(client, batch, lost, settings)
    return lost
