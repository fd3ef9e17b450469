"""The one sweeper of distributed mode: delivers waiting start requests, rescues stalled batches.

It runs in the API processes (``api.lifespan`` starts ``run_forever`` when ``BROKER_URL`` is set),
but only the process holding a lease in Redis works: ``SET playtester:sweeper:lease <owner>
NX PX`` takes it, the holder renews it every tick (compare-and-expire, so only the holder can)
and deletes it when it stops (compare-and-delete). However many API processes run, one sweeps;
if it dies, another takes the lease within ``LEASE_SECONDS``. No request ever sweeps.

Each tick the holder sends the start message of every batch still in the ``outbox`` (stored
while the broker was down, or whose sender died before delivering) and, once per stall period,
runs ``workers.dispatch.sweep`` on every unfinished batch. The holder counts its ticks in the
Redis hash ``playtester:sweeper:ticks`` (field: its owner name), which shows who sweeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid

import redis

from storage.crud import list_batches
from storage.db import get_engine
from storage.models import BatchStatus
from storage.settings import Settings
from storage.submissions import pending_starts, start_delivered
from workers import dispatch

log = logging.getLogger(__name__)

LEASE_KEY = "playtester:sweeper:lease"
TICKS_KEY = "playtester:sweeper:ticks"
TICK_SECONDS = 1.0
"""How often the holder delivers waiting start requests (and others try to take the lease)."""
LEASE_SECONDS = 10.0
"""How long a lease outlives its last renewal: the takeover delay after a holder dies."""

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
"""


def default_owner() -> str:
    """``host:pid:random``: names this process in the lease and the tick counter."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Lease:
    """A Redis lease held by at most one owner at a time."""

    def __init__(self, client: redis.Redis, owner: str, seconds: float = LEASE_SECONDS) -> None:
        self.client = client
        self.owner = owner
        self.ms = int(seconds * 1000)

    def hold(self) -> bool:
        """Renew the lease if it is ours, else take it if free; True when this owner holds it."""
        if self.client.eval(_RENEW, 1, LEASE_KEY, self.owner, self.ms):
            return True
        return bool(self.client.set(LEASE_KEY, self.owner, nx=True, px=self.ms))

    def release(self) -> None:
        """Give the lease up now (only if ours), so another process takes over at once."""
        self.client.eval(_RELEASE, 1, LEASE_KEY, self.owner)

    def holder(self) -> str | None:
        """The owner holding the lease, if any."""
        raw = self.client.get(LEASE_KEY)
        return raw.decode() if isinstance(raw, bytes) else raw


def deliver_pending(settings: Settings) -> list[str]:
    """Send the start message of every batch still in the outbox; return their ids."""
    engine = get_engine(settings.database_url)
    sent = []
    for batch_id in pending_starts(engine):
        dispatch.start(batch_id, settings, retry=False)
        start_delivered(engine, batch_id)
        sent.append(batch_id)
    if sent:
        log.info("delivered the start of batches %s", ", ".join(sent))
    return sent


def sweep_unfinished(settings: Settings) -> int:
    """Run the stall check of ``workers.dispatch.sweep`` on every unfinished batch."""
    engine = get_engine(settings.database_url)
    seen = 0
    for state in (BatchStatus.QUEUED, BatchStatus.RUNNING):
        offset = 0
        while True:
            page = list_batches(engine, status=state, limit=200, offset=offset)
            for batch in page:
                queued = dispatch.sweep(engine, batch, settings=settings)
                if queued:
                    # Lost chunks queued again, or the first ones of a batch whose start
                    # message has not run yet (it waits behind other work, or was lost).
                    log.warning(
                        "batch %s wrote no chunk for %g s; queued chunks %s",
                        batch.id,
                        settings.stall_seconds,
                        queued,
                    )
            seen += len(page)
            if len(page) < 200:
                break
            offset += 200
    return seen


class Sweeper:
    """One process's share of the sweeping: nothing unless it holds the lease."""

    def __init__(self, settings: Settings, *, owner: str | None = None) -> None:
        if not settings.broker_url:
            raise ValueError("the sweeper needs BROKER_URL")
        self.settings = settings
        self.client = dispatch.broker(settings)
        self.lease = Lease(self.client, owner or default_owner())
        self.stall_period = max(1.0, min(settings.stall_seconds / 2, 30.0))
        self._next_stall_sweep = 0.0

    @property
    def owner(self) -> str:
        return self.lease.owner

    def tick(self) -> bool:
        """One round; True when this process held the lease and swept."""
        if not self.lease.hold():
            return False
        self.client.hincrby(TICKS_KEY, self.owner, 1)
        self.client.expire(TICKS_KEY, dispatch.KEY_TTL)
        deliver_pending(self.settings)
        now = time.monotonic()
        if now >= self._next_stall_sweep:
            self._next_stall_sweep = now + self.stall_period
            sweep_unfinished(self.settings)
        return True

    def close(self) -> None:
        """Release the lease if this process holds it."""
        self.lease.release()


async def run_forever(settings: Settings) -> None:
    """Tick every ``TICK_SECONDS`` until cancelled; outages are logged and waited out."""
    sweeper = Sweeper(settings)
    holding: bool | None = None
    failing = False
    try:
        while True:
            try:
                swept = await asyncio.to_thread(sweeper.tick)
                if swept != holding:
                    log.info(
                        "sweeper %s: %s",
                        sweeper.owner,
                        "holds the lease" if swept else "standing by",
                    )
                holding, failing = swept, False
            except Exception:  # a broker or database outage must not end the loop
                if not failing:
                    log.warning(
                        "sweeper tick failed; retrying every %.0f s", TICK_SECONDS, exc_info=True
                    )
                failing = True
            await asyncio.sleep(TICK_SECONDS)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.to_thread(sweeper.close)
