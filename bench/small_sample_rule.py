"""The small-sample rule of intervals over units, chosen by coverage and width.

    .venv/bin/python -m bench.small_sample_rule                   # 2,000 batches per size

Two agents in seat-swapped pairs (``bench.coverage_agents``' pairing: a is ``ELO`` stronger,
seat 0 worth ``SEAT_ELO``, draws ``DRAW``); every pair draws one of twelve openings with the
very unequal frequencies ``UNEQUAL`` (40 %, 24 %, 14 %, …), each opening with its own Elo
offset for a, N(0, ``TAU``²), replayed exactly, so the openings are the units. On each batch
a's score over units gets the agent table's Wilson-type interval with an effective sample size
(``analysis.clustered``) under four rules for the variance and the degrees of freedom:

- ``CR1, t on G − 1``: what the agent figures used before one rule served all;
- ``CR1, t on Kish − 1``: Kish's effective units, (Σ size)² / Σ size², minus one (the rule
  before ``analysis.stats.unit_df`` took minus two);
- ``CR2, Bell–McCaffrey``: the bias-reduced variance (each unit's residual over
  √(1 − its share of the matches)) with Bell and McCaffrey's degrees of freedom for a mean,
  1 / (Σ p² + (Σ b)² − Σ b²), p a unit's share, b = p² / (1 − p) (G − 1 for equal units);
- ``CR1, Bell–McCaffrey``.

The truth is a's expected score over the openings' effects (Gauss–Hermite quadrature).

    .venv/bin/python -m bench.small_sample_rule --coverage-rows 1000

runs instead ``bench.coverage``'s failing rows (twelve unequal openings, 300 matches) and three
healthy ones under each of ``CANDIDATES`` (the core's variance and degrees of freedom replaced
while the report's own functions run) and prints coverage and mean width per figure.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
from scipy import stats as sps

from analysis import stats
from analysis.clustered import wilson_effective
from bench import coverage
from bench.coverage import JOINT, Scenario
from bench.coverage import measure as measure_coverage
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


# ------------------------------------------------------------ candidate rules on coverage rows
# Each candidate replaces the core's variance and degrees of freedom (and, for a least number of
# effective units, withholds the interval) while ``bench.coverage`` runs the report's own
# functions, so the rows measure the figures as a report gives them.

CANDIDATES = (
    "CR1, t on Kish − 1",
    "CR1, t on Kish − 2",
    "CR1, Bell–McCaffrey",
    "CR2, Bell–McCaffrey",
    "CR2, t on Kish − 1",
    "CR1, t on Kish − 1, none below 5 effective units",
)
FAILING = (
    Scenario("12 unequal openings", 300, (0.4, 0.33, 0.27), openings=12, unequal=True),
    Scenario("12 unequal openings", 300, (0.55, 0.45), openings=12, unequal=True),
)
HEALTHY = (
    Scenario("noise, coincident openings", 300, (0.55, 0.45), coincident=4),
    Scenario("rounds sharing an opening", 300, (0.4, 0.33, 0.27), round_effect=0.15),
    Scenario("6 openings", 40, (0.55, 0.45), openings=6),
)
ROWS = ("seat shares", JOINT, "mean points")


def _shares(n: np.ndarray) -> tuple[np.ndarray, float]:
    p = n / n.sum()
    return p, float(n.sum())


def bell_mccaffrey(n: np.ndarray) -> float:
    """Bell and McCaffrey's degrees of freedom for a mean over units of sizes ``n``."""
    p, _ = _shares(n)
    b = p * p / (1 - p)
    return 1.0 / float((p * p).sum() + b.sum() ** 2 - (b * b).sum())


