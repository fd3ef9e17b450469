"""Ctrl-C that stops a local run cleanly wherever it lands.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be when SIGINT arrives.
That can be inside SQLAlchemy returning a connection to its pool, which logs the interrupt with
a traceback before passing it on, or inside a finalizer run by the garbage collector, where
Python cannot raise it: it prints "Exception ignored in ..." with a traceback, drops it and the
batch plays on. So:

- ``interrupt_held`` makes a chunk's write and stop-rule check whole: a Ctrl-C arriving in it
  is raised once it is done, so the chunk is stored and checked, and the stop comes just after;
- ``keep_swallowed_interrupts`` (the command line installs it) notes, without a word, a Ctrl-C
  that a finalizer swallowed, and ``raise_swallowed_interrupt`` raises it at the next chunk's
  end, where the local runner asks.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def interrupt_held() -> Iterator[None]:
    """Within the block SIGINT does not raise; one that arrived meanwhile raises
    ``KeyboardInterrupt`` as the block ends (in place of any exception the block raised).

    Only where SIGINT raises ``KeyboardInterrupt`` (Python's own handler, in the main thread)
    does this change anything: a local pool's worker ignores SIGINT, and a Celery worker's
    handlers are its own.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    arrived: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        arrived.append(signum)

    signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if arrived or _SWALLOWED:
            _SWALLOWED.clear()
            raise KeyboardInterrupt


_SWALLOWED: list[int] = []
"""Ctrl-Cs a finalizer swallowed since ``raise_swallowed_interrupt`` last raised one."""


def _note_swallowed(unraisable: sys.UnraisableHookArgs) -> None:
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        _SWALLOWED.append(signal.SIGINT)
        return
    sys.__unraisablehook__(unraisable)


def keep_swallowed_interrupts() -> None:
    """Keep a ``KeyboardInterrupt`` Python could not raise (it landed in a finalizer) for
    ``raise_swallowed_interrupt``, instead of printing it with a traceback."""
    sys.unraisablehook = _note_swallowed


def raise_swallowed_interrupt() -> None:
    """Raise ``KeyboardInterrupt`` if a finalizer swallowed one since the last call."""
    if _SWALLOWED:
        _SWALLOWED.clear()
        raise KeyboardInterrupt
