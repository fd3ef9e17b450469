"""Coverage of the agent-strength and tier intervals on generators with known truth.

    .venv/bin/python -m bench.coverage_agents                       # 2,000 replicates a case
    .venv/bin/python -m bench.coverage_agents --replicates 300 --sizes 20,40 --only tiers

Each case simulates whole batches whose answer is known, runs the report's own function on
them (``analysis.agents.pairings`` and ``agent_table``, ``analysis.strengths.strengths``,
``analysis.games.alveoles.deciding_tiers``, with units of sampling made by
``analysis.units.sampling_units`` as ``build_report`` makes them) and counts how often the
reported 95 % interval holds the truth. A replicate without an interval (too few units) is not
counted as covered: ``coverage`` is over the replicates that gave one, and ``no_interval`` is
the share that gave none.

Generators (n matches each, n = 10, 20, 40, 300):

- ``pairing``: two agents in seat-swapped pairs, agent a ``ELO`` stronger, seat 0 worth
  ``SEAT_ELO`` more, draws ``DRAW``; truth: Elo of a's expected score over both seats.
- ``field``: three agents of Elo 100, 0, −100 (Luce's choice of one winner, seat 0 worth
  ``SEAT_ELO``), balanced seating; truth: the first agent's expected field score (a seat
  against each other seat of its match: win 1, loss 0, both lost ½) averaged over the design.
- ``strengths``: the same three (or four) agents; truth: the Bradley–Terry fit to the expected
  comparison counts of the design (what the report's fit estimates), for the first agent.
- ``tiers``: Les Alvéoles' tier of 4 squares, each going to the (uniformly drawn) winner with
  probability ``TIER_Q``, else to a loser at random; truth: winners' mean share − losers' =
  q − (1 − q)/(n − 1), with 2 and 3 players.

Each runs ``independent`` (every round its own opening) and ``clustered``: rounds (a pair of
matches with two players, 6 with three, 12 with four) draw one of max(3, rounds/4) openings,
each opening giving the first agent an Elo offset drawn from N(0, ``TAU``²) and replaying its
games exactly (deterministic players); truths then average over the offsets (Gauss–Hermite
quadrature). Tier matches cluster by groups of 5 identical replays. The pairing also runs on
``12 unequal openings``: every pair draws one of twelve openings with frequencies 0.6^k
(normalised: 40 %, 24 %, 14 %, …), each with its own effect, replayed exactly. Fewer than 3
units (or, for strengths, fewer units than players) give no interval: with three players, 10
matches are two rounds, and with four, 20 matches are two.

``agent_interval_cases(sizes)`` returns the cases as ``(name, simulate, truth)``:
``simulate(rng)`` plays one batch and returns the reported interval ``(low, high)`` (NaN when
there is none), ``truth`` the value it should hold; another coverage runner can import it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections.abc import Callable, Sequence

import choix
import numpy as np

from analysis import stats
from analysis.agents import agent_table, pairings
from analysis.games.alveoles import AlveolesData, deciding_tiers
from analysis.strengths import ELO_PER_NAT, strengths
from analysis.tidy import Wide
from analysis.units import sampling_units
from engines.seating import opening_round, seat_agents

Interval = tuple[float, float]
Case = tuple[str, Callable[[np.random.Generator], Interval], float]

ELO, SEAT_ELO, DRAW, TAU = 100.0, 50.0, 0.1, 120.0
FIELD_ELOS = (100.0, 0.0, -100.0)
TIER_Q, TIER_SQUARES, REPLAYS = 0.6, 4, 5
SIZES = (10, 20, 40, 300)
NODES, WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
WEIGHTS = WEIGHTS / WEIGHTS.sum()
"""Quadrature over a standard normal offset."""


UNEQUAL = 0.6 ** np.arange(12) / (0.6 ** np.arange(12)).sum()
"""Frequencies of the twelve openings of the ``unequal`` generator: 40 %, 24 %, 14 %, … 0.1 %."""


def _openings(rng: np.random.Generator, rounds: int, clustered: bool | str) -> np.ndarray:
    """Opening of each round: its own, one of max(3, rounds/4) shared ones, or (``unequal``)
    one of twelve drawn with the very unequal frequencies ``UNEQUAL``."""
    if clustered == "unequal":
        return rng.choice(UNEQUAL.size, size=rounds, p=UNEQUAL)
    if not clustered:
        return np.arange(rounds)
    return rng.integers(0, max(3, rounds // 4), rounds)


def _wide(win: np.ndarray, agent: np.ndarray, opening: np.ndarray, round_size: int) -> Wide:
    m = win.shape[0]
    index = np.arange(m, dtype=np.int64)
    # Shared openings replay their games exactly: a book declared a sample of openings
    # (``units: "line"``), so matches of one opening form one unit.
    units = sampling_units(index, opening.astype(float), round_size, by_opening=True)
    labels = tuple(f"agent{i}" for i in range(int(agent.max()) + 1))
    return Wide(index, win, np.zeros_like(win), agent, labels, unit=units.label, units=units)


def _ends(low: float, high: float) -> Interval:
    return (float(low), float(high))


# --------------------------------------------------------------------------- two agents


def _result(rng: np.random.Generator, score: np.ndarray) -> np.ndarray:
    """A game's result (1, ½, 0) for expected scores ``score``, with draws ``DRAW``."""
    u = rng.random(score.shape)
    win = score - DRAW / 2
    return np.where(u < win, 1.0, np.where(u < win + DRAW, 0.5, 0.0))


