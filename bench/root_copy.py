"""The cost of copying a root position into the search's scratch array, per game.

    python -m bench.root_copy

The compiled Monte Carlo searches start every iteration from a copy of the root. numba's slice
assignment (``sim[:] = root``) goes through a temporary, since it cannot rule out that the two
arrays overlap; ``engines.compiled.search_parts.copy_position`` copies element by element, as the
alpha-beta always did. Both are timed here in the same run, on each kernel's opening position,
in nanoseconds a copy (best of several rounds of a million copies; the root changes between
copies so the compiler cannot hoist the copy out of the loop), with their ratio.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from engines.compiled.dispatch import KERNEL_MODULES
from engines.compiled.kernels import KERNEL_GAMES
from engines.compiled.search_parts import copy_position
from engines.registry import load_game

COPIES = 1_000_000
ROUNDS = 5


@njit(cache=True)
def _by_slice(root: np.ndarray, sim: np.ndarray, copies: int) -> int:
    check = 0
    for i in range(copies):
        root[0] = i
        sim[:] = root
        check += sim[root.shape[0] - 1]
    return check


@njit(cache=True)
def _by_element(root: np.ndarray, sim: np.ndarray, copies: int) -> int:
    check = 0
    for i in range(copies):
        root[0] = i
        copy_position(root, sim)
        check += sim[root.shape[0] - 1]
    return check


def _nanoseconds(copy: object, root: np.ndarray) -> float:
    sim = np.empty_like(root)
    copy(root.copy(), sim, 10)  # type: ignore[operator]
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        copy(root.copy(), sim, COPIES)  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return best / COPIES * 1e9


def main() -> None:
    print("| game | cells | sim[:] = root (ns) | copy_position (ns) | ratio |")
    print("|---|---|---|---|---|")
    for game_id, name in enumerate(KERNEL_GAMES):
        root = KERNEL_MODULES[game_id].encode(load_game(name).new_initial_state(0))
        by_slice = _nanoseconds(_by_slice, root)
        by_element = _nanoseconds(_by_element, root)
        print(
            f"| {name} | {root.shape[0]} | {by_slice:.1f} | {by_element:.1f} "
            f"| {by_slice / by_element:.1f}× |"
        )


if __name__ == "__main__":
    main()
