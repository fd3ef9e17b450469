"""The small-sample rule of intervals over units, chosen by coverage and width.

    .venv/bin/python -m bench.small_sample_rule                   # 2,000 batches per size

Two agents in seat-swapped pairs (``bench.coverage_agents``' pairing: a is ``ELO`` stronger,
seat 0 worth ``SEAT_ELO``, draws ``DRAW``); every pair draws one of twelve openings with the
very unequal frequencies ``UNEQUAL`` (40 %, 24 %, 14 %, …), each opening with its own Elo
offset for a, N(0, ``TAU``²), replayed exactly, so the openings are the units. On each batch
a's score over units gets the agent table's Wilson-type interval with an effective sample size
(``analysis.clustered``) under four rules for the variance and the degrees of freedom:

- ``CR1, t on G − 1``: what the agent figures used before one rule served all;
- ``CR1, t on Kish − 1``: the rule kept (``analysis.stats.unit_df``: Kish's effective units,
  (Σ size)² / Σ size², minus one);
- ``CR2, Bell–McCaffrey``: the bias-reduced variance (each unit's residual over
  √(1 − its share of the matches)) with Bell and McCaffrey's degrees of freedom for a mean,
  1 / (Σ p² + (Σ b)² − Σ b²), p a unit's share, b = p² / (1 − p) (G − 1 for equal units);
- ``CR1, Bell–McCaffrey``.

The truth is a's expected score over the openings' effects (Gauss–Hermite quadrature).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence

import numpy as np
from scipy import stats as sps

from analysis import stats
from analysis.clustered import wilson_effective
from bench.coverage_agents import ELO, NODES, SEAT_ELO, TAU, UNEQUAL, WEIGHTS, _result

RULES = ("CR1, t on G − 1", "CR1, t on Kish − 1", "CR2, Bell–McCaffrey", "CR1, Bell–McCaffrey")


def intervals(y: np.ndarray, n: np.ndarray) -> dict[str, tuple[float, float]]:
    """The score's interval under each rule, from unit totals ``y`` over sizes ``n``."""
    g, total = y.size, float(n.sum())
    mean = float(y.sum()) / total
    resid = y - mean * n
    p = n / total
    cr1 = g / (g - 1) * float((resid**2).sum()) / total**2
    cr2 = float((resid**2 / (1 - p)).sum()) / total**2
    b = p * p / (1 - p)
    bell_mccaffrey = 1.0 / float((p * p).sum() + b.sum() ** 2 - (b * b).sum())
    kish = total * total / float((n * n).sum()) - 1
    out = {}
    for name, variance, df in zip(
        RULES, (cr1, cr1, cr2, cr1), (g - 1, kish, bell_mccaffrey, bell_mccaffrey), strict=True
    ):
        alike = not variance > 1e-15 or not 0 < mean < 1
        n_eff = float(g) if alike else mean * (1 - mean) / variance
        out[name] = wilson_effective(mean, n_eff, float(sps.t.ppf(0.975, df)))
    return out


def measure(matches: int, replicates: int, seed: int) -> dict[str, tuple[float, float, float]]:
    """Per rule: coverage, its Monte-Carlo error and the mean width, over the batches with at
    least three units."""
    score = stats.score_from_elo
    truth = sum(w * (score(ELO + SEAT_ELO + u) + score(ELO - SEAT_ELO + u)) / 2
                for u, w in zip(TAU * NODES, WEIGHTS, strict=True))  # fmt: skip
    rng = np.random.default_rng(seed)
    hits = dict.fromkeys(RULES, 0)
    widths: dict[str, list[float]] = {r: [] for r in RULES}
    used = 0
    for _ in range(replicates):
        pairs = matches // 2
        opening = rng.choice(UNEQUAL.size, size=pairs, p=UNEQUAL)
        shift = rng.normal(0.0, TAU, UNEQUAL.size)
        first = _result(rng, 1 / (1 + 10 ** (-(ELO + SEAT_ELO + shift) / 400)))[opening]
        second = _result(rng, 1 / (1 + 10 ** (-(ELO - SEAT_ELO + shift) / 400)))[opening]
        labels, inverse = np.unique(opening, return_inverse=True)
        if labels.size < 3:
            continue
        used += 1
        y = np.bincount(inverse, weights=first + second)
        n = 2.0 * np.bincount(inverse)
        for name, (lo, hi) in intervals(y, n).items():
            hits[name] += lo <= truth <= hi
            widths[name].append(hi - lo)
    out = {}
    for name in RULES:
        rate = hits[name] / used
        out[name] = (rate, math.sqrt(rate * (1 - rate) / used), float(np.mean(widths[name])))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--sizes", default="40,300")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print("| matches | rule | coverage | MC error | mean width (score) |\n|---|---|---|---|---|")
    for m in (int(x) for x in args.sizes.split(",")):
        for name, (rate, error, wide) in measure(m, args.replicates, args.seed).items():
            print(f"| {m} | {name} | {100 * rate:.1f} % | ±{100 * error:.1f} | {wide:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
