"""Signals that arrive during a compiled call take effect after it, in plain Python.

A Python signal handler runs in the main thread at the next point where the interpreter
checks for one, and numba's compiled code calls back into Python in places: it unpickles the
type of each array it returns, and its compiler runs Python callbacks. A handler that raises
there (``KeyboardInterrupt`` for Ctrl-C, a Celery worker's ``SoftTimeLimitExceeded``) lands
in numba's C code, which does not expect it. Seen with numba 0.68: a search returning a
tuple of arrays gave back a tuple whose first element was NULL and no exception at all, or a
``SystemError`` ("returned a result with an exception set") that a match's error handling
recorded as a failed match; in either case Ctrl-C did not stop the run. Inside the compiler
the exception is swallowed and the function is left without a compiled version.

:func:`signals_held` replaces the handlers of the signals that carry such exceptions by one
that only notes the signal, and on leaving puts them back and raises each noted signal again,
so its own handler runs where Python code can take its exception.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGALRM)
"""Ctrl-C, a polite stop, billiard's soft time limit and alarm-based timeouts: the signals
whose Python handlers raise."""


@contextmanager
def signals_held() -> Iterator[None]:
    """Within the block, the :data:`HELD` signals that have a Python handler are only noted;
    after it, each noted one is raised again (once) for its own handler.

    Only the main thread runs Python signal handlers, and only it may change them: in any
    other thread a handler cannot interrupt the block's code, and this changes nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        if signum not in noted:
            noted.append(signum)

    kept = {s: h for s in HELD if callable(h := signal.getsignal(s))}
    for number in kept:
        signal.signal(number, note)
    try:
        yield
    finally:
        for held, handler in kept.items():
            signal.signal(held, handler)
        for arrived in noted:
            signal.raise_signal(arrived)
