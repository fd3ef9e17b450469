"""The SPRT counts units of sampling: unit scores on their grid, meetings summed per unit, and
error rates that hold when openings favour one agent (a fast run of ``bench.coverage_sprt``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis import sprt
from analysis.stopping import SprtRule
from analysis.tidy import Wide
from bench import coverage_sprt


def test_rounds_of_six_meetings_count_on_the_grid_of_twelfths() -> None:
    model, values, counts = sprt.unit_score_counts(np.array([0, 6, 6, 12, 7]), np.full(5, 6))
    assert model == "unit means"
    assert values.tolist() == pytest.approx([j / 12 for j in range(13)])
    assert counts == [1, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 1]
    # A pair of games is the pentanomial, one game the trinomial.
    assert sprt.unit_score_counts(np.array([0, 3, 4, 3]), np.full(4, 2))[::2] == (
        "pentanomial", [1, 0, 0, 2, 1])  # fmt: skip
    assert sprt.unit_score_counts(np.array([2, 1]), np.ones(2))[2] == [0, 1, 1]


def test_units_of_unequal_sizes_count_their_scores_with_both_ends_present() -> None:
    # Scores 1/4, 1/2, 1/2 and 5/6; 0 and 1 present with no count, so any score is reachable.
    model, values, counts = sprt.unit_score_counts(
        np.array([1, 2, 4, 5, 9]), np.array([2, 2, 4, 3, 0])
    )
    assert model == "unit means"
    assert values.tolist() == pytest.approx([0, 0.25, 0.5, 5 / 6, 1])
    assert counts == [0, 1, 2, 1, 0]
    state = sprt.sprt_state(counts, model, SprtRule(("a", "b")), values)
    assert state["score"] == pytest.approx((0.25 + 1 + 5 / 6) / 4) and state["units"] == 4


def test_meetings_are_summed_per_unit_by_the_game_result() -> None:
    # Three seats, agents a (0), b (1), c (2); two units of two matches each.
    win = np.array([[1, 0, 0], [0, 0, 1], [0.5, 0.5, 0], [0, 1, 0]], dtype=float)
    agent = np.array([[0, 1, 2], [1, 0, 2], [2, 0, 1], [0, 1, 2]])
    w = Wide(np.arange(4), win, np.zeros_like(win), agent, ("a", "b", "c"),
             unit=np.array([5, 5, 9, 9]))  # fmt: skip
    half, meetings = sprt.meeting_sums(w, "a", "b")
    # Match 0: a wins (2); 1: c wins, a and b both lose (1); 2: a shares the win with c, b
    # loses (2); 3: b wins (0).
    assert half.tolist() == [3, 2] and meetings.tolist() == [2, 2]


@pytest.mark.slow
def test_error_rates_hold_when_openings_favour_one_agent() -> None:
    # Measured with 1,000 tests per row in bench/README.md; here 150, checked every 3 rounds.
    replicates = 150
    null = coverage_sprt.error_rates(coverage_sprt.ELO0, replicates, seed=5, every=3)
    alternative = coverage_sprt.error_rates(coverage_sprt.ELO1, replicates, seed=6, every=3)
    margin = 3 * math.sqrt(0.05 * 0.95 / replicates)
    assert null["units"] <= coverage_sprt.ALPHA + margin, null
    assert alternative["units"] <= coverage_sprt.BETA + margin, alternative
    # Counting each meeting as independent is what the generator is there to catch.
    assert null["meetings"] > null["units"], null
