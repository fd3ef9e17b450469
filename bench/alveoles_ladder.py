"""Les Alvéoles agent ladder: every agent against ``random`` and against ``greedy``.

    .venv/bin/python -m bench.alveoles_ladder                  # 200 games a pairing, 2 workers
    .venv/bin/python -m bench.alveoles_ladder --games 400 --workers 4
    .venv/bin/python -m bench.alveoles_ladder --agents greedy hunter "mcts:iterations=400"

Two players, seat-rotated: the agent under test sits in seat 0 in even matches and seat 1 in odd
ones, so first-player advantage cancels. Its score is wins + half of shared wins (the baselines
``random`` and ``greedy`` are measured in the same run), with a 95 % interval from the normal
approximation on per-game scores. It also prints the mean point margin and seconds per game.
Results go to ``bench/results/alveoles_ladder.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from engines.core import agent_rng, match_seed, play_match
from engines.registry import load_game, make_agent, spec_from_text

RESULTS = Path(__file__).resolve().parent / "results"
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


def _play(args: tuple[str, str, int, int]) -> tuple[float, float, float]:
    """One match; returns (score of the agent under test, its point margin, seconds)."""
    tested, baseline, batch_seed, index = args
    game = load_game("alveoles", players=2)
    seat = index % 2
    texts = [tested, baseline] if seat == 0 else [baseline, tested]
    seed = match_seed(batch_seed, index)
    agents = [make_agent(game, spec_from_text(t), agent_rng(seed, s)) for s, t in enumerate(texts)]
    result = play_match(game, agents, seed)
    margin = result.scores[seat] - result.scores[1 - seat]
    return result.returns[seat], margin, result.duration


def measure(
    tested: str, baseline: str, games: int, seed: int, pool: ProcessPoolExecutor
) -> dict[str, Any]:
    """Score of ``tested`` against ``baseline`` over ``games`` seat-rotated matches."""
    jobs = [(tested, baseline, seed, i) for i in range(games)]
    rows = list(pool.map(_play, jobs, chunksize=4))
    scores = [r[0] for r in rows]
    mean = statistics.fmean(scores)
    half = 1.96 * statistics.pstdev(scores) / math.sqrt(len(scores))
    return {
        "agent": tested,
        "opponent": baseline,
        "games": games,
        "score": mean,
        "low": max(0.0, mean - half),
        "high": min(1.0, mean + half),
        "margin": statistics.fmean(r[1] for r in rows),
        "seconds_per_game": statistics.fmean(r[2] for r in rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--agents", nargs="*", default=DEFAULT_AGENTS)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    header = f"{'agent':44} {'vs':7} {'score':>6}  {'95% interval':15} {'margin':>7} {'s/game':>7}"
    print(header)
    with ProcessPoolExecutor(args.workers) as pool:
        for tested in ["random", *args.agents]:
            for baseline in BASELINES:
                row = measure(tested, baseline, args.games, args.seed, pool)
                rows.append(row)
                print(
                    f"{tested:44} {baseline:7} {row['score']:6.3f}  "
                    f"[{row['low']:.3f}, {row['high']:.3f}] {row['margin']:7.1f} "
                    f"{row['seconds_per_game']:7.3f}",
                    flush=True,
                )
    elapsed = time.perf_counter() - started
    print(f"{len(rows) * args.games} games in {elapsed:.0f} s with {args.workers} workers")
    RESULTS.mkdir(exist_ok=True)
    out = {"games_per_pairing": args.games, "seed": args.seed, "seconds": elapsed, "rows": rows}
    (RESULTS / "alveoles_ladder.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
