"""The scaling simulation (``bench/scaling.py``) against closed forms for trivial batches."""

from __future__ import annotations

import math

import pytest

from bench.scaling import draw, load_times, simulate
from storage.settings import Settings


@pytest.mark.parametrize(
    ("matches", "size", "workers"), [(960, 30, 10), (1000, 30, 10), (500, 7, 3), (64, 64, 5)]
)
def test_identical_matches_in_fixed_chunks_follow_the_closed_form(
    matches: int, size: int, workers: int
) -> None:
    """Every match takes t and chunks are fixed at s: the ⌈N/s⌉ chunks go out in rounds of W,
    every round lasting s·t but the last, which lasts as long as its longest chunk."""
    t = 0.01
    run = simulate([t] * matches, workers, chunk_size=size, overhead=0.0)
    chunks = math.ceil(matches / size)
    rounds = math.ceil(chunks / workers)
    last = matches - (chunks - 1) * size  # the last chunk's matches
    in_last_round = chunks - (rounds - 1) * workers
    longest_last = size if in_last_round > 1 else last
    makespan = (rounds - 1) * size * t + longest_last * t
    assert run.chunks == chunks
    assert run.makespan == pytest.approx(makespan)
    assert run.efficiency == pytest.approx(matches * t / (workers * makespan))


def test_one_worker_pays_only_the_chunks_overhead() -> None:
    """One worker never waits: the wall time is every match plus every chunk's overhead."""
    t, overhead = 0.02, 0.005
    for rule in ("today", "new"):
        run = simulate([t] * 3000, 1, rule=rule, overhead=overhead)
        assert run.makespan == pytest.approx(3000 * t + run.chunks * overhead)
        assert run.efficiency == pytest.approx(3000 * t / (3000 * t + run.chunks * overhead))
        assert run.tail == 0.0


def test_the_new_rule_meets_its_target_on_the_measured_games() -> None:
    """The figures the bench README quotes, on the stored measurements, at 100 workers and
    10,000 matches of each game: the new rule never does worse than today's, cuts the tail,
    and reaches 0.9 wherever each worker has at least ``CHUNK_SECONDS`` of work to do (with
    less, a worker's whole share is a few chunks' fixed cost away from nothing)."""
    settings = Settings()
    for game, entry in load_times().items():
        times = draw(entry["seconds"], 10_000, seed=1)
        today = simulate(times, 100, rule="today", settings=settings)
        new = simulate(times, 100, rule="new", settings=settings)
        assert new.efficiency >= today.efficiency and new.tail <= today.tail, (game, today, new)
        if new.work / 100 >= settings.chunk_seconds:
            assert new.efficiency >= 0.9, (game, new)
