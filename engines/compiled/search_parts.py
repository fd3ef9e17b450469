"""What the compiled searches share: the tree both Monte Carlo searches grow, their playouts,
their clock checks and their results, and the one way every search copies a position.

:mod:`engines.compiled.search_uct` (perfect information) and
:mod:`engines.compiled.search_ismcts` (hidden information) differ in how they choose a child;
everything else they do here, once.
"""

from __future__ import annotations

from typing import NamedTuple

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


class Tree(NamedTuple):
    """A search tree in parallel arrays, one entry per node (numba passes the record as a
    struct of its arrays: reading a field costs nothing)."""

    action: np.ndarray
    """The move into the node (-1 at the root)."""
    mover: np.ndarray
    """The seat that played it (-1 at the root)."""
    visits: np.ndarray
    total: np.ndarray
    """Shares for ``mover`` summed over the visits."""
    first_child: np.ndarray
    last_child: np.ndarray
    next_sibling: np.ndarray
    untried_at: np.ndarray
    """Where UCT's shuffled moves left to expand start in its pool of moves."""
    untried: np.ndarray
    """How many of them are left (-1 before they are listed)."""
    avail: np.ndarray
    """How often the node could be chosen: the information-set search's count."""
    path: np.ndarray
    """The nodes of the current iteration, root first."""


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
    return Tree(
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
    return Tree(
        _grown(tree.action, capacity, -1),
        _grown(tree.mover, capacity, -1),
        _grown(tree.visits, capacity, 0),
        _grown_float(tree.total, capacity),
        _grown(tree.first_child, capacity, -1),
        _grown(tree.last_child, capacity, -1),
        _grown(tree.next_sibling, capacity, -1),
        _grown(tree.untried_at, capacity, 0),
        _grown(tree.untried, capacity, -1),
        _grown(tree.avail, capacity, 1),
        _grown(tree.path, capacity + 1, 0),
    )


@njit(cache=True, inline="always")
def add_child(tree: Tree, parent: int, child: int, move: int, seat: int) -> None:
    """Make node ``child`` the last child of ``parent``, reached by ``seat`` playing ``move``
    (inlined in the search's loop)."""
    tree.action[child] = move
    tree.mover[child] = seat
    if tree.last_child[parent] < 0:
        tree.first_child[parent] = child
    else:
        tree.next_sibling[tree.last_child[parent]] = child
    tree.last_child[parent] = child


@njit(cache=True, inline="always")
def backpropagate(tree: Tree, depth: int, result: np.ndarray) -> None:
    """Count a visit to each node of ``tree.path[: depth + 1]``, each scoring ``result`` for
    the seat that moved into it."""
    for k in range(depth + 1):
        visited = tree.path[k]
        tree.visits[visited] += 1
        if tree.mover[visited] >= 0:
            tree.total[visited] += result[tree.mover[visited]]


@njit(cache=True)
def root_children(tree: Tree) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The root's children in the order they were added: moves, visits, total shares."""
    action, visits, total = tree.action, tree.visits, tree.total
    first_child, next_sibling = tree.first_child, tree.next_sibling
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
