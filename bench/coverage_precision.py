"""Coverage of the precision stop's interval under its own optional stopping.

    .venv/bin/python -m bench.coverage_precision                  # 500 batches per row
    .venv/bin/python -m bench.coverage_precision --replicates 300

A precision stop (``analysis.precision``) ends a batch at the first check where the figure's
interval is no wider than ± ``half_width`` over at least ``min_units`` units. The stop looks at
the interval's width, not its centre, but the width depends on the estimate (a share's variance
is p(1 − p)), so the interval at the stop is not quite the fixed-sample one. Each row simulates
batches of ``bench.coverage``'s generators up to ``MAX_MATCHES``, checks after every ``CHUNK``
matches (whole rounds) with the check's own function (``precision.figure_interval`` on
``precision.whole_rounds``), and counts how often the first-player advantage's interval at the
stop holds the truth; batches that never reach the precision count apart (``unreached``).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from analysis.precision import figure_interval, whole_rounds
from analysis.stopping import FIRST_PLAYER, PrecisionRule
from analysis.tidy import Wide
from bench.coverage import ROUND, Scenario, simulate

CHUNK = 24
"""Matches between two checks: whole rounds of one, two and six matches."""
MAX_MATCHES = 4_800
ROWS: tuple[tuple[Scenario, float, int], ...] = (
    (Scenario("independent, draws", MAX_MATCHES, (0.53, 0.47), draw=0.35), 0.03, 30),
    (Scenario("independent", MAX_MATCHES, (0.55, 0.45)), 0.05, 30),
    (Scenario("rounds sharing an opening", MAX_MATCHES, (0.4, 0.33, 0.27), round_effect=0.15),
     0.04, 30),
    (Scenario("noise, coincident openings", MAX_MATCHES, (0.55, 0.45), coincident=4), 0.02, 30),
)  # fmt: skip
"""(generator, half_width, min_units) of each row."""


def prefix(w: Wide, matches: int) -> Wide:
    """The first ``matches`` matches of ``w``."""
    k = slice(0, matches)
    return replace(w, match_index=w.match_index[k], win=w.win[k], points=w.points[k],
                   agent=w.agent[k], first_seat=w.first_seat[k], unit=w.unit[k])  # fmt: skip


def stopped_interval(w: Wide, rule: PrecisionRule, round_size: int) -> tuple[float, ...] | None:
    """(low, high, matches) of the figure at the first check that reaches the rule, or None."""
    for stop in range(CHUNK, w.matches + 1, CHUNK):
        seen = whole_rounds(prefix(w, stop), round_size)
        _, low, high, units = figure_interval(seen, rule, "balanced", [0])
        if units >= rule.min_units and (high - low) / 2 <= rule.half_width:
            return (low, high, float(stop))
    return None


def coverage(sc: Scenario, half_width: float, min_units: int, replicates: int, seed: int
             ) -> dict[str, Any]:  # fmt: skip
    """Share of stopped batches whose interval holds the truth, and where they stopped."""
    rule = PrecisionRule(FIRST_PLAYER, half_width, min_units)
    truth = float(sc.share_by_position()[0] - 1 / sc.players)
    round_size = ROUND if sc.round_effect else 1
    rng = np.random.default_rng(seed)
    hits = reached = 0
    stops: list[float] = []
    for _ in range(replicates):
        found = stopped_interval(simulate(sc, rng), rule, round_size)
        if found is None:
            continue
        low, high, at = found
        reached += 1
        hits += low <= truth <= high
        stops.append(at)
    rate = hits / reached if reached else math.nan
    return {"scenario": sc.name, "players": sc.players, "half_width": half_width,
            "min_units": min_units, "replicates": replicates, "coverage": rate,
            "mc_error": math.sqrt(rate * (1 - rate) / reached) if reached else math.nan,
            "unreached": 1 - reached / replicates,
            "median_stop": float(np.median(stops)) if stops else math.nan}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=500)
    parser.add_argument("--seed", type=int, default=28)
    args = parser.parse_args(argv)
    print("| generator | seats | ±H | least units | coverage | MC error | unreached "
          "| median stop |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for i, (sc, half, least) in enumerate(ROWS):
        r = coverage(sc, half, least, args.replicates, args.seed + i)
        print(f"| {r['scenario']} | {r['players']} | {half:g} | {least} | "
              f"{100 * r['coverage']:.1f} % | ±{100 * r['mc_error']:.1f} | "
              f"{100 * r['unreached']:.1f} % | {r['median_stop']:,.0f} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
