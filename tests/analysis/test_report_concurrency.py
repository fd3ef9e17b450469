"""Reports rendered from many threads at once (as the API's thread pool does) are identical
to one rendered alone: rendering touches no process-wide state."""

from __future__ import annotations

import threading
from typing import Any

import matplotlib
import pytest
from analysis_data import stored_alveoles_report

from analysis.render_html import render_html

THREADS = 8


def alveoles_report(url: str) -> dict[str, Any]:
    return stored_alveoles_report(url, matches=120, p_seat0=0.45, seed=11)


@pytest.mark.slow
def test_eight_threads_render_the_same_page_as_one(migrated_sqlite_url: str) -> None:
    report = alveoles_report(migrated_sqlite_url)
    rc_before = dict(matplotlib.rcParams)
    alone = render_html(report)
    assert alone.count("<svg") == 7  # seats, agents, plies, three heat maps, tiers
    assert "greedy owns the square" in alone  # SVG text is kept as text

    barrier = threading.Barrier(THREADS)
    pages: list[str | None] = [None] * THREADS
    errors: list[BaseException] = []

    def render(slot: int) -> None:
        try:
            barrier.wait()
            pages[slot] = render_html(report)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=render, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [len(p or "") for p in pages] == [len(alone)] * THREADS
    assert all(page == alone for page in pages)
    # Rendering leaves matplotlib's process-wide settings as it found them.
    assert dict(matplotlib.rcParams) == rc_before