def pairing_case(n: int, clustered: bool | str) -> Case:
    """Elo of a against b from seat-swapped pairs (see the module docstring)."""
    offsets = TAU * NODES if clustered else np.zeros(1)
    weights = WEIGHTS if clustered else np.ones(1)
    mean = stats.score_from_elo
    truth_score = sum(
        w * (mean(ELO + SEAT_ELO + u) + mean(ELO - SEAT_ELO + u)) / 2
        for u, w in zip(offsets, weights, strict=True)
    )

    def simulate(rng: np.random.Generator) -> Interval:
        pairs = n // 2
        opening = _openings(rng, pairs, clustered)
        shift = rng.normal(0.0, TAU, int(opening.max()) + 1) if clustered else np.zeros(pairs)
        # a's results in seat 0 and seat 1 on each opening (replayed exactly when shared).
        first = _result(rng, 1 / (1 + 10 ** (-(ELO + SEAT_ELO + shift) / 400)))[opening]
        second = _result(rng, 1 / (1 + 10 ** (-(ELO - SEAT_ELO + shift) / 400)))[opening]
        win = np.empty((2 * pairs, 2))
        win[0::2, 0], win[0::2, 1] = first, 1 - first
        win[1::2, 0], win[1::2, 1] = 1 - second, second
        agent = np.tile([[0, 1], [1, 0]], (pairs, 1))
        row = pairings(_wide(win, agent, np.repeat(opening, 2), 2), "balanced").iloc[0]
        return _ends(row["elo_low"], row["elo_high"])

    kind = "12 unequal openings" if clustered == "unequal" else (
        "clustered" if clustered else "independent")  # fmt: skip
    return (f"pairing Elo, 2 players, {kind}", simulate, stats.elo_from_score(truth_score))


# --------------------------------------------------------------------------- three or more


def _win_chances(elos: Sequence[float], order: Sequence[int]) -> np.ndarray:
    """Luce's chance of each seat winning, agent ``order[s]`` in seat s (seat 0 favoured)."""
    strength = np.array([10 ** ((elos[a] + (SEAT_ELO if s == 0 else 0.0)) / 400)
                         for s, a in enumerate(order)])  # fmt: skip
    return strength / strength.sum()


def _design(players: int) -> list[list[int]]:
    size = opening_round(players, "balanced")
    return [seat_agents(players, "balanced", i) for i in range(size)]


def _expected_comparisons(elos: Sequence[float], shifts: np.ndarray, weights: np.ndarray
                          ) -> np.ndarray:  # fmt: skip
    """Expected comparison matrix per match over the design (shift added to agent 0)."""
    k = len(elos)
    design = _design(k)
    comp = np.zeros((k, k))
    for u, w in zip(shifts, weights, strict=True):
        shifted = [elos[0] + u, *elos[1:]]
        for order in design:
            p = _win_chances(shifted, order)
            for s, t in itertools.permutations(range(k), 2):
                a, b = order[s], order[t]
                comp[a, b] += w * (p[s] + 0.5 * (1 - p[s] - p[t])) / len(design)
    return comp


