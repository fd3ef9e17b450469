"""Celery's soft time limit, kept out of the code that stores a chunk.

A prefork worker's pool sends its child ``SIGUSR1`` when a task passes ``soft_time_limit``; the
child's handler raises ``SoftTimeLimitExceeded`` wherever the task is. That is what stops an
over-long match, but the same exception in the middle of the chunk's write would roll the
write back and lose the matches already played. ``soft_limit_held`` keeps the signal from
raising while a chunk is stored; the hard time limit still applies.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SOFT_LIMIT_SIGNAL = signal.SIGUSR1
"""The signal billiard's pool sends for a soft time limit (``billiard.pool.SIG_SOFT_TIMEOUT``)."""


# Both checks look billiard up only when it is loaded already: local mode never imports it,
# and where it is not loaded its handler and its exception cannot be in play.


def is_soft_limit(exc: BaseException) -> bool:
    """True for the ``SoftTimeLimitExceeded`` a worker's soft time limit raises."""
    module = sys.modules.get("billiard.exceptions")
    kind = getattr(module, "SoftTimeLimitExceeded", None)
    return kind is not None and isinstance(exc, kind)


def _is_soft_limit_handler(handler: object) -> bool:
    module = sys.modules.get("billiard.pool")
    return module is not None and handler is getattr(module, "soft_timeout_sighandler", None)


@contextmanager
def soft_limit_held() -> Iterator[list[bool]]:
    """Within the block the soft time limit does not raise; yields a one-item list that is
    ``[True]`` afterwards when the limit passed meanwhile.

    Only a Celery prefork child has the soft-limit handler installed; anywhere else (local mode,
    the solo pool, a thread) this changes nothing.
    """
    arrived = [False]
    if threading.current_thread() is not threading.main_thread():
        yield arrived
        return
    previous = signal.getsignal(SOFT_LIMIT_SIGNAL)
    if not _is_soft_limit_handler(previous):
        yield arrived
        return

    def note(_signum: int, _frame: FrameType | None) -> None:
        arrived[0] = True

    signal.signal(SOFT_LIMIT_SIGNAL, note)
    try:
        yield arrived
    finally:
        signal.signal(SOFT_LIMIT_SIGNAL, previous)