@contextmanager
def candidate(name: str) -> Iterator[None]:
    """Run the report's functions with ``name``'s variance and degrees of freedom."""
    known: dict[stats.UnitSums, tuple[np.ndarray, np.ndarray]] = {}
    saved = {k: getattr(stats, k) for k in
             ("unit_sums", "totals_sums", "unit_df", "cluster_variance", "share_from_sums",
              "clustered_mean")}  # fmt: skip

    def unit_sums(values: np.ndarray, unit: np.ndarray | None = None) -> stats.UnitSums:
        s = saved["unit_sums"](values, unit)
        known[s] = stats.unit_totals(values, unit)
        return s

    def totals_sums(t: np.ndarray, n: np.ndarray) -> stats.UnitSums:
        s = saved["totals_sums"](t, n)
        keep = np.asarray(n) > 0
        known[s] = (np.asarray(t, float)[keep], np.asarray(n, float)[keep])
        return s

    def kish(s: stats.UnitSums) -> float:
        return s.matches * s.matches / s.unit_size_squares if s.unit_size_squares > 0 else 0.0

    def unit_df(s: stats.UnitSums) -> float:
        if s.units < 2:
            return 0.0
        if "Bell" in name and s in known:
            return bell_mccaffrey(known[s][1])
        if "Kish − 2" in name:
            return max(kish(s) - 2.0, 1.0)
        return kish(s) - 1.0

    def cluster_variance(s: stats.UnitSums) -> float:
        if "CR2" not in name or s not in known or s.units < 2:
            return saved["cluster_variance"](s)
        t, n = known[s]
        p, m = _shares(n)
        e = t - s.total / m * n
        return float((e * e / (1 - p)).sum()) / (m * m)

    active = [True]

    def withheld(s: stats.UnitSums) -> bool:
        return active[0] and "none below" in name and s.units >= 2 and kish(s) < 5

    def komi(w: Any) -> Any:
        # The komi searches over share intervals and is not among the rows compared here.
        active[0] = False
        try:
            return saved_komi(w)
        finally:
            active[0] = True

    def share_from_sums(s: stats.UnitSums, confidence: float = stats.CONFIDENCE) -> Any:
        u = saved["share_from_sums"](s, confidence)
        return replace(u, ci_low=math.nan, ci_high=math.nan) if withheld(s) else u

    def clustered_mean(values: np.ndarray, unit: np.ndarray | None = None) -> Any:
        u = saved["clustered_mean"](values, unit)
        s = saved["unit_sums"](values, unit)
        return replace(u, ci_low=math.nan, ci_high=math.nan) if withheld(s) else u

    patched = {"unit_sums": unit_sums, "totals_sums": totals_sums, "unit_df": unit_df,
               "cluster_variance": cluster_variance, "share_from_sums": share_from_sums,
               "clustered_mean": clustered_mean}  # fmt: skip
    saved_komi = coverage.fair_compensation
    try:
        for k, f in patched.items():
            setattr(stats, k, f)
        coverage.fair_compensation = komi
        yield
    finally:
        for k, f in saved.items():
            setattr(stats, k, f)
        coverage.fair_compensation = saved_komi


def coverage_rows(replicates: int) -> None:
    """Coverage and mean width of the failing and healthy rows under every candidate."""
    print("| design | seats | matches | rule | figure | coverage | MC error | no interval "
          "| mean width |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for sc in FAILING + HEALTHY:
        for name in CANDIDATES:
            with candidate(name):
                rows = measure_coverage(sc, replicates)
            for r in rows:
                if r["figure"] not in ROWS:
                    continue
                wide = r["mean_width"]
                print(
                    f"| {sc.name} | {sc.players} | {sc.matches} | {name} | {r['figure']} | "
                    f"{100 * r['coverage']:.1f} % | ±{100 * r['mc_error']:.1f} | "
                    f"{100 * r['no_interval']:.1f} % | "
                    + ("—" if wide is None else f"{wide:.3f}")
                    + " |",
                    flush=True,
                )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--sizes", default="40,300")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--coverage-rows",
        type=int,
        default=0,
        metavar="N",
        help="instead: the coverage bench's failing and healthy rows under every candidate, "
        "N replicates each",
    )
    args = parser.parse_args(argv)
    if args.coverage_rows:
        coverage_rows(args.coverage_rows)
        return 0
    print("| matches | rule | coverage | MC error | mean width (score) |\n|---|---|---|---|---|")
    for m in (int(x) for x in args.sizes.split(",")):
        for name, (rate, error, wide) in measure(m, args.replicates, args.seed).items():
            print(f"| {m} | {name} | {100 * rate:.1f} % | ±{100 * error:.1f} | {wide:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
