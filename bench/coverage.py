"""Coverage of every interval the report gives, on simulated batches with known truth.

Each scenario simulates whole batches (per-match win shares, points, starting seats and
openings, so units of sampling come from ``analysis.units`` exactly as in a report), runs the
project's own report functions on them (``seat_balance_wide``, ``first_player_advantage``,
``game_shape``, ``fair_compensation``, ``compare_wide``) and counts how often each 95 %
interval holds the truth. Generators:

- ``independent``: every match an independent draw: an outright winner by turn position with
  probabilities ``position_share``, or (``draw``) every seat sharing the win equally;
- ``openings=K``: K openings drawn afresh for each batch, each with one fixed outcome and one
  fixed set of points (deterministic continuation); every match plays one of them at random,
  so the truth is the expectation over openings, not the mean of the K in hand (a book
  declared a sample of openings, ``units: "line"``: matches of one opening are one unit);
- ``drawn_start``: the starting seat is drawn for each match (as Alhambra's), so seat index
  and turn position differ;
- ``pairs``: two agents of different strength in seat-swapped rounds of two;
- ``coincident=K``: every match an independent draw whose opening key is one of K values (the
  frequent equal openings of player noise), which must not join matches into units;
- ``round_effect``: rounds of ``ROUND`` matches share one drawn opening that favours the
  starting player or the second (units: the rounds);
- ``unequal``: the K openings drawn with the very unequal frequencies 0.6^k, each with its own
  fixed outcome (a book declared a sample of openings: units by opening).

A replicate where the report gives no interval (both ends null) is counted apart
(``no_interval``), never as covered; ``seat shares, all at once`` is covered only when every
seat's simultaneous interval (``joint_ci_low``/``joint_ci_high``) holds its truth.

Points are ``2 × win share + Binomial(20, ½) + turn position``, so mean points and the komi
have closed-form truths (points that jump by much more on a win are as skewed as the win
itself: see ``bench/README.md``). ``compare`` pits each batch against one of the same scenario
with the turn-position shares reversed. A null end of an interval counts as unbounded. The
fast subset in ``tests/project/test_bench_coverage.py`` runs the hardest rows with fewer replicates.

    .venv/bin/python -m bench.coverage                 # every row, 2,000 replicates
    .venv/bin/python -m bench.coverage --replicates 500 --only openings
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from analysis.compare import compare_wide
from analysis.compensation import fair_compensation
from analysis.seats import first_player_advantage, seat_balance_wide
from analysis.shape import game_shape
from analysis.tidy import Wide, by_turn
from analysis.units import sampling_units

RESULTS = Path(__file__).parent / "results"
REPLICATES = 2_000
SEED = 18
NOMINAL = 0.95
TARGET = 0.93
WIN_POINTS = 2
POINTS_SPREAD = 20
"""Points: ``WIN_POINTS × win share + Binomial(POINTS_SPREAD, ½) + turn position``."""
ROUND = 6
"""Matches in a round of the ``round_effect`` generator (three players seated ``balanced``)."""
JOINT = "seat shares, all at once"
"""The figure covered only when every seat's simultaneous interval holds its truth."""
EMPTY_PLIES = pd.DataFrame({"plies": np.zeros(0, np.int64), "count": np.zeros(0, np.int64)})
EMPTY_ENDED = pd.DataFrame({"ended_by": [], "count": np.zeros(0, np.int64)})