def _multi_batch(rng: np.random.Generator, n: int, elos: Sequence[float], clustered: bool
                 ) -> Wide:  # fmt: skip
    """n matches of len(elos) agents seated by the balanced design, one winner a match."""
    k = len(elos)
    size = opening_round(k, "balanced")
    rounds = -(-n // size)
    opening = _openings(rng, rounds, clustered)
    shift = rng.normal(0.0, TAU, int(opening.max()) + 1) if clustered else np.zeros(rounds)
    # Each opening's results are drawn once, so rounds sharing an opening replay them.
    draws = rng.random((int(opening.max()) + 1, size))
    order = np.array([seat_agents(k, "balanced", i) for i in range(n)])
    win = np.zeros((n, k))
    for i in range(n):
        r = i // size
        chances = _win_chances([elos[0] + shift[opening[r]], *elos[1:]], order[i])
        win[i, int(np.searchsorted(np.cumsum(chances), draws[opening[r], i % size]))] = 1.0
    return _wide(win, order, np.repeat(opening, size)[:n], size)


def field_case(n: int, clustered: bool) -> Case:
    """The first agent's field score, three agents (see the module docstring)."""
    offsets = TAU * NODES if clustered else np.zeros(1)
    weights = WEIGHTS if clustered else np.ones(1)
    comp = _expected_comparisons(FIELD_ELOS, offsets, weights)
    truth = stats.elo_from_score(comp[0].sum() / (len(FIELD_ELOS) - 1))

    def simulate(rng: np.random.Generator) -> Interval:
        w = _multi_batch(rng, n, FIELD_ELOS, clustered)
        row = agent_table(w, "balanced").iloc[0]
        return _ends(row["elo_low"], row["elo_high"])

    kind = "clustered" if clustered else "independent"
    return (f"field Elo, 3 players, {kind}", simulate, truth)


def strengths_case(n: int, players: int, clustered: bool) -> Case:
    """The first agent's Bradley–Terry strength (see the module docstring)."""
    elos = (*FIELD_ELOS, 50.0)[:players]
    offsets = TAU * NODES if clustered else np.zeros(1)
    weights = WEIGHTS if clustered else np.ones(1)
    comp = _expected_comparisons(elos, offsets, weights)
    theta = np.asarray(choix.ilsr_pairwise_dense(comp * 1e6, alpha=0.0))
    truth = float((theta[0] - theta.mean()) * ELO_PER_NAT)

    def simulate(rng: np.random.Generator) -> Interval:
        row = strengths(_multi_batch(rng, n, elos, clustered)).iloc[0]
        return _ends(row["ci_low"], row["ci_high"])

    kind = "clustered" if clustered else "independent"
    return (f"strength, {players} players, {kind}", simulate, truth)


# --------------------------------------------------------------------------- tiers


def tiers_case(n: int, players: int, clustered: bool) -> Case:
    """Winners' minus losers' share of a tier (see the module docstring)."""
    truth = TIER_Q - (1 - TIER_Q) / (players - 1)

    def simulate(rng: np.random.Generator) -> Interval:
        distinct = -(-n // REPLAYS) if clustered else n
        winner = rng.integers(0, players, distinct)
        to_winner = rng.random((distinct, TIER_SQUARES)) < TIER_Q
        loser = (winner[:, None] + rng.integers(1, players, (distinct, TIER_SQUARES))) % players
        owner = np.where(to_winner, winner[:, None], loser)
        squares = np.stack([(owner == s).sum(axis=1) for s in range(players)], axis=1)
        pick = np.repeat(np.arange(distinct), REPLAYS)[:n] if clustered else np.arange(n)
        win = np.zeros((distinct, players))
        win[np.arange(distinct), winner] = 1.0
        data = AlveolesData(
            tiers=(50,),
            squares=squares[pick][:, :, None].astype(float),
            bonuses=np.zeros((n, players, 3)),
            replays=np.zeros((n, players)),
            owners=np.full((n, 64), -1),
            rows=np.arange(n),
        )
        agent = np.tile(np.arange(players), (n, 1))
        w = _wide(win[pick], agent, pick, 1)
        row = deciding_tiers(data, w)[0]
        return _ends(row["ci_low"], row["ci_high"])

    kind = f"clustered ({REPLAYS} replays)" if clustered else "independent"
    return (f"tiers, {players} players, {kind}", simulate, truth)


# --------------------------------------------------------------------------- running


def agent_interval_cases(sizes: Sequence[int] = SIZES, unequal: bool = True) -> list[Case]:
    """Every case at every size (names end with ``n=<size>``); ``unequal`` adds the pairing on
    twelve openings of very unequal frequencies."""
    out: list[Case] = []
    for n in sizes:
        for clustered in (False, True):
            made = [
                pairing_case(n, clustered),
                field_case(n, clustered),
                strengths_case(n, 3, clustered),
                strengths_case(n, 4, clustered),
                tiers_case(n, 2, clustered),
                tiers_case(n, 3, clustered),
            ]
            out.extend((f"{name}, n={n}", sim, truth) for name, sim, truth in made)
        if unequal:
            name, sim, truth = pairing_case(n, "unequal")
            out.append((f"{name}, n={n}", sim, truth))
    return out


def coverage(case: Case, replicates: int, seed: int) -> dict[str, float | str | int]:
    """Coverage of one case: share covered, its Monte-Carlo error, share without interval."""
    name, simulate, truth = case
    rng = np.random.default_rng(seed)
    covered = missing = 0
    for _ in range(replicates):
        low, high = simulate(rng)
        if math.isnan(low) or math.isnan(high):
            missing += 1
        else:
            covered += low <= truth <= high
    given = replicates - missing
    share = covered / given if given else math.nan
    return {
        "case": name,
        "truth": truth,
        "replicates": replicates,
        "coverage": share,
        "mc_error": math.sqrt(share * (1 - share) / given) if given else math.nan,
        "no_interval": missing / replicates,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--only", default="", help="keep cases whose name contains this text")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--json", action="store_true", help="print JSON lines instead")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    cases = [c for c in agent_interval_cases(sizes) if args.only in c[0]]
    if not args.json:
        print("| case | coverage | MC error | no interval |\n|---|---|---|---|")
    for i, case in enumerate(cases):
        row = coverage(case, args.replicates, args.seed + i)
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"| {row['case']} | {100 * float(row['coverage']):.1f} % | "
                  f"±{100 * float(row['mc_error']):.1f} | "
                  f"{100 * float(row['no_interval']):.1f} % |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
