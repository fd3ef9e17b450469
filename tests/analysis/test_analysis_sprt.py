"""SPRT: the log-likelihood ratio against an independent constrained maximum-likelihood fit,
the bounds, stop-rule validation, and the decision on stored batches."""

from __future__ import annotations

import math

import numpy as np
import pytest
from analysis_data import store_batch, two_player_outcomes
from scipy.optimize import minimize

from analysis import frames, sprt, stats, stop_rule, stopping
from engines.core import OptionError
from storage import crud

STORED = {"type": "sprt", "agents": ["a", "b"], "elo0": 0.0, "elo1": 5.0, "alpha": 0.05,
          "beta": 0.05}  # fmt: skip
RULE = stopping.SprtRule(("a", "b"))


def exact_profile_loglik(counts: list[int], values: np.ndarray, mean: float) -> float:
    """max Σ c log p subject to Σ p = 1 and Σ p x = mean, by a general-purpose optimiser."""
    c = np.asarray(counts, float)
    cons = [
        {"type": "eq", "fun": lambda p: p.sum() - 1},
        {"type": "eq", "fun": lambda p: p @ values - mean},
    ]
    res = minimize(
        lambda p: -(c * np.log(p)).sum(),
        c / c.sum(),
        constraints=cons,
        bounds=[(1e-12, 1)] * len(c),
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    assert res.success
    return float(-res.fun)


@pytest.mark.parametrize(
    ("counts", "model"),
    [
        ([300, 200, 330], "trinomial"),
        ([40, 160, 290, 190, 60], "pentanomial"),
        ([12, 30, 11], "trinomial"),
    ],
)
def test_llr_matches_an_independent_exact_computation(counts: list[int], model: str) -> None:
    values = stats.PENTANOMIAL_VALUES if model == "pentanomial" else stats.TRINOMIAL_VALUES
    s0, s1 = stats.score_from_elo(0.0), stats.score_from_elo(20.0)
    expected = exact_profile_loglik(counts, values, s1) - exact_profile_loglik(counts, values, s0)
    assert sprt.llr(counts, values, s0, s1) == pytest.approx(expected, rel=1e-5, abs=1e-6)


def test_llr_is_close_to_the_normal_approximation() -> None:
    counts = [3000, 2000, 3300]
    s0, s1 = stats.score_from_elo(0.0), stats.score_from_elo(5.0)
    mean, var = stats.trinomial(3300, 2000, 3000)
    approx = sum(counts) * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    assert sprt.llr(counts, stats.TRINOMIAL_VALUES, s0, s1) == pytest.approx(approx, rel=0.02)


def test_bounds_and_decisions() -> None:
    lower, upper = sprt.bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95))
    assert upper == pytest.approx(math.log(0.95 / 0.05))
    strong = sprt.sprt_state([200, 100, 700], "trinomial", RULE)
    assert strong["result"] == "H1" and strong["llr"] >= upper
    weak = sprt.sprt_state([700, 100, 200], "trinomial", RULE)
    assert weak["result"] == "H0" and weak["llr"] <= lower
    unsure = sprt.sprt_state([10, 5, 11], "trinomial", RULE)
    assert unsure["result"] is None and unsure["verdict"].startswith("continue")


def test_parse_and_validate_stop_rules() -> None:
    rule = stopping.parse("sprt:a,b,elo0=0,elo1=5")
    assert rule.validate(["a", "b"]) == RULE and rule.to_json() == STORED
    assert stopping.parse('{"agents": ["a", "b"]}') == RULE
    with pytest.raises(OptionError) as info:
        stopping.from_json({"agents": ["a", "c"]}).validate(["a", "b"])
    assert info.value.field == "stop_rule.agents"
    with pytest.raises(OptionError) as info:
        stopping.from_json({"agents": ["a", "b"], "elo0": 5, "elo1": 0})
    assert info.value.field == "stop_rule.elo1"
    with pytest.raises(OptionError) as info:
        stopping.from_json({"agents": ["a", "b"], "alpha": 0.7})
    assert info.value.field == "stop_rule.alpha"
    with pytest.raises(OptionError) as info:
        stopping.from_json({"agents": ["a", "b"], "speed": 1})
    assert info.value.field == "stop_rule.speed"
    with pytest.raises(OptionError):
        stopping.parse("wait:a,b")


def test_pair_outcomes_in_sql_match_a_count_in_python(db_url: str) -> None:
    outcomes = two_player_outcomes(301, 0.6, draw=0.2, seed=4)
    engine, bid = store_batch(
        db_url, game="alquerque", players=2, labels=["a", "b"], outcomes=outcomes, chunk=100
    )
    tri = frames.pair_outcomes(engine, bid, "a", "b", pairs=False)
    penta = frames.pair_outcomes(engine, bid, "a", "b", pairs=True)
    a_scores = []
    for i, (win, _) in enumerate(outcomes):
        a_scores.append(win[i % 2])  # rotate: a sits in seat i % 2
    assert tri == [a_scores.count(0.0), a_scores.count(0.5), a_scores.count(1.0)]
    pair_pts = [int(2 * (a_scores[2 * k] + a_scores[2 * k + 1])) for k in range(150)]
    assert penta == [pair_pts.count(v) for v in range(5)]


def test_check_stop_rule_decides_on_a_stored_batch(migrated_sqlite_url: str) -> None:
    # a wins 70 % of games whatever its seat (about +150 Elo): H1 (+50 Elo) is accepted.
    rng = np.random.default_rng(9)
    outcomes = []
    for i in range(400):
        a_wins = rng.random() < 0.7
        a_seat = i % 2
        win = [0.0, 0.0]
        win[a_seat if a_wins else 1 - a_seat] = 1.0
        outcomes.append((tuple(win), tuple(win)))
    engine, bid = store_batch(
        migrated_sqlite_url,
        game="alquerque",
        players=2,
        labels=["a", "b"],
        outcomes=outcomes,
        stop_rule={**STORED, "elo1": 50.0},
    )
    batch = crud.get_batch(engine, bid)
    decision = stop_rule.check_stop_rule(engine, batch)
    assert decision is not None and decision["result"] == "H1"
    assert decision["model"] == "pentanomial" and decision["games"] == 400
    assert decision["decided_at_matches"] == 400
    status = stop_rule.sprt_status(engine, batch)
    assert status is not None
    assert {k: status[k] for k in decision if k != "decided_at_matches"} == {
        k: v for k, v in decision.items() if k != "decided_at_matches"
    }
    # The report's state adds the fixed-sample Elo; the verdict speaks in the estimate's words.
    assert status["fixed_sample_elo"] == pytest.approx(-400 * math.log10(1 / status["score"] - 1))
    est = status["estimate"]
    assert est is not None and "warning" not in status
    assert status["verdict"] == (
        f"accept H1: the data favour 50 Elo over 0 for a against b; a is an estimated "
        f"{est['elo_median']:+.1f} Elo against b (median-unbiased, 95 % {est['elo_low']:+.1f} "
        f"to {est['elo_high']:+.1f}, adjusted for the stop)"
    )
