"""A signal whose handler raises, arriving while compiled code runs, raises its exception once
the call has returned (``engines.compiled.agent_signals``): not a ``SystemError``, not a result
with a hole in it. The compiled function here sends the signal itself (libc's ``raise``
through ctypes), so it arrives inside the call every time."""

from __future__ import annotations

import ctypes
import signal
from collections.abc import Iterator
from types import FrameType

import numpy as np
import pytest
from numba import njit

from engines.compiled.agent_base import call_compiled
from engines.compiled.agent_signals import signals_held

_raise = ctypes.CDLL(None)["raise"]
_raise.argtypes = [ctypes.c_int]
_raise.restype = ctypes.c_int

CTRL_C = int(signal.SIGINT)
SOFT_LIMIT = int(signal.SIGUSR1)
NO_SIGNAL = 0
"""The null signal: ``raise(0)`` sends nothing."""


class SoftLimitError(Exception):
    """What billiard's soft time limit handler raises, in kind: an ``Exception``."""


@njit
def _search(signum: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # Returns what a search returns: boxing each array calls back into Python.
    _raise(signum)
    return np.arange(n), np.ones(n), np.zeros(n)


@pytest.fixture
def handled() -> Iterator[list[int]]:
    """Ctrl-C raises ``KeyboardInterrupt`` and SIGUSR1 ``SoftLimitError``; the signals handled are
    listed."""
    calls: list[int] = []

    def soft_limit(signum: int, _frame: FrameType | None) -> None:
        calls.append(signum)
        raise SoftLimitError("soft time limit")

    def ctrl_c(signum: int, _frame: FrameType | None) -> None:
        calls.append(signum)
        raise KeyboardInterrupt

    before = {s: signal.getsignal(s) for s in (CTRL_C, SOFT_LIMIT)}
    signal.signal(CTRL_C, ctrl_c)
    signal.signal(SOFT_LIMIT, soft_limit)
    try:
        yield calls
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


@pytest.mark.parametrize(
    ("signum", "raised"),
    [(CTRL_C, KeyboardInterrupt), (SOFT_LIMIT, SoftLimitError)],
    ids=["ctrl-c", "soft-limit"],
)
def test_a_signal_inside_a_compiled_call_raises_its_own_exception_after_it(
    handled: list[int], signum: int, raised: type[BaseException]
) -> None:
    handler = signal.getsignal(signum)
    for _ in range(3):  # the first call compiles; every later one must behave the same
        with pytest.raises(raised):
            call_compiled(_search, signum, 4)
    assert handled == [signum] * 3
    assert signal.getsignal(signum) is handler


def test_a_compiled_call_without_a_signal_returns_its_whole_result(handled: list[int]) -> None:
    moves, visits, totals = call_compiled(_search, NO_SIGNAL, 3)
    assert moves.tolist() == [0, 1, 2] and visits.tolist() == [1, 1, 1]
    assert totals.tolist() == [0, 0, 0] and handled == []


def test_signals_in_a_held_block_are_handled_once_each_after_it(handled: list[int]) -> None:
    reached = []
    with pytest.raises(SoftLimitError), signals_held():
        signal.raise_signal(SOFT_LIMIT)
        signal.raise_signal(SOFT_LIMIT)
        reached.append("end of block")
    assert reached == ["end of block"] and handled == [SOFT_LIMIT]


def test_a_held_block_that_raises_still_puts_the_handlers_back(handled: list[int]) -> None:
    handler = signal.getsignal(CTRL_C)
    with pytest.raises(ValueError, match="refused"), signals_held():
        raise ValueError("refused")
    assert signal.getsignal(CTRL_C) is handler and handled == []
