"""Strength ladder: each level of a game against the one below, seat-rotated.

    .venv/bin/python -m bench.ladder                      # Alquerque: random < easy < medium < hard
    .venv/bin/python -m bench.ladder --games 400 --workers 2
    .venv/bin/python -m bench.ladder --pair hard:medium --games 200

Agent A (the stronger one expected) sits in seat 0 in even matches and seat 1 in odd ones.
For each pair it prints A's score (wins + half draws) with a 95 % interval (normal
approximation on the per-game scores), the Elo difference with the interval mapped through the
logistic curve, draws, mean plies and seconds per move. The baseline of each rung is the level
below, played in the same run. Results go to ``bench/results/ladder.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from analysis import stats
from engines.core import agent_rng, match_seed, play_match
from engines.registry import load_game, make_agent, spec_from_text

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_LADDER = {"alquerque": ["random", "easy", "medium", "hard"]}


def play_one(game_name: str, a: str, b: str, batch_seed: int, index: int) -> dict[str, Any]:
    """Match ``index`` of the pairing: A's score and point margin, plies, ending, timings."""
    game = load_game(game_name)
    seed = match_seed(batch_seed, index)
    a_seat = index % 2
    specs = [a, b] if a_seat == 0 else [b, a]
    agents = [make_agent(game, spec_from_text(s), agent_rng(seed, i)) for i, s in enumerate(specs)]
    result = play_match(game, agents, seed, labels=specs)
    return {
        "score": result.returns[a_seat],
        "margin": result.scores[a_seat] - result.scores[1 - a_seat],
        "plies": result.plies,
        "ended_by": result.ended_by,
        "seconds": result.duration,
        "seconds_per_ply": result.duration / max(result.plies, 1),
    }


def summarise(a: str, b: str, games: list[dict[str, Any]]) -> dict[str, Any]:
    """A's score against B with its 95 % interval, the Elo difference, and how games went."""
    scores = np.array([g["score"] for g in games], dtype=float)
    n = int(scores.size)
    mean = float(scores.mean())
    variance = float(scores.var(ddof=1)) if n > 1 else 0.0
    low, high = stats.score_interval(mean, variance, n)
    low, high = max(0.0, low), min(1.0, high)
    elo, elo_low, elo_high = stats.elo_with_interval(mean, variance, n)
    endings: dict[str, int] = {}
    for g in games:
        endings[g["ended_by"]] = endings.get(g["ended_by"], 0) + 1
    return {
        "a": a,
        "b": b,
        "games": n,
        "wins": int((scores == 1.0).sum()),
        "draws": int((scores == 0.5).sum()),
        "losses": int((scores == 0.0).sum()),
        "score": mean,
        "score_95": [low, high],
        "elo": elo,
        "elo_95": [elo_low, elo_high],
        "beats_below": low > 0.5,
        "margin": statistics.fmean(g["margin"] for g in games),
        "mean_plies": statistics.fmean(g["plies"] for g in games),
        "ended_by": endings,
        "seconds_per_game": statistics.fmean(g["seconds"] for g in games),
        "seconds_per_ply": statistics.fmean(g["seconds_per_ply"] for g in games),
    }


def run_pair(
    game: str, a: str, b: str, games: int, seed: int, pool: ProcessPoolExecutor
) -> dict[str, Any]:
    started = time.perf_counter()
    futures = [pool.submit(play_one, game, a, b, seed, i) for i in range(games)]
    summary = summarise(a, b, [f.result() for f in futures])
    summary["wall_seconds"] = time.perf_counter() - started
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="alquerque")
    parser.add_argument("--pair", action="append", help="A:B, e.g. hard:medium (repeatable)")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--out", help="results file name (default ladder_<game>.json)")
    args = parser.parse_args(argv)
    if args.pair:
        pairs = [tuple(p.split(":", 1)) for p in args.pair]
    else:
        levels = DEFAULT_LADDER[args.game]
        pairs = [(levels[i + 1], levels[i]) for i in range(len(levels) - 1)]
    rows = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for a, b in pairs:
            row = run_pair(args.game, a, b, args.games, args.seed, pool)
            rows.append(row)
            print(
                f"{a:>8} vs {b:<8} n={row['games']}  W/D/L {row['wins']}/{row['draws']}/"
                f"{row['losses']}  score {row['score']:.3f} "
                f"[{row['score_95'][0]:.3f}, {row['score_95'][1]:.3f}]  "
                f"Elo {row['elo']:+.0f} [{row['elo_95'][0]:+.0f}, {row['elo_95'][1]:+.0f}]  "
                f"plies {row['mean_plies']:.1f}  {1000 * row['seconds_per_ply']:.1f} ms/ply  "
                f"{'OK' if row['beats_below'] else 'NOT SEPARATED'}",
                flush=True,
            )
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / (args.out or f"ladder_{args.game}.json")
    out.write_text(json.dumps({"game": args.game, "seed": args.seed, "pairs": rows}, indent=2))
    print(f"written {out}")


if __name__ == "__main__":
    main()
