"""``bench.kalah_strength`` runs on the installed Kalah example and is documented in
bench/README.md (a tiny run: one small board, few games)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from repo_paths import REPO


def test_the_bench_scores_exact_play_as_exact_and_random_play_below_it(tmp_path: Path) -> None:
    out = tmp_path / "strength.json"
    subprocess.run(
        [sys.executable, "-m", "bench.kalah_strength", "--boards", "3x2", "--games", "6",
         "--players", "perfect", "random", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    result = json.loads(out.read_text(encoding="utf-8"))
    perfect, random = result["rows"]
    assert (perfect["board"], perfect["player"]) == ("3x2", "perfect")
    # 3 houses of 2 is a first-player win (Irving et al.'s table): exact play wins the first
    # seat and loses the second, so in 6 games, 3 in each seat, it scores 1/2 -- and a player
    # that plays only best moves gets that against perfect too.
    assert perfect["best_possible_score"] == 0.5
    assert perfect["score_against_perfect"] == 0.5
    assert perfect["optimal_share"] == 1.0 and perfect["mean_regret"] == 0
    assert perfect["result_kept"] == perfect["result_decisions"]
    # Random play misses some best move in 6 games of several decisions each.
    assert random["optimal"] < random["decisions"] and random["mean_regret"] > 0
    assert random["score_against_perfect"] <= random["best_possible_score"]
    readme = (REPO / "bench" / "README.md").read_text(encoding="utf-8")
    assert "## Kalah: the generic players against exact play: `python -m bench.kalah_strength`" in (
        readme
    )
