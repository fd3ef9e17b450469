"""Coverage and width of the SPRT's stop-adjusted Elo interval (``analysis.sprt_estimate``).

    .venv/bin/python -m bench.sprt_interval                      # 1,000 tests per case
    .venv/bin/python -m bench.sprt_interval --replicates 200 --case power

Each simulated batch plays seat-swapped pairs of games between two agents whose true Elo
difference is the case's ``truth``; a game is drawn with probability ``draw`` and otherwise won
with the logistic chances that give the truth its expected score. The batch checks its
generalised SPRT after every chunk of ``chunk`` pairs, as the workers do, on the pentanomial
counts (``analysis.sprt.llr``), and stops at the first bound crossed; then the stop-adjusted
estimate is computed from the counts as the report computes it. Printed per case: how often the
95 % interval held the truth, its median width, how many lower ends fell below the truth's
side of 0, the median-unbiased estimate's share above the truth (½ when it is
median-unbiased), and the mean bias of the fixed-sample and the bias-adjusted estimates.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from analysis import sprt, stats
from analysis.sprt_estimate import StoppedEstimate, stopping_aware_elo

MAX_PAIRS = 20_000
"""A test still running after this many pairs is left out (none reached it in the cases)."""


@dataclass(frozen=True)
class Case:
    """One simulated design: the truth, the rule and how often it is checked."""

    name: str
    truth: float
    elo0: float
    elo1: float
    draw: float
    chunk: int
    alpha: float = 0.05
    beta: float = 0.05


CASES = (
    # A clear difference tested against a small one: stops on the first chunks with H1.
    Case("power", truth=150.0, elo0=0.0, elo1=10.0, draw=0.3, chunk=20),
    # Equal agents: mostly H0, the rest false H1.
    Case("null", truth=0.0, elo0=0.0, elo1=30.0, draw=0.3, chunk=10),
    # A truth between the hypotheses: long tests ending either way.
    Case("between", truth=15.0, elo0=0.0, elo1=30.0, draw=0.3, chunk=10),
    # One side nearly never loses a pair (the audit's case: 159 pairs, no loss).
    Case("lopsided", truth=380.0, elo0=0.0, elo1=5.0, draw=0.18, chunk=20),
)


def pair_chances(truth: float, draw: float) -> np.ndarray:
    """The pentanomial chances of a pair's half-points 0..4 when each game is drawn with
    probability ``draw`` and otherwise won with the chance giving an expected score of the
    truth's."""
    score = stats.score_from_elo(truth)
    win = score - draw / 2
    if not 0 <= win <= 1 - draw:
        raise ValueError(f"truth {truth} Elo is unreachable with {draw:.0%} draws")
    game = np.array([1 - draw - win, draw, win])  # half-points 0, 1, 2
    return np.convolve(game, game)


@dataclass(frozen=True)
class Stopped:
    """One simulated test at its stop."""

    counts: np.ndarray
    llr: float
    estimate: StoppedEstimate


def run_test(case: Case, rng: np.random.Generator) -> Stopped | None:
    """One batch of ``case`` run to its stop (None past ``MAX_PAIRS``)."""
    chances = pair_chances(case.truth, case.draw)
    values = stats.PENTANOMIAL_VALUES
    s0, s1 = stats.score_from_elo(case.elo0), stats.score_from_elo(case.elo1)
    lower, upper = sprt.bounds(case.alpha, case.beta)
    counts = np.zeros(5)
    while counts.sum() < MAX_PAIRS:
        counts += rng.multinomial(case.chunk, chances)
        llr = sprt.llr(counts, values, s0, s1)
        if not lower < llr < upper:
            found = stopping_aware_elo(counts, values, case.elo0, case.elo1, (lower, upper), llr)
            return Stopped(counts, llr, found)
    return None


def measure(case: Case, replicates: int, seed: int) -> dict[str, Any]:
    """Coverage, widths and the estimate's balance over ``replicates`` tests of ``case``."""
    rng = np.random.default_rng(seed)
    runs = [run_test(case, rng) for _ in range(replicates)]
    done = [r for r in runs if r is not None]
    low = np.array([r.estimate.elo_low for r in done])
    high = np.array([r.estimate.elo_high for r in done])
    median = np.array([r.estimate.elo_median for r in done])
    adjusted = np.array([r.estimate.elo for r in done])
    values = stats.PENTANOMIAL_VALUES
    fixed = np.array([stats.elo_from_score(float(r.counts @ values / r.counts.sum()))
                      for r in done])  # fmt: skip
    covered = (low <= case.truth) & (case.truth <= high)
    inside = (low <= median) & (median <= high)
    width = high - low
    wrong_side = low < 0 if case.truth > 0 else high > 0 if case.truth < 0 else np.zeros(0)
    return {
        "case": case.name,
        "truth": case.truth,
        "tests": len(done),
        "pairs_median": float(np.median([r.counts.sum() for r in done])),
        "coverage": float(covered.mean()),
        "coverage_se": math.sqrt(0.95 * 0.05 / len(done)),
        "width_median": float(np.median(width)),
        "width_90th": float(np.quantile(width, 0.9)),
        "estimate_inside": float(inside.mean()),
        "wrong_side_of_zero": float(np.mean(wrong_side)) if wrong_side.size else None,
        "median_above_truth": float((median > case.truth).mean()),
        "fixed_sample_bias": _finite_mean(fixed) - case.truth,
        "bias_adjusted_bias": _finite_mean(adjusted) - case.truth,
        "bias_adjusted_se": float(np.std(adjusted[np.isfinite(adjusted)]) / math.sqrt(len(done))),
    }


def _finite_mean(x: np.ndarray) -> float:
    """The mean of the finite values (an Elo of a score of 0 or 1 is infinite)."""
    return float(np.mean(x[np.isfinite(x)]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--case", choices=[c.name for c in CASES], action="append")
    args = parser.parse_args(argv)
    for i, case in enumerate(CASES):
        if args.case and case.name not in args.case:
            continue
        print(json.dumps(measure(case, args.replicates, args.seed + i)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
