"""Leases and attempt counts of chunk deliveries, in Redis, so that every batch ends.

A delivery of a chunk first takes the chunk's lease: a Redis key that a thread of the worker
renews every few seconds while the chunk is played and stored. While it is held, other
deliveries of the same range (the sweep queueing it again, a message delivered twice) skip it
instead of playing it a second time. When the worker's process dies — killed at the hard time
limit, by SIGKILL, by the out-of-memory killer — renewal stops and the lease expires within
its length (``chunk_lease_seconds``, ``LEASE_SECONDS`` by default), so the next delivery can
take it.

Taking the lease counts an attempt. The count lives in Redis, not in the worker, so it
survives the worker. Attempts that end on a transient error (database or broker away) are taken
back, since they say nothing about the chunk. Past ``max_chunk_attempts`` the delivery gives
up: it stores every match of the range as failed with the reason, and the batch goes on.
"""

from __future__ import annotations

import contextlib
import logging
import threading

import redis
import redis.exceptions
from redis.lock import Lock

from storage.settings import Settings
from workers.dispatch import KEY_TTL, attempts_key, lease_key

__all__ = [
    "LEASE_SECONDS",
    "RENEW_FRACTION",
    "ChunkLease",
    "acquire",
    "attempts",
    "attempts_key",
    "lease_key",
]

log = logging.getLogger(__name__)

LEASE_SECONDS: float = Settings.model_fields["chunk_lease_seconds"].default
"""A lease not renewed for this long is free again: its worker is gone (the default of the
``chunk_lease_seconds`` setting, read from it so the two cannot part)."""
RENEW_FRACTION = 0.25
"""A held lease is renewed every this fraction of its length, so a renewal or two may be late
(a busy host, a broker away for a moment) without losing it."""


def attempts(client: redis.Redis, batch_id: str, start: int) -> int:
    """Attempts counted so far for the chunk starting at ``start``."""
    raw = client.hget(attempts_key(batch_id), str(start))
    return int(raw) if raw is not None else 0


class ChunkLease:
    """A held lease on one chunk, renewed by a thread until released; ``attempt`` is 1 for the
    first delivery that took it."""

    def __init__(
        self,
        client: redis.Redis,
        batch_id: str,
        start: int,
        lock: Lock,
        attempt: int,
        seconds: float = LEASE_SECONDS,
    ) -> None:
        self.client = client
        self.seconds = seconds
        self.batch_id = batch_id
        self.start = start
        self.lock = lock
        self.attempt = attempt
        self._stop = threading.Event()
        self._renewer = threading.Thread(
            target=self._renew, name=f"lease {batch_id}:{start}", daemon=True
        )
        self._renewer.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.seconds * RENEW_FRACTION):
            try:
                self.lock.extend(self.seconds, replace_ttl=True)
            except redis.exceptions.LockError:
                # Lost (e.g. Redis restarted empty): another delivery may play the chunk too,
                # which the idempotent write makes harmless.
                log.warning("lease on chunk %d of batch %s lost", self.start, self.batch_id)
                return
            except redis.exceptions.RedisError:
                continue  # the broker is away for a moment; the lease may still be renewed

    def uncount(self) -> None:
        """Take this attempt back (it ended on a transient error)."""
        with contextlib.suppress(redis.exceptions.RedisError):
            self.client.hincrby(attempts_key(self.batch_id), str(self.start), -1)

    def release(self) -> None:
        """Stop renewing and give the lease back; one already lost, or a broker away, is let
        be (it expires by itself)."""
        self._stop.set()
        self._renewer.join()
        with contextlib.suppress(redis.exceptions.LockError, redis.exceptions.RedisError):
            self.lock.release()


def acquire(
    client: redis.Redis, batch_id: str, start: int, seconds: float = LEASE_SECONDS
) -> ChunkLease | None:
    """Take the chunk's lease, ``seconds`` long, and count the attempt; None when another
    delivery holds it."""
    lock = client.lock(lease_key(batch_id, start), timeout=seconds, thread_local=False)
    if not lock.acquire(blocking=False):
        return None
    key = attempts_key(batch_id)
    attempt = int(client.hincrby(key, str(start), 1))
    client.expire(key, KEY_TTL)
    return ChunkLease(client, batch_id, start, lock, attempt, seconds)
