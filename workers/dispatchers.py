"""Who runs the batches: a ``Dispatcher`` hands a stored batch to whatever plays it.

Celery workers when ``BROKER_URL`` is set, otherwise a local process pool started in a child
process (``playtester resume``), so ``playtester serve`` works on a laptop with no servers at
all. Once handed over, the batch's start request is removed from the outbox. The API builds one
with ``make_dispatcher`` and closes it at shutdown.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Sequence
from typing import Protocol

from storage.models import Batch
from storage.settings import Settings
from storage.submissions import start_delivered
from workers.outages import TRANSIENT_ERRORS

log = logging.getLogger(__name__)

STOP_GRACE_SECONDS = 30.0
"""At shutdown, how long a local run's running chunks may take to finish and be saved."""


class Dispatcher(Protocol):
    """Hands stored batches to whatever plays them, says whether its broker answers, and
    stops what it runs when the app shuts down."""

    def start(self, batch: Batch) -> None: ...

    def broker_status(self) -> str: ...

    def close(self) -> None: ...


START_WAITS: tuple[type[Exception], ...] = (*TRANSIENT_ERRORS, OSError)
"""Failures after which a start request simply stays in the outbox for the sweeper: an outage,
or any other socket error on the way to the broker."""


class CeleryDispatcher:
    """Distributed mode: one control message per batch, workers do the rest.

    The message is sent once, without waiting for a broker that is down: the batch and its
    start request are already stored, and the sweeper delivers the request when the broker is
    back. The answer to the client is the same either way.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def start(self, batch: Batch) -> None:
        from storage.db import get_engine
        from workers import dispatch

        try:
            dispatch.start(batch.id, self.settings, retry=False)
            start_delivered(get_engine(self.settings.database_url), batch.id)
        except START_WAITS as exc:
            log.warning("batch %s stored; its start waits for the sweeper: %s", batch.id, exc)

    def broker_status(self) -> str:
        from workers.dispatch import broker

        broker(self.settings).ping()
        return "ok"

    def close(self) -> None:
        return None


class LocalDispatcher:
    """Local mode: batches run one at a time, each in a child ``playtester resume`` with its
    process pool on every core; the others wait in order. ``command`` runs ``playtester``
    (the API passes it: the command line is its layer, not this one's).

    ``close`` (at app shutdown) stops the running child as Ctrl-C would: no new chunk starts,
    running chunks finish and are saved (after ``grace`` seconds they are abandoned), and the
    batch goes back to queued, resumable with ``playtester resume``. Batches still waiting
    stay queued too.
    """

    def __init__(
        self, settings: Settings, *, command: Sequence[str], grace: float = STOP_GRACE_SECONDS
    ) -> None:
        self.settings = settings
        self.command = list(command)
        self.grace = grace
        self.waiting: queue.Queue[str | None] = queue.Queue()
        self.running: subprocess.Popen[bytes] | None = None
        self.exits: list[tuple[str, int]] = []
        """(batch id, exit status) of every child that ended: 0 done, 130 stopped cleanly."""
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self, batch: Batch) -> None:
        from storage.db import get_engine

        with self._lock:
            if self._closing.is_set():
                raise RuntimeError("the server is shutting down")
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="playtester-local-batches", daemon=True
                )
                self._thread.start()
        self.waiting.put(batch.id)
        start_delivered(get_engine(self.settings.database_url), batch.id)

    def _run(self) -> None:
        while True:
            batch_id = self.waiting.get()
            with self._lock:
                if batch_id is None or self._closing.is_set():
                    return
                command = [*self.command, "resume", batch_id]
                # The child must run with this server's settings (its database, chunk sizing,
                # limits) even when the app was built with settings other than the
                # environment's. Its own session keeps a Ctrl-C meant for the server from
                # reaching it: the server decides how it stops.
                env = {**os.environ, **self.settings.environment()}
                self.running = subprocess.Popen(
                    command,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
                child = self.running
            code = child.wait()
            with self._lock:
                self.exits.append((batch_id, code))
                self.running = None
            if code not in (0, 130):
                log.warning("local run of batch %s ended with status %d", batch_id, code)

    def broker_status(self) -> str:
        return "not configured (local mode)"

    def close(self) -> None:
        """Stop the running batch cleanly and start no other."""
        with self._lock:
            self._closing.set()
            child = self.running
            thread = self._thread
        self.waiting.put(None)
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGINT)
            try:
                child.wait(self.grace)
            except subprocess.TimeoutExpired:
                child.send_signal(signal.SIGINT)  # a second Ctrl-C abandons running chunks
                try:
                    child.wait(30)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
        if thread is not None:
            thread.join(10)


def make_dispatcher(settings: Settings, *, local_command: Sequence[str]) -> Dispatcher:
    """The dispatcher the settings call for; ``local_command`` runs ``playtester`` in local
    mode."""
    if settings.broker_url:
        return CeleryDispatcher(settings)
    return LocalDispatcher(settings, command=local_command)
