"""The compiled searches' clock: seconds from ``time.perf_counter``, read inside ``@njit`` code.

A search with a time limit (Blitz clocks, ``time_control``) checks the clock every so many
nodes or iterations. numba has no clock of its own, and a ``ctypes`` call into libc would make
every function that uses it uncacheable (a pointer baked into the machine code); an
``objmode`` block is cached and costs about a microsecond, which checking once per thousand
nodes makes negligible.
"""

from __future__ import annotations

import time

from numba import njit, objmode

from engines.kernel_cache import track

NO_DEADLINE = 0.0
"""A deadline of 0 means the search runs on its node or iteration budget alone."""


@njit(cache=True)
def now() -> float:
    """``time.perf_counter()``, callable from compiled code."""
    with objmode(seconds="float64"):
        seconds = time.perf_counter()
    return seconds  # noqa: RET504 (objmode hands values out only through assignments)


@njit(cache=True)
def past(deadline: float) -> bool:
    """Whether ``deadline`` (a ``perf_counter`` reading, or ``NO_DEADLINE``) has passed."""
    return deadline != NO_DEADLINE and now() >= deadline


track(globals())
