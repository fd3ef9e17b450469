"""The random generator of the compiled kernels: xorshift64* in one ``uint64`` array cell.

numba's own ``np.random`` keeps one hidden state per thread; a search that owns its generator
instead replays identically from the agent's seed, whatever ran before it in the process.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.kernel_cache import track

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MULT = np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True)
def seed_rng(rng: np.ndarray, seed: int) -> None:
    """Mix ``seed`` (splitmix64's finaliser) into a non-zero generator state."""
    z = np.uint64(seed) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    rng[0] = z if z != 0 else _GOLDEN


@njit(cache=True)
def next_u64(rng: np.ndarray) -> np.uint64:
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * _MULT


@njit(cache=True)
def rand_below(rng: np.ndarray, n: int) -> int:
    """A uniform int in ``[0, n)`` (``n`` ≥ 1; the modulo bias is below 2⁻⁵⁰ for any board)."""
    return int((next_u64(rng) >> np.uint64(11)) % np.uint64(n))


@njit(cache=True)
def rand_unit(rng: np.ndarray) -> float:
    """A uniform float in ``[0, 1)``."""
    return float(next_u64(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


track(globals())
