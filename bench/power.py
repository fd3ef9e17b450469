"""What the first-player interval costs: its half-width against the binomial one, and against
the spread of the estimates across batches.

Two generators, both through the report's own functions (``seat_balance_wide``,
``first_player_advantage``) with units from ``analysis.units`` as a report makes them:

- ``noised``: self-play under player noise; each match draws its opening independently from
  40 openings of very unequal frequency (so equal openings are frequent), each opening moving
  the starting player's chance; the unit is the match (fixed seats: rounds of one).
- ``seat-swapped``: two agents of different strength in seat-swapped pairs (rounds of two),
  each pair drawing its own opening; pairing cancels the agents' difference out of the
  first-player figure, so its interval should be no wider than the estimates' spread.

    .venv/bin/python -m bench.power [--batches 400]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import stats as sps

from analysis.seats import first_player_advantage, seat_balance_wide
from analysis.tidy import Wide, by_turn
from analysis.units import sampling_units

OPENINGS = 40
FIRST = 0.556
"""The starting player's mean share in both generators."""


def noised(m: int, rng: np.random.Generator) -> Wide:
    weights = 1.0 / np.arange(1, OPENINGS + 1) ** 1.2
    weights /= weights.sum()
    effect = np.random.default_rng(7).normal(0, 0.12, OPENINGS)
    effect -= effect @ weights  # the mean over openings stays FIRST
    opening = rng.choice(OPENINGS, size=m, p=weights)
    first_wins = rng.random(m) < FIRST + effect[opening]
    win = np.stack([first_wins, ~first_wins], axis=1).astype(float)
    units = sampling_units(np.arange(m), opening, 1)
    agent = np.zeros((m, 2), np.int64)
    return Wide(np.arange(m), win, win.copy(), agent, ("a",), unit=units.label, units=units)


def swapped(m: int, rng: np.random.Generator, gap: float = 0.3) -> Wide:
    strong_first = np.arange(m) % 2 == 0
    p_first = np.where(strong_first, FIRST + gap, FIRST - gap)
    first_wins = rng.random(m) < p_first
    win = np.stack([first_wins, ~first_wins], axis=1).astype(float)
    agent = np.where(strong_first[:, None], [[0, 1]], [[1, 0]])
    units = sampling_units(np.arange(m), np.arange(m) // 2, 2)
    return Wide(np.arange(m), win, win.copy(), agent, ("s", "w"), unit=units.label, units=units)


def measure(make, m: int, batches: int, seed: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng([seed, m])
    halves, estimates, effects = [], [], []
    for _ in range(batches):
        w = make(m, rng)
        fpa = first_player_advantage(seat_balance_wide(by_turn(w)))
        halves.append((fpa["ci_high"] - fpa["ci_low"]) / 2)
        estimates.append(fpa["estimate"])
        effects.append(m / fpa["effective_n"])
    z = float(sps.norm.ppf(0.975))
    return {
        "half": float(np.mean(halves)),
        "binomial": z * math.sqrt(FIRST * (1 - FIRST) / m),
        "spread": z * float(np.std(estimates, ddof=1)),
        "deff": float(np.mean(effects)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=400)
    args = parser.parse_args(argv)
    print("| design | n | half-width | binomial half-width | ratio | 1.96 × sd of estimates | "
          "design effect |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name, make in (("noised", noised), ("seat-swapped", swapped)):
        for m in (300, 1_000, 3_000):
            r = measure(make, m, args.batches, 11)
            print(
                f"| {name} | {m:,} | {r['half']:.4f} | {r['binomial']:.4f} | "
                f"{r['half'] / r['binomial']:.2f} | {r['spread']:.4f} | {r['deff']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
