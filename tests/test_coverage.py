"""The fast subset of the coverage suite (``bench/coverage.py``): the hardest designs, a few
hundred replicates each, through the report's own functions.

The seed is fixed, so each run is the same run; the bound still allows for the Monte-Carlo
error of a few hundred replicates (three standard errors below the 93 % target), so a change
that leaves coverage where it should be can never fail it by chance, while one that ignores
the units of sampling (about 50 % with six openings) or small samples fails it clearly.
"""

from __future__ import annotations

import math

import pytest

from bench.coverage import HARDEST, TARGET, Scenario, measure

REPLICATES = 300
BOUND = TARGET - 3 * math.sqrt(TARGET * (1 - TARGET) / REPLICATES)


@pytest.mark.slow
@pytest.mark.parametrize(
    "scenario", HARDEST, ids=[f"{s.name}-{s.players}p-{s.matches}" for s in HARDEST]
)
def test_every_interval_covers_on_the_hardest_designs(scenario: Scenario) -> None:
    rows = measure(scenario, REPLICATES, seed=1)
    figures = {r["figure"] for r in rows}
    assert {"seat shares", "first-player advantage", "mean points", "balance"} <= figures
    assert "compare difference" in figures
    low = [f"{r['figure']}: {r['coverage']:.3f}" for r in rows if r["coverage"] < BOUND]
    assert not low, f"below {BOUND:.3f}: {low}"