@dataclass(frozen=True)
class Scenario:
    """One simulated design; ``position_share`` sums to 1 (outright wins by turn position)."""

    name: str
    matches: int
    position_share: tuple[float, ...]
    draw: float = 0.0
    openings: int | None = None
    drawn_start: bool = False
    pairs: float | None = None
    """Two agents in seat-swapped pairs: the stronger one's extra chance to win outright."""
    coincident: int | None = None
    """Every match draws its outcome independently but its opening key from this many values:
    frequent equal openings that are not a cluster (player noise drawing alike by chance)."""
    round_effect: float | None = None
    """Rounds of ``ROUND`` matches share one drawn opening that moves the starting player's
    chance to win by ± this much (the second player's by the opposite)."""
    unequal: bool = False
    """``openings=K`` drawn with the very unequal frequencies 0.6^k (normalised)."""

    @property
    def players(self) -> int:
        return len(self.position_share)

    def reversed(self) -> Scenario:
        return replace(self, position_share=self.position_share[::-1])

    def share_by_position(self) -> np.ndarray:
        n = self.players
        return (1 - self.draw) * np.array(self.position_share) + self.draw / n

    def share_by_seat(self) -> np.ndarray:
        by_position = self.share_by_position()
        return np.full(self.players, by_position.mean()) if self.drawn_start else by_position

    def points_by_seat(self) -> np.ndarray:
        n = self.players
        by_position = WIN_POINTS * self.share_by_position() + POINTS_SPREAD / 2 + np.arange(n)
        return np.full(n, by_position.mean()) if self.drawn_start else by_position

    def komi(self) -> float:
        """Median of the starting player's minus the second's points (two players)."""
        p0, p1 = self.position_share
        d = self.draw
        noise = np.convolve(
            sps.binom.pmf(np.arange(POINTS_SPREAD + 1), POINTS_SPREAD, 0.5),
            sps.binom.pmf(np.arange(POINTS_SPREAD + 1), POINTS_SPREAD, 0.5)[::-1],
        )  # B0 − B1 on −POINTS_SPREAD … POINTS_SPREAD
        gaps: dict[float, float] = {}
        win = float(WIN_POINTS)
        for base, weight in ((win, (1 - d) * p0), (-win, (1 - d) * p1), (0.0, d)):
            for k, q in enumerate(noise):
                value = base + (k - POINTS_SPREAD) - 1.0  # position 1 gets one more point
                gaps[value] = gaps.get(value, 0.0) + weight * q
        values = np.array(sorted(gaps))
        cdf = np.cumsum([gaps[v] for v in values])
        j = int(np.searchsorted(cdf, 0.5))
        if math.isclose(float(cdf[j]), 0.5):
            raise ValueError(f"{self.name}: the komi's median is not unique")
        return float(values[j])


