"""Whether several estimates of one figure differ by more than their sampling noise: what a
screen of many variants (a search's trials) could tell apart.

Each estimate comes with its standard error. The **spread** is the estimates' sample standard
deviation (ddof=1); the **noise** is the spread sampling alone would give when every variant
is the same, the root mean square of the standard errors. **Cochran's Q** tests that equality:
Q = Σ wᵢ (xᵢ − x̄)², wᵢ = 1 / seᵢ², x̄ the weighted mean, referred to χ² on k − 1 degrees of
freedom (the heterogeneity statistic of meta-analysis). The **least difference** is how far
apart two estimates at the noise's standard error must be to differ at 95 %: z·√2·noise.

The test takes the estimates as independent. Variants played on the same openings share their
luck, which makes their estimates alike when it acts at all: then the true noise of their
differences is smaller than this one, and the test can miss a difference but not invent one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from scipy import special, stats

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Heterogeneity:
    """The spread of ``count`` estimates against their noise, and Cochran's Q test."""

    count: int
    spread: float
    noise: float
    q: float
    df: int
    p_value: float
    least_difference: float

    @property
    def distinguished(self) -> bool:
        """Whether the test rejects equality at 95 %."""
        return self.p_value < 1 - CONFIDENCE

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "distinguished": self.distinguished}


def _z(confidence: float) -> float:
    return float(special.ndtri(0.5 + confidence / 2))


def standard_error(ci_low: float, ci_high: float, confidence: float = CONFIDENCE) -> float:
    """The standard error a two-sided ``confidence`` interval implies: its half-width over z.
    For an exact or t-based interval on a large sample this is the normal one's, a little
    wider at most."""
    if not (math.isfinite(ci_low) and math.isfinite(ci_high)) or ci_high <= ci_low:
        raise ValueError(f"ci_low, ci_high: [{ci_low}, {ci_high}] is not an interval")
    return (ci_high - ci_low) / (2 * _z(confidence))


def heterogeneity(estimates: Sequence[float], errors: Sequence[float]) -> Heterogeneity:
    """The spread and Cochran's Q of ``estimates`` with standard errors ``errors``."""
    if len(estimates) != len(errors):
        raise ValueError(f"errors: {len(errors)} given for {len(estimates)} estimates")
    if len(estimates) < 2:
        raise ValueError(f"estimates: {len(estimates)} given; equality needs at least two")
    if not all(math.isfinite(x) for x in estimates):
        raise ValueError("estimates: every estimate must be a finite number")
    if not all(math.isfinite(e) and e > 0 for e in errors):
        raise ValueError("errors: every standard error must be a positive finite number")
    k = len(estimates)
    mean = sum(estimates) / k
    spread = math.sqrt(sum((x - mean) ** 2 for x in estimates) / (k - 1))
    noise = math.sqrt(sum(e * e for e in errors) / k)
    weights = [1 / (e * e) for e in errors]
    pooled = sum(w * x for w, x in zip(weights, estimates, strict=True)) / sum(weights)
    q = sum(w * (x - pooled) ** 2 for w, x in zip(weights, estimates, strict=True))
    p_value = float(stats.chi2.sf(q, k - 1))
    least = _z(CONFIDENCE) * math.sqrt(2) * noise
    return Heterogeneity(k, spread, noise, q, k - 1, p_value, least)
