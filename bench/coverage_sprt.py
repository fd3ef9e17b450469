"""Error rates of the SPRT over units of sampling when openings favour one agent.

    .venv/bin/python -m bench.coverage_sprt                       # 1,000 tests per row
    .venv/bin/python -m bench.coverage_sprt --replicates 300 --every 3

Three agents (A, B, C) of equal Elo play rounds of the ``balanced`` design (six matches, every
seating once); seat 0 is worth ``SEAT_ELO``, and with probability ``DRAW`` a match is drawn
(every seat shares the win). Each round draws its own opening, and the opening favours A or B:
it adds ``u`` to A's Elo and takes ``u`` from B's, ``u`` ~ N(0, ``TAU``²), the same for the
round's six matches (deterministic players continuing one opening). A's score against B is then
½ averaged over openings, so a test of ``elo0 = 0`` against ``elo1 = ELO1`` run on it should
accept H1 no more often than its ``alpha`` (**false H1**); with A given the Elo that makes its
expected score that of ``ELO1`` (found by quadrature over ``u``), it should accept H0 no more
often than ``beta`` (**false H0**).

Each simulated batch is checked after every second round (``--every``: twelve matches between
checks, finer than the chunks a stop rule gets, at most 1 % of a batch) by the
project's own statistic (``analysis.sprt.unit_score_counts`` and ``sprt_state``: units are the
rounds) and, side by side on the same matches, by the statistic the check used before it
counted units: the trinomial over the individual meetings, each counted as independent.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import brentq

from analysis import sprt, stats
from analysis.stopping import SprtRule
from engines.seating import seat_agents

SEAT_ELO, DRAW, TAU = 50.0, 0.1, 150.0
ELO0, ELO1, ALPHA, BETA = 0.0, 30.0, 0.05, 0.05
MAX_ROUNDS = 3_000
"""A test still running after this many rounds counts as undecided (neither error)."""
ROUND = [seat_agents(3, "balanced", i) for i in range(6)]
"""The agents (0 = A, 1 = B, 2 = C) in seats 0, 1, 2 of each match of a round."""
NODES, WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
WEIGHTS = WEIGHTS / WEIGHTS.sum()
RULE = SprtRule(("A", "B"), elo0=ELO0, elo1=ELO1, alpha=ALPHA, beta=BETA)


def _win_chances(elo: np.ndarray) -> np.ndarray:
    """(rounds, 6, 3) chance that seat s wins match i, agents' Elos ``elo`` (rounds, 3)."""
    seated = elo[:, ROUND]  # (rounds, 6, 3): the Elo of the agent in each seat
    seated = seated + np.array([SEAT_ELO, 0.0, 0.0])
    strength = 10.0 ** (seated / 400.0)
    return np.asarray(strength / strength.sum(axis=2, keepdims=True))


def round_score(edge: float, shift: np.ndarray) -> np.ndarray:
    """A's expected score against B over a round, per opening shift ``shift``."""
    elo = np.stack([edge + shift, -shift, np.zeros_like(shift)], axis=1)
    p = _win_chances(elo)
    seat_a = np.array([order.index(0) for order in ROUND])
    seat_b = np.array([order.index(1) for order in ROUND])
    rows = np.arange(6)
    win_a, win_b = p[:, rows, seat_a], p[:, rows, seat_b]
    decided = win_a + 0.5 * (1 - win_a - win_b)
    return np.asarray((1 - DRAW) * decided.mean(axis=1) + DRAW * 0.5)


def edge_for(elo: float) -> float:
    """A's Elo edge over B whose expected score, over openings, is that of ``elo``."""
    target = stats.score_from_elo(elo)

    def gap(edge: float) -> float:
        return float(np.dot(WEIGHTS, round_score(edge, TAU * NODES))) - target

    return 0.0 if elo == 0 else float(brentq(gap, -400.0, 400.0, xtol=1e-9))


def play_rounds(rng: np.random.Generator, rounds: int, edge: float) -> np.ndarray:
    """(rounds, 6) A's half-points against B in each match of each round."""
    shift = rng.normal(0.0, TAU, rounds)
    elo = np.stack([edge + shift, -shift, np.zeros(rounds)], axis=1)
    cum = np.cumsum(_win_chances(elo), axis=2)
    winner = (rng.random((rounds, 6, 1)) > cum).sum(axis=2)  # the winning seat
    drawn = rng.random((rounds, 6)) < DRAW
    seat_a = np.array([order.index(0) for order in ROUND])
    seat_b = np.array([order.index(1) for order in ROUND])
    half = np.where(winner == seat_a, 2, np.where(winner == seat_b, 0, 1))
    return np.asarray(np.where(drawn, 1, half))


def run_test(half: np.ndarray, by_units: bool, every: int) -> str | None:
    """The decision of the SPRT checked every ``every`` rounds of ``half`` (rounds, 6)."""
    for stop in range(every, half.shape[0] + 1, every):
        seen = half[:stop]
        if by_units:
            model, values, counts = sprt.unit_score_counts(seen.sum(axis=1), np.full(stop, 6))
            state = sprt.sprt_state(counts, model, RULE, values)
        else:
            counts = np.bincount(seen.ravel(), minlength=3).tolist()
            state = sprt.sprt_state(counts, sprt.TRINOMIAL, RULE)
        if state["result"] is not None:
            return str(state["result"])
    return None


def error_rates(truth: float, replicates: int, seed: int, every: int = 1) -> dict[str, Any]:
    """Share of tests accepting the wrong hypothesis at a true Elo of ``truth`` (``ELO0`` or
    ``ELO1``), by units and by meetings, with their Monte-Carlo errors."""
    edge = edge_for(truth)
    wrong = "H1" if truth == ELO0 else "H0"
    rng = np.random.default_rng(seed)
    tally = {"units": 0, "meetings": 0}
    undecided = 0
    for _ in range(replicates):
        half = play_rounds(rng, MAX_ROUNDS, edge)
        by_units = run_test(half, True, every)
        undecided += by_units is None
        tally["units"] += by_units == wrong
        tally["meetings"] += run_test(half, False, every) == wrong
    out: dict[str, Any] = {"truth_elo": truth, "wrong": wrong, "replicates": replicates,
                           "undecided": undecided / replicates}  # fmt: skip
    for name, count in tally.items():
        rate = count / replicates
        out[name] = rate
        out[f"{name}_mc_error"] = math.sqrt(max(rate * (1 - rate), 1e-12) / replicates)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--every", type=int, default=2, help="rounds between two checks")
    args = parser.parse_args(argv)
    print("| truth | wrong decision | by units | by meetings (before) | undecided |")
    print("|---|---|---|---|---|")
    for i, truth in enumerate((ELO0, ELO1)):
        r = error_rates(truth, args.replicates, args.seed + i, args.every)
        print(f"| {truth:g} Elo | {r['wrong']} | {100 * r['units']:.2f} % "
              f"(±{100 * r['units_mc_error']:.2f}) | {100 * r['meetings']:.2f} % "
              f"(±{100 * r['meetings_mc_error']:.2f}) | {100 * r['undecided']:.1f} % |",
              flush=True)  # fmt: skip
        print(json.dumps(r), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
