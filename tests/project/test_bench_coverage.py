"""The fast subset of the coverage suite (``bench/coverage.py``): the hardest designs, a few
hundred replicates each, through the report's own functions.

The seed is fixed, so each run is the same run; the bound still allows for the Monte-Carlo
error of a few hundred replicates (three standard errors below the 93 % target), so a change
that leaves coverage where it should be can never fail it by chance, while one that ignores
the units of sampling (about 50 % with six openings) or small samples fails it clearly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.coverage import HARDEST, JOINT, TARGET, Scenario, Tally, measure

REPLICATES = 300
BOUND = TARGET - 3 * math.sqrt(TARGET * (1 - TARGET) / REPLICATES)


@pytest.mark.slow
@pytest.mark.parametrize(
    "scenario", HARDEST, ids=[f"{s.name}-{s.players}p-{s.matches}" for s in HARDEST]
)
def test_every_interval_covers_on_the_hardest_designs(scenario: Scenario) -> None:
    rows = measure(scenario, REPLICATES, seed=1)
    figures = {r["figure"] for r in rows}
    assert {"seat shares", JOINT, "first-player advantage", "mean points", "balance"} <= figures
    assert "compare difference" in figures
    low = [f"{r['figure']}: {r['coverage']:.3f}" for r in rows if r["coverage"] < BOUND]
    assert not low, f"below {BOUND:.3f}: {low}"


def test_a_batch_without_an_interval_is_counted_apart_not_as_covered() -> None:
    tally = Tally(np.zeros(2, np.int64), np.zeros(2, np.int64))
    tally.add([((None, None), 0.5), ((0.4, 0.6), 0.5)])
    tally.add([((math.nan, math.nan), 0.5), ((0.55, 0.6), 0.5)])
    assert tally.given.tolist() == [0, 2] and tally.hits.tolist() == [0, 1]
    # An interval open on one side (an Elo at a clean sweep) is an interval.
    tally.add([((0.45, None), 0.5), ((0.4, 0.6), 0.5)])
    assert tally.given.tolist() == [1, 3] and tally.hits.tolist() == [1, 2]
    # All at once: covered only when every seat's interval holds.
    joint = Tally(np.zeros(1, np.int64), np.zeros(1, np.int64))
    joint.add([((0.4, 0.6), 0.5), ((0.55, 0.6), 0.5)], joint=True)
    joint.add([((0.4, 0.6), 0.5), ((0.45, 0.6), 0.5)], joint=True)
    assert joint.given.tolist() == [2] and joint.hits.tolist() == [1]
