"""What the compiled searches share: the tree both Monte Carlo searches grow, their playouts,
their clock checks and their results, and the one way every search copies a position.

:mod:`engines.compiled.search_uct` (perfect information) and
:mod:`engines.compiled.search_ismcts` (hidden information) differ in how they choose a child;
everything else they do here, once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.compiled.dispatch import (
    apply,
    current_player,
    evaluate,
    random_action,
    returns,
    rollout_action,
    strong_rollout_action,
)
from engines.kernel_cache import track
from engines.kernel_clock import NO_DEADLINE, past

RANDOM_ROLLOUT, GAME_ROLLOUT, STRONG_ROLLOUT = 0, 1, 2
"""Playout policies: uniform, the game's ``rollout_action``, its ``strong_rollout_action``."""
CHECK_EVERY = 16
"""Iterations between two looks at the clock when a search has a deadline."""
TIMED_NODES = 4096
"""Nodes a search with a deadline makes room for at first, doubling as it needs: one that
stops at its deadline may run far fewer iterations than its budget, and making room for a
budget of a million would take longer than a Blitz move."""

Tree = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
]  # fmt: skip
"""A search tree in parallel arrays, one entry per node: ``action`` (the move into it),
``mover`` (the seat that played it), ``visits``, ``total`` (shares for ``mover``),
``first_child``, ``last_child``, ``next_sibling``, ``untried_at`` and ``untried`` (UCT's
shuffled moves left to expand, ``-1`` before they are listed), ``avail`` (how often it could be
chosen: the information-set search's count), and ``path``, the nodes of the current
iteration."""


@njit(cache=True)
def copy_position(source: np.ndarray, target: np.ndarray) -> None:
    """``target[:] = source``, element by element: numba's slice assignment goes through a
    temporary (it cannot rule out overlap) and costs far more."""
    for k in range(source.shape[0]):
        target[k] = source[k]


@njit(cache=True)
def shares(game: int, state: np.ndarray, players: int, out: np.ndarray) -> None:
    """Per-seat shares in [0, 1]: the returns once over, else from the game's evaluation
    (inverted and renormalised as the Python search does)."""
    if current_player(game, state) < 0:
        returns(game, state, out)
        return
    scale = (players - 1) / players
    total = 0.0
    for s in range(players):
        raw = max(0.0, evaluate(game, state, s) * scale + 1.0 / players)
        out[s] = raw
        total += raw
    for s in range(players):
        out[s] = out[s] / total if total > 0 else 1.0 / players


@njit(cache=True)
def playout(game: int, sim: np.ndarray, rollout: int, cap: int, rng: np.ndarray) -> int:
    """Play ``sim`` on by the ``rollout`` policy, to the end or ``cap`` plies; the plies
    played."""
    plies = 0
    if rollout == GAME_ROLLOUT:
        while plies < cap and current_player(game, sim) >= 0:
            apply(game, sim, rollout_action(game, sim, rng))
            plies += 1
    elif rollout == STRONG_ROLLOUT:
        while plies < cap and current_player(game, sim) >= 0:
            apply(game, sim, strong_rollout_action(game, sim, rng))
            plies += 1
    else:
        while plies < cap and current_player(game, sim) >= 0:
            apply(game, sim, random_action(game, sim, rng))
            plies += 1
    return plies


@njit(cache=True)
def out_of_time(iteration: int, deadline: float) -> bool:
    """Whether a search must stop before ``iteration``: the first always runs, and the clock
    is read every ``CHECK_EVERY`` iterations."""
    return iteration > 0 and iteration % CHECK_EVERY == 0 and past(deadline)


@njit(cache=True)
def initial_capacity(iterations: int, deadline: float) -> int:
    """Nodes to make room for: every iteration adds at most one, so ``iterations + 2`` never
    runs out; with a deadline, ``TIMED_NODES`` at first."""
    if deadline != NO_DEADLINE:
        return min(iterations + 2, TIMED_NODES)
    return iterations + 2


@njit(cache=True)
def _grown(values: np.ndarray, size: int, fill: int) -> np.ndarray:
    out = np.full(size, fill, dtype=np.int64)
    out[: values.shape[0]] = values
    return out


@njit(cache=True)
def _grown_float(values: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=np.float64)
    out[: values.shape[0]] = values
    return out


@njit(cache=True)
def new_tree(capacity: int) -> Tree:
    """Room for ``capacity`` nodes, the root (node 0) among them."""
    action = np.empty(capacity, dtype=np.int64)
    mover = np.empty(capacity, dtype=np.int64)
    action[0] = -1
    mover[0] = -1
    return (
        action,
        mover,
        np.zeros(capacity, dtype=np.int64),
        np.zeros(capacity, dtype=np.float64),
        np.full(capacity, -1, dtype=np.int64),
        np.full(capacity, -1, dtype=np.int64),
        np.full(capacity, -1, dtype=np.int64),
        np.zeros(capacity, dtype=np.int64),
        np.full(capacity, -1, dtype=np.int64),
        np.ones(capacity, dtype=np.int64),
        np.empty(capacity + 1, dtype=np.int64),
    )


@njit(cache=True)
def grown_tree(tree: Tree, capacity: int) -> Tree:
    """``tree`` with room for ``capacity`` nodes (a search with a deadline, out of room)."""
    action, mover, visits, total, first, last, sibling, untried_at, untried, avail, path = tree
    return (
        _grown(action, capacity, -1),
        _grown(mover, capacity, -1),
        _grown(visits, capacity, 0),
        _grown_float(total, capacity),
        _grown(first, capacity, -1),
        _grown(last, capacity, -1),
        _grown(sibling, capacity, -1),
        _grown(untried_at, capacity, 0),
        _grown(untried, capacity, -1),
        _grown(avail, capacity, 1),
        _grown(path, capacity + 1, 0),
    )


@njit(cache=True, inline="always")
def add_child(
    action: np.ndarray,
    mover: np.ndarray,
    first_child: np.ndarray,
    last_child: np.ndarray,
    next_sibling: np.ndarray,
    parent: int,
    child: int,
    move: int,
    seat: int,
) -> None:
    """Make node ``child`` the last child of ``parent``, reached by ``seat`` playing ``move``
    (the tree's arrays one by one: inlined in the search's loop, which holds them)."""
    action[child] = move
    mover[child] = seat
    if last_child[parent] < 0:
        first_child[parent] = child
    else:
        next_sibling[last_child[parent]] = child
    last_child[parent] = child


@njit(cache=True, inline="always")
def backpropagate(
    path: np.ndarray,
    depth: int,
    mover: np.ndarray,
    visits: np.ndarray,
    total: np.ndarray,
    result: np.ndarray,
) -> None:
    """Count a visit to each node of ``path[: depth + 1]``, each scoring ``result`` for the
    seat that moved into it."""
    for k in range(depth + 1):
        visited = path[k]
        visits[visited] += 1
        if mover[visited] >= 0:
            total[visited] += result[mover[visited]]


@njit(cache=True)
def root_children(tree: Tree) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The root's children in the order they were added: moves, visits, total shares."""
    action, _, visits, total, first_child, _, next_sibling, _, _, _, _ = tree
    count = 0
    child = first_child[0]
    while child >= 0:
        count += 1
        child = next_sibling[child]
    moves = np.empty(count, dtype=np.int64)
    seen = np.empty(count, dtype=np.int64)
    sums = np.empty(count, dtype=np.float64)
    child = first_child[0]
    for i in range(count):
        moves[i] = action[child]
        seen[i] = visits[child]
        sums[i] = total[child]
        child = next_sibling[child]
    return moves, seen, sums


track(globals())
