"""Les Alvéoles agent ladder: every agent against ``random`` and against ``greedy``.

    .venv/bin/python -m bench.alveoles_ladder                  # 200 games a pairing, 2 workers
    .venv/bin/python -m bench.alveoles_ladder --games 400 --workers 4
    .venv/bin/python -m bench.alveoles_ladder --agents greedy hunter "mcts:iterations=400"

Two players, seat-rotated: the agent under test sits in seat 0 in even matches and seat 1 in odd
ones, so first-player advantage cancels. Its score is wins + half of shared wins (the baselines
``random`` and ``greedy`` are measured in the same run), with the 95 % interval and Elo of
``bench.ladder`` (normal on per-game scores, Wilson for a clean sweep). It also prints the mean
point margin and seconds per game. Results go to ``bench/results/alveoles_ladder.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor

from bench.ladder import RESULTS, run_pair

DEFAULT_AGENTS = [
    "greedy",
    "value",
    "hunter",
    "white_pusher",
    "bonus_builder",
    "cautious",
    "mcts:iterations=40,max_rollout_plies=20",
    "alphabeta:depth=2,nodes=150",
]
BASELINES = ["random", "greedy"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--agents", nargs="*", default=DEFAULT_AGENTS)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    print(f"{'agent':44} {'vs':7} {'score':>6}  {'95% interval':15} {'margin':>7} {'s/game':>7}")
    with ProcessPoolExecutor(args.workers) as pool:
        for tested in ["random", *args.agents]:
            for baseline in BASELINES:
                row = run_pair("alveoles", tested, baseline, args.games, args.seed, pool)
                rows.append(row)
                low, high = row["score_95"]
                print(
                    f"{tested:44} {baseline:7} {row['score']:6.3f}  [{low:.3f}, {high:.3f}] "
                    f"{row['margin']:7.1f} {row['seconds_per_game']:7.3f}",
                    flush=True,
                )
    elapsed = time.perf_counter() - started
    print(f"{len(rows) * args.games} games in {elapsed:.0f} s with {args.workers} workers")
    RESULTS.mkdir(exist_ok=True)
    out = {"games_per_pairing": args.games, "seed": args.seed, "seconds": elapsed, "rows": rows}
    (RESULTS / "alveoles_ladder.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
