"""The compiled searches' clock agrees with Python's and caches like every kernel module."""

from __future__ import annotations

import time

from engines.kernel_clock import NO_DEADLINE, now, past


def test_now_reads_the_same_clock_as_perf_counter() -> None:
    before = time.perf_counter()
    inside = now()
    after = time.perf_counter()
    assert before <= inside <= after


def test_a_deadline_in_the_past_has_passed_and_none_never_does() -> None:
    assert past(time.perf_counter() - 1.0)
    assert not past(time.perf_counter() + 3600.0)
    assert not past(NO_DEADLINE)
