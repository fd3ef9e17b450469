"""``bench.generic_mcts`` runs on the installed Kalah example and is documented in
bench/README.md (a tiny run: one round, a few iterations)."""

from __future__ import annotations

import json
import subprocess
import sys

from repo_paths import REPO


def test_the_bench_measures_both_searches_on_the_installed_example() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "bench.generic_mcts", "--houses", "3", "--seeds", "2",
         "--rounds", "1", "--iterations", "30", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    result = json.loads(run.stdout)
    assert result["game"] == {"name": "kalah", "houses": 3, "seeds": 2}
    (row,) = result["rounds"]
    assert row["ours"] > 0 and row["openspiel"] > 0
    assert row["ratio"] == row["ours"] / row["openspiel"] == result["ratio"]
    assert row["playout_ratio"] == row["contract_plies_per_s"] / row["bridge_plies_per_s"]
    readme = (REPO / "bench" / "README.md").read_text(encoding="utf-8")
    assert "## Generic MCTS against OpenSpiel's Python MCTSBot: `python -m bench.generic_mcts`" in (
        readme
    )