def simulate(sc: Scenario, rng: np.random.Generator) -> Wide:
    """One batch of ``sc`` as the report's per-match arrays, with units of sampling."""
    m, n = sc.matches, sc.players
    pi = np.array(sc.position_share)
    draws = m if sc.openings is None else sc.openings
    drawn = rng.random(draws) < sc.draw
    winner = rng.choice(n, size=draws, p=pi)
    noise = rng.binomial(POINTS_SPREAD, 0.5, size=(draws, n)).astype(float)
    if sc.round_effect is not None:
        # The round's opening favours the starting player or the second, by the same amount.
        sign = rng.choice([-1.0, 1.0], size=-(-m // ROUND))[np.arange(m) // ROUND]
        p = np.tile(pi, (m, 1))
        p[:, 0] += sc.round_effect * sign
        p[:, 1] -= sc.round_effect * sign
        winner = (rng.random((m, 1)) > np.cumsum(p, axis=1)).sum(axis=1).clip(0, n - 1)
    if sc.pairs is not None:
        # Agent 0 sits in seat 0 in even matches; it wins outright more often wherever it sits.
        strong_first = np.arange(m) % 2 == 0
        p_first = np.where(strong_first, pi[0] + sc.pairs, pi[0] - sc.pairs)
        winner = np.where(rng.random(m) < p_first, 0, 1)
    if sc.openings is None:
        opening = np.arange(m) // ROUND if sc.round_effect else np.arange(m)
    elif sc.unequal:
        frequency = 0.6 ** np.arange(sc.openings)
        opening = rng.choice(sc.openings, size=m, p=frequency / frequency.sum())
    else:
        opening = rng.integers(0, sc.openings, m)
    if sc.coincident is not None:
        opening = rng.integers(0, sc.coincident, m)
    if sc.openings is not None:
        drawn, winner, noise = drawn[opening], winner[opening], noise[opening]
    by_position = np.zeros((m, n))
    by_position[np.arange(m), winner] = 1.0
    by_position[drawn] = 1.0 / n
    points_by_position = WIN_POINTS * by_position + noise + np.arange(n)
    first = rng.integers(0, n, m) if sc.drawn_start else np.zeros(m, np.int64)
    position_of_seat = (np.arange(n)[None, :] - first[:, None]) % n
    rows = np.arange(m)[:, None]
    agent = np.zeros((m, n), np.int64)
    labels: tuple[str, ...] = ("a",)
    if sc.pairs is not None:
        agent = np.where(np.arange(m)[:, None] % 2 == 0, [[0, 1]], [[1, 0]])
        labels = ("strong", "weak")
    # K fixed openings replayed with a deterministic continuation is a book declared a sample
    # of openings (``units: "line"``): matches of one opening form one unit.
    size = 2 if sc.pairs is not None else ROUND if sc.round_effect else 1
    units = sampling_units(np.arange(m), opening, size, by_opening=sc.openings is not None)
    return Wide(
        match_index=np.arange(m, dtype=np.int64),
        win=by_position[rows, position_of_seat],
        points=points_by_position[rows, position_of_seat],
        agent=agent,
        labels=labels,
        first_seat=first.astype(np.int64),
        unit=units.label,
        units=units,
    )


Interval = tuple[float | None, float | None]


def given(interval: Interval) -> bool:
    """False when the report gave no interval at all (both ends null): counted apart, never as
    covered. An interval with one infinite end (an Elo at a clean sweep) is an interval."""
    lo, hi = interval
    return not all(x is None or not math.isfinite(x) for x in (lo, hi))


def covers(interval: Interval, truth: float) -> bool:
    lo, hi = interval
    lo = -math.inf if lo is None or not math.isfinite(lo) else lo
    hi = math.inf if hi is None or not math.isfinite(hi) else hi
    return lo - 1e-12 <= truth <= hi + 1e-12


def width(interval: Interval) -> float:
    lo, hi = interval
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return math.nan
    return hi - lo


@dataclass
class Tally:
    """Hits of one figure (per seat where it has several), over the replicates that gave an
    interval (``given``)."""

    hits: np.ndarray
    given: np.ndarray
    widths: list[float] = field(default_factory=list)

    def add(self, pairs: list[tuple[Interval, float]], joint: bool = False) -> None:
        shown = np.array([given(i) for i, _ in pairs])
        hit = np.array([given(i) and covers(i, t) for i, t in pairs])
        if joint:
            shown, hit = shown[:1] & shown.all(), hit[:1] & hit.all()
        self.given += shown
        self.hits += hit
        self.widths.extend(width(i) for i, _ in pairs)


def agent_figures(w: Wide, sc: Scenario) -> dict[str, list[tuple[Interval, float]]]:
    """The hook for the agent statistics' intervals (Elo, pairings, Bradley–Terry): return,
    per figure name, (interval, truth) pairs for this simulated batch, and their rows join the
    table. Empty until those intervals count units of sampling."""
    return {}


def figures(sc: Scenario, w: Wide, other: Wide) -> dict[str, list[tuple[Interval, float]]]:
    """Every interval the report gives on one simulated batch, with its truth."""
    n = sc.players
    seats = seat_balance_wide(w)
    turn = by_turn(w)
    positions = seat_balance_wide(turn, "position") if turn is not w else seats
    fpa = first_player_advantage(positions)
    truth_seat, truth_points = sc.share_by_seat(), sc.points_by_seat()
    out: dict[str, list[tuple[Interval, float]]] = {
        "seat shares": [
            ((r["ci_low"], r["ci_high"]), float(truth_seat[r["seat"]]))
            for r in seats.to_dict("records")
        ],
        JOINT: [
            ((r["joint_ci_low"], r["joint_ci_high"]), float(truth_seat[r["seat"]]))
            for r in seats.to_dict("records")
        ],
        "first-player advantage": [
            ((fpa["ci_low"], fpa["ci_high"]), float(sc.share_by_position()[0] - 1 / n))
        ],
        "mean points": [
            ((r["points_ci_low"], r["points_ci_high"]), float(truth_points[r["seat"]]))
            for r in seats.to_dict("records")
        ],
    }
    shape = game_shape(w, EMPTY_PLIES, EMPTY_ENDED)
    if sc.draw > 0:
        out["draw rate"] = [((shape["draw_rate_ci_low"], shape["draw_rate_ci_high"]), sc.draw)]
    balance = 1 - float(truth_seat.max() - truth_seat.min())
    out["balance"] = [((shape["balance_ci_low"], shape["balance_ci_high"]), balance)]
    diff = compare_wide(w, other)["first_player_advantage"]
    b_share = sc.reversed().share_by_position()[0]
    out["compare difference"] = [
        ((diff["ci_low"], diff["ci_high"]), float(sc.share_by_position()[0] - b_share))
    ]
    if n == 2 and sc.pairs is None:
        komi = fair_compensation(w)
        assert komi is not None and komi["offsets"] is not None
        o = komi["offsets"][0]
        out["komi (2 players)"] = [((o["ci_low"], o["ci_high"]), sc.komi())]
    out.update(agent_figures(w, sc))
    return out


def measure(sc: Scenario, replicates: int, seed: int = SEED) -> list[dict[str, Any]]:
    """Coverage of every figure of ``sc`` over ``replicates`` simulated batches."""
    rng = np.random.default_rng([seed, sum(map(ord, sc.name)), sc.matches, sc.players])
    tallies: dict[str, Tally] = {}
    for _ in range(replicates):
        w, other = simulate(sc, rng), simulate(sc.reversed(), rng)
        for name, pairs in figures(sc, w, other).items():
            size = 1 if name == JOINT else len(pairs)
            zeros = np.zeros(size, np.int64)
            tally = tallies.setdefault(name, Tally(zeros, zeros.copy()))
            tally.add(pairs, joint=name == JOINT)
    rows = []
    for name, tally in tallies.items():
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = tally.hits / tally.given
        worst = float(np.nanmin(rates)) if np.isfinite(rates).any() else math.nan
        shown = int(tally.given.min())
        rows.append(
            {
                "scenario": sc.name,
                "players": sc.players,
                "matches": sc.matches,
                "figure": name,
                "coverage": worst,
                "mc_error": math.sqrt(worst * (1 - worst) / shown) if shown else math.nan,
                "pooled": float(np.nanmean(rates)) if np.isfinite(rates).any() else math.nan,
                "no_interval": 1 - shown / replicates,
                "replicates": replicates,
                "mean_width": _mean_width(tally.widths),
                "per_seat": rates.tolist() if rates.size > 1 else None,
            }
        )
    return rows


def _mean_width(widths: list[float]) -> float | None:
    """Mean width of the bounded intervals; None when none was bounded on both sides."""
    finite = [x for x in widths if math.isfinite(x)]
    return float(np.mean(finite)) if finite else None


def scenarios() -> list[Scenario]:
    """The scenarios of the full table."""
    two = (0.55, 0.45)
    three = (0.4, 0.33, 0.27)
    out = []
    for m in (10, 20, 40, 300):
        out.append(Scenario("independent", m, two))
        out.append(Scenario("independent, draws", m, (0.53, 0.47), draw=0.35))
        out.append(Scenario("independent", m, three, draw=0.1))
    for m in (20, 300):
        out.append(Scenario("independent", m, (0.3, 0.26, 0.24, 0.2)))
    for m in (10, 20, 40, 300):
        out.append(Scenario("independent", m, (0.22, 0.18, 0.16, 0.16, 0.15, 0.13)))
    for m in (15, 40, 300):
        out.append(Scenario("starting seat drawn", m, (0.36, 0.33, 0.31), drawn_start=True))
    for k in (6, 30):
        out.append(Scenario(f"{k} openings", 200, two, openings=k))
        out.append(Scenario(f"{k} openings, draws", 200, (0.53, 0.47), draw=0.3, openings=k))
        out.append(Scenario(f"{k} openings", 200, three, openings=k))
    out.append(Scenario("6 openings", 40, two, openings=6))
    out.append(Scenario("30 openings", 200, (0.22, 0.18, 0.16, 0.16, 0.15, 0.13), openings=30))
    for m in (20, 300):
        out.append(Scenario("seat-swapped pairs, agents differ", m, two, pairs=0.3))
    for m in (40, 300):
        out.append(Scenario("noise, coincident openings", m, two, coincident=4))
        out.append(Scenario("rounds sharing an opening", m, three, round_effect=0.15))
    out.append(Scenario("independent", 300, (0.25, 0.25, 0.25, 0.25)))
    for m in (40, 300):
        out.append(Scenario("12 unequal openings", m, two, openings=12, unequal=True))
        out.append(Scenario("12 unequal openings", m, three, openings=12, unequal=True))
    return out


HARDEST: tuple[Scenario, ...] = (
    Scenario("6 openings", 200, (0.55, 0.45), openings=6),
    Scenario("30 openings, draws", 200, (0.53, 0.47), draw=0.3, openings=30),
    Scenario("independent, draws", 20, (0.53, 0.47), draw=0.35),
    Scenario("independent", 10, (0.22, 0.18, 0.16, 0.16, 0.15, 0.13)),
    Scenario("starting seat drawn", 15, (0.36, 0.33, 0.31), drawn_start=True),
    Scenario("rounds sharing an opening", 40, (0.4, 0.33, 0.27), round_effect=0.15),
)
"""The rows the test suite runs with fewer replicates (``tests/project/test_bench_coverage.py``)."""


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table: ``coverage`` is the worst seat's where a figure has one
    interval per seat (``all seats``: pooled over them), with its Monte-Carlo standard error."""
    head = ("| scenario | seats | matches | figure | coverage | MC error | all seats | no interval "
            "| mean width |")  # fmt: skip
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        pooled = f"{100 * r['pooled']:.1f} %" if r["per_seat"] else ""
        lines.append(
            f"| {r['scenario']} | {r['players']} | {r['matches']} | {r['figure']} | "
            f"{100 * r['coverage']:.1f} % | ±{100 * r['mc_error']:.1f} | {pooled} | "
            f"{100 * r['no_interval']:.1f} % | "
            + ("unbounded |" if r["mean_width"] is None else f"{r['mean_width']:.3f} |")
        )
    return "\n".join(lines)


FIGURES = (
    "seat shares", JOINT, "first-player advantage", "mean points", "draw rate", "balance",
    "compare difference", "komi (2 players)",
)  # fmt: skip


def summary(rows: list[dict[str, Any]]) -> str:
    """One line per design, one column per figure: coverage % (Monte-Carlo standard error);
    for per-seat figures the worst seat's."""
    designs: dict[tuple[str, int, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        designs.setdefault((r["scenario"], r["players"], r["matches"]), {})[r["figure"]] = r
    lines = [
        "| design | seats | matches | " + " | ".join(FIGURES) + " |",
        "|---|---|---|" + "---|" * len(FIGURES),
    ]
    for (name, players, matches), found in designs.items():
        cells = [_cell(found.get(k)) for k in FIGURES]
        lines.append(f"| {name} | {players} | {matches} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(f: dict[str, Any] | None) -> str:
    if f is None:
        return ""
    if f["no_interval"] >= 1:
        return "no interval"
    return f"{100 * f['coverage']:.1f} ({100 * f['mc_error']:.1f})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=REPLICATES)
    parser.add_argument(
        "--only", default="", help="run the scenarios whose name contains one of these (commas)"
    )
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    wanted = args.only.split(",")
    chosen: Callable[[Scenario], bool] = lambda sc: any(x in sc.name for x in wanted)  # noqa: E731
    for sc in filter(chosen, scenarios()):
        t = time.perf_counter()
        found = measure(sc, args.replicates)
        rows.extend(found)
        print(table(found).split("\n", 2)[2], f"  ({time.perf_counter() - t:.0f} s)", flush=True)
    below = [r for r in rows if r["coverage"] < TARGET]
    print(table(rows))
    print(summary(rows))
    print(
        f"{len(rows)} rows, {args.replicates:,} replicates each, nominal {NOMINAL:.0%}, "
        f"{len(below)} below {TARGET:.0%}; {time.perf_counter() - started:.0f} s"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "coverage.json").write_text(
        json.dumps({"replicates": args.replicates, "seed": SEED, "rows": rows}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
