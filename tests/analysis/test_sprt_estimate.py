"""The Elo of a stopped SPRT: the Brownian stopping distribution against closed forms, and the
estimate's bias against the fixed-sample one by simulation (fixed seeds, Monte-Carlo margins).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from analysis_data import store_batch
from scipy import stats as sps
from sqlalchemy import Engine

from analysis import frames, sprt, stats
from analysis.report import build_report
from analysis.sprt_estimate import Brownian, stopping_aware_elo
from analysis.stopping import SprtRule


def test_the_exit_probabilities_are_the_gambler_s_ruin_ones_in_the_long_run() -> None:
    # After a very long time every path has left, by the upper bound with probability
    # (1 − e^{−2θ(0 − a)}) / (1 − e^{−2θ(b − a)}), θ = μ/σ².
    mu, var, a, b = 0.03, 1.0, -2.5, 3.0
    theta = mu / var
    p_upper = (1 - math.exp(-2 * theta * (0 - a))) / (1 - math.exp(-2 * theta * (b - a)))
    process = Brownian(mu, var, a, b)
    assert 1 - process.worse_or_equal(5_000.0, b) == pytest.approx(p_upper, abs=1e-9)
    assert process.worse_or_equal(5_000.0, a) == pytest.approx(1 - p_upper, abs=1e-9)


def test_far_bounds_leave_the_plain_normal_distribution() -> None:
    # Bounds 40 standard deviations away: P(Y_T ≤ y) is the normal one.
    mu, var, time = 0.1, 2.0, 9.0
    process = Brownian(mu, var, -200.0, 200.0)
    for y in (-3.0, 0.5, 4.0):
        expected = sps.norm.cdf(y, loc=mu * time, scale=math.sqrt(var * time))
        assert process.worse_or_equal(time, y) == pytest.approx(expected, abs=1e-12)


def test_mean_inverse_exit_time_with_one_far_bound_is_the_inverse_gaussian_one() -> None:
    # With the lower bound out of reach, the exit time at b is inverse Gaussian with mean b/μ
    # and shape b²/σ²: E[1/τ] = 1/mean + 1/shape (SciPy's invgauss as the reference).
    mu, var, b = 0.2, 1.5, 3.0
    mean, shape = b / mu, b * b / var
    reference = sps.invgauss(mean / shape, scale=shape).expect(lambda t: 1 / t)
    upper, lower = Brownian(mu, var, -1e4, b).mean_inverse_time()
    assert upper == pytest.approx(1 / mean + 1 / shape, rel=1e-7)
    assert upper == pytest.approx(reference, rel=1e-6)
    assert lower == pytest.approx(0.0, abs=1e-12)


def test_the_ordering_probability_against_a_fine_simulation() -> None:
    rng = np.random.default_rng(11)
    mu, var, a, b, horizon, y, dt = 0.05, 1.0, -3.0, 3.0, 40.0, 1.0, 0.01
    paths = 20_000
    x, state = np.zeros(paths), np.zeros(paths, dtype=np.int64)  # 0 alive, −1 lower, 1 upper
    for _ in range(int(horizon / dt)):
        alive = state == 0
        x[alive] += mu * dt + math.sqrt(var * dt) * rng.standard_normal(int(alive.sum()))
        state[alive & (x <= a)] = -1
        state[alive & (x >= b)] = 1
    simulated = float(((state == -1) | ((state == 0) & (x <= y))).mean())
    # Steps of dt miss crossings between steps (bias ≈ 0.58·√dt outward), hence the margin.
    exact = Brownian(mu, var, a, b).worse_or_equal(horizon, y)
    assert exact == pytest.approx(simulated, abs=4 * math.sqrt(0.25 / paths) + 0.01)


def simulate(truth: float, replicates: int, seed: int) -> dict[str, np.ndarray]:
    """SPRTs (elo0 = 0, elo1 = 60, α = β = 0.05) on games of true Elo ``truth`` with 30 %
    draws, checked every 20 games as a batch does; Elo at the stop, both ways."""
    rng = np.random.default_rng(seed)
    s = stats.score_from_elo(truth)
    probs = np.array([1 - s - 0.15, 0.3, s - 0.15])
    values = stats.TRINOMIAL_VALUES
    s0, s1 = stats.score_from_elo(0.0), stats.score_from_elo(60.0)
    lower, upper = sprt.bounds(0.05, 0.05)
    fixed, adjusted, median, covered = [], [], [], []
    for _ in range(replicates):
        counts = np.zeros(3)
        while True:
            counts += rng.multinomial(20, probs)
            llr = sprt.llr(counts, values, s0, s1)
            if not lower < llr < upper:
                break
        fixed.append(stats.elo_from_score(float(counts @ values / counts.sum())))
        est = stopping_aware_elo(counts, values, 0.0, 60.0, (lower, upper), llr)
        adjusted.append(est.elo)
        median.append(est.elo_median)
        covered.append(est.elo_low <= truth <= est.elo_high)
    found = {"fixed": fixed, "adjusted": adjusted, "median": median, "covered": covered}
    return {k: np.array(v, dtype=float) for k, v in found.items()}


@pytest.mark.slow
def test_the_stopping_aware_estimate_is_far_less_biased_than_the_fixed_sample_one() -> None:
    replicates = 400
    for truth, seed in ((0.0, 1), (45.0, 2)):
        r = simulate(truth, replicates, seed)
        fixed_bias = float(r["fixed"].mean()) - truth
        adjusted_bias = float(r["adjusted"].mean()) - truth
        margin = 3 * float(r["adjusted"].std()) / math.sqrt(replicates)
        # Measured: truth 0, fixed-sample −13.4 Elo, bias-adjusted −1.5; truth 45, +10.4 and
        # +2.8 (the Brownian approximation of 20-game checks leaves a little).
        assert abs(adjusted_bias) < margin + 1, (truth, adjusted_bias, margin)
        assert abs(fixed_bias) > 3 * abs(adjusted_bias), (truth, fixed_bias, adjusted_bias)
        # Median-unbiased: as many estimates above the truth as below, within the margin.
        above = float((r["median"] > truth).mean())
        assert abs(above - 0.5) < 3 * math.sqrt(0.25 / replicates)
        coverage = float(r["covered"].mean())
        assert coverage > 0.95 - 3 * math.sqrt(0.95 * 0.05 / replicates)


def test_the_report_s_state_counts_units_and_carries_both_estimates(
    migrated_sqlite_url: str,
) -> None:
    # a wins 70 % of games. Stored without a declared variation, matches sharing an opening
    # form one unit, as in the report.
    rng = np.random.default_rng(9)
    outcomes = []
    for i in range(400):
        win = [0.0, 0.0]
        win[i % 2 if rng.random() < 0.7 else 1 - i % 2] = 1.0
        outcomes.append((tuple(win), tuple(win)))

    def stored(openings: Callable[[int], int]) -> tuple[Engine, str]:
        return store_batch(
            migrated_sqlite_url, game="alquerque", players=2, labels=["a", "b"],
            outcomes=outcomes, openings=openings, moves=lambda i: (f"m{i}",),
            stop_rule={"type": "sprt", "agents": ["a", "b"], "elo0": 0.0, "elo1": 50.0},
        )  # fmt: skip

    # Every pair its own opening: 200 pentanomial units, and the test decides.
    engine, bid = stored(lambda i: i // 2)
    state = build_report(engine, bid)["sprt"]
    penta = frames.pair_outcomes(engine, bid, "a", "b", pairs=True)
    assert state["model"] == "pentanomial" and state["counts"] == penta
    assert state["units"] == 200 and state["games"] == 400 and state["result"] == "H1"
    est = state["estimate"]
    assert est["elo_low"] < est["elo_median"] < est["elo_high"]
    assert f"{est['elo']:+.1f} Elo" in state["verdict"]
    assert state["fixed_sample_elo"] == pytest.approx(
        -400 * math.log10(1 / state["score"] - 1), rel=1e-12
    )
    # The same games on four openings are four observations: far too few to decide on.
    engine, bid = stored(lambda i: (i // 2) % 4)
    state = build_report(engine, bid)["sprt"]
    assert state["units"] == 4 and state["games"] == 400
    assert state["result"] is None and state["estimate"] is None
    assert sprt.sprt_state(penta, "pentanomial", SprtRule(("a", "b"), elo1=50.0))["result"] == "H1"


def test_a_rule_between_copies_in_fixed_seats_is_labelled_a_seat_effect(
    migrated_sqlite_url: str,
) -> None:
    # easy vs easy#2 in fixed seats, seat 0 winning 70 % (the rule of seed 502).
    rng = np.random.default_rng(502)
    outcomes = [((1.0, 0.0), (1.0, 0.0)) if rng.random() < 0.7 else ((0.0, 1.0), (0.0, 1.0))
                for _ in range(200)]  # fmt: skip
    engine, bid = store_batch(
        migrated_sqlite_url, game="alquerque", players=2, labels=["easy", "easy#2"],
        specs=[{"name": "easy"}, {"name": "easy"}], outcomes=outcomes, seat_policy="fixed",
        stop_rule={"type": "sprt", "agents": ["easy#2", "easy"], "elo0": 0.0, "elo1": 30.0},
    )  # fmt: skip
    state = build_report(engine, bid)["sprt"]
    assert state["comparison"] == "seat effect" and "not a difference in strength" in state["note"]
