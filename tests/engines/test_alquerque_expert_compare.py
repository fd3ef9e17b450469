"""The candidate bench's pair-by-pair comparison of two match logs (``bench.alquerque_expert
compare``): differences of whole pairs only, their mean and normal interval worked by hand."""

from __future__ import annotations

import math

import pytest

from bench.alquerque_expert import paired_difference


def _log(scores: list[float]) -> list[dict[str, float | int]]:
    return [{"index": i, "score": s} for i, s in enumerate(scores)]


def test_pairs_are_compared_opening_by_opening_and_a_half_pair_is_left_out() -> None:
    # Pair means: candidate 1, 0.5, 0.75 (and pair 3 half played); baseline 0.5, 0.5, 0.25, 1.
    candidate = _log([1.0, 1.0, 0.5, 0.5, 1.0, 0.5, 1.0])
    baseline = _log([0.5, 0.5, 1.0, 0.0, 0.5, 0.0, 1.0, 1.0])
    got = paired_difference(candidate, baseline)
    # Differences 0.5, 0, 0.5: mean 1/3, sample variance 1/12, so 1.96 x sqrt(1/36) = 0.3267.
    assert got["pairs"] == 3
    assert got["difference"] == pytest.approx(1 / 3, abs=1e-4)
    half = 1.959964 * math.sqrt((1 / 12) / 3)
    assert got["interval"] == pytest.approx([1 / 3 - half, 1 / 3 + half], abs=1e-4)
    assert (got["pairs_better"], got["pairs_worse"]) == (2, 0)
