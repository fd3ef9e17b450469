"""A fast subset of ``bench.coverage_agents``: the agent and tier intervals cover their known
truth on independent and opening-clustered batches, and on twelve openings of very unequal
frequencies (Monte-Carlo margin: three standard errors
below the 93 % the full bench asks of 2,000 replicates)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from repo_paths import REPO

REPLICATES = 150


@pytest.mark.slow
def test_agent_and_tier_intervals_cover_their_truth() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "bench.coverage_agents", "--replicates", str(REPLICATES),
         "--sizes", "20,40", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=280, check=True,
    )  # fmt: skip
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(rows) == 26
    floor = 0.93 - 3 * math.sqrt(0.93 * 0.07 / REPLICATES)
    # Coverage counts only the batches that gave an interval; those without are apart (four
    # players in 20 matches are two rounds: fewer units than players, never an interval).
    given = [r for r in rows if r["no_interval"] < 1]
    never = {r["case"] for r in rows if r not in given}
    assert {"strength, 4 players, independent, n=20"} <= never and len(given) >= 20, never
    assert all("12 unequal" not in case for case in never)
    low = [(r["case"], r["coverage"]) for r in given if not r["coverage"] >= floor]
    assert not low, low
    clustered = [r for r in rows if "clustered" in r["case"]]
    assert len(clustered) == 12 and all(r["replicates"] == REPLICATES for r in clustered)
