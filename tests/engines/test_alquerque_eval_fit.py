"""The logistic fit behind Alquerque's tuned evaluation (``bench.alquerque_expert``): its
weights are the maximum-likelihood ones statsmodels finds for the same data (a binomial GLM,
draws as half a win), and they recover the weights that generated the data."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from bench.alquerque_expert import fit_weights


def synthetic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, results (win 1, draw 1/2, loss 0) and the weights that drew them: a draw
    where a second coin disagrees with the first."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, (n, 4))
    true = np.array([0.9, -0.5, 0.2, 0.0])
    p = 1.0 / (1.0 + np.exp(-(x @ true)))
    first = rng.random(n) < p
    second = rng.random(n) < p
    y = np.where(first == second, first.astype(float), 0.5)
    return x, y, true


def test_the_fit_is_statsmodels_maximum_likelihood() -> None:
    x, y, _ = synthetic(3000, seed=1)
    weights, log_loss = fit_weights(x, y, ridge=0.0)
    glm = sm.GLM(y, x, family=sm.families.Binomial()).fit()
    assert weights == pytest.approx(glm.params, abs=1e-4)
    p = glm.predict(x)
    cross_entropy = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert log_loss == pytest.approx(cross_entropy, abs=1e-6)


def test_the_fit_recovers_the_weights_that_made_the_data() -> None:
    x, y, true = synthetic(20000, seed=2)
    weights, _ = fit_weights(x, y)
    assert weights == pytest.approx(true, abs=0.06)
