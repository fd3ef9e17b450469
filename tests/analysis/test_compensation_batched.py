"""The bootstrap of the n-player komi solves its resamples side by side; every resample must
come out to the last bit as the one-at-a-time solve gives it, since the published intervals
are percentiles of these very floats."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from analysis.compensation import _fit_offsets, _fit_offsets_many, _solve_seat, _solve_seat_many


def _resample_weights(rng: np.random.Generator, m: int, samples: int) -> np.ndarray:
    return np.array(
        [np.bincount(rng.integers(0, m, m), minlength=m) for _ in range(samples)]
    ).astype(float)


Maker = Callable[[np.random.Generator, int, int], np.ndarray]

# Small integer points tie often (long runs of equal steps, shared wins split three ways and
# more), which is where summation order could show; spread decimals rarely tie.
CASES = [
    ("ties", 3, 240, lambda rng, m, n: rng.integers(0, 6, (m, n)).astype(float)),
    ("ties", 5, 150, lambda rng, m, n: rng.integers(0, 4, (m, n)).astype(float)),
    ("edge", 4, 300, lambda rng, m, n: rng.integers(0, 40, (m, n)) + 3.0 * np.arange(n)[::-1]),
    ("spread", 6, 200, lambda rng, m, n: np.round(rng.normal(50.0, 9.0, (m, n)), 1)),
]


@pytest.mark.parametrize(("label", "n", "m", "make"), CASES, ids=[c[0] for c in CASES])
def test_side_by_side_fits_equal_one_at_a_time_fits_bit_for_bit(
    label: str, n: int, m: int, make: Maker
) -> None:
    rng = np.random.default_rng(11 + n)
    points = make(rng, m, n)
    start = _fit_offsets(points)
    weights = _resample_weights(rng, m, 60)
    alone = np.array([_fit_offsets(points, w, start) for w in weights])
    assert np.array_equal(_fit_offsets_many(points, weights, start), alone)


def test_side_by_side_seat_solves_equal_one_at_a_time_solves() -> None:
    rng = np.random.default_rng(5)
    points = rng.integers(0, 5, (180, 4)).astype(float)
    weights = _resample_weights(rng, 180, 50)
    offsets = np.round(rng.normal(0.0, 1.5, (50, 4)), 1)
    for s in range(1, 4):
        alone = [_solve_seat(points, w, o, s) for w, o in zip(weights, offsets, strict=True)]
        assert np.array_equal(_solve_seat_many(points, weights, offsets, s), alone)
