"""The compiled UCT search shared by every game with a kernel, and compiled random playouts.

The same search as :mod:`engines.agents.mcts` (per-seat returns for 2–4 players, a seat that
moves several times in a row, uniform expansion in a shuffled order, game or uniform
rollouts, a rollout cap with the game's evaluation, most-visited final pick), with the tree in
preallocated arrays (:mod:`engines.compiled.search_parts`, shared with the information-set
search) and the game played by its kernel through :mod:`engines.compiled.dispatch`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from engines.compiled.dispatch import MAX_ACTIONS, MAX_PLAYERS, apply, current_player, legal_actions
from engines.compiled.dispatch import random_action as uniform_action
from engines.compiled.search_parts import (
    add_child,
    backpropagate,
    copy_position,
    grown_tree,
    initial_capacity,
    new_tree,
    out_of_time,
    playout,
    root_children,
    shares,
)
from engines.kernel_cache import track
from engines.kernel_rng import rand_below, seed_rng


@njit(cache=True)
def search(
    game: int,
    root_state: np.ndarray,
    players: int,
    iterations: int,
    exploration: float,
    rollout: int,
    rollout_cap: int,
    seed: int,
    deadline: float,
) -> int:
    """Run ``iterations`` UCT iterations from ``root_state`` (left untouched), fewer when
    ``deadline`` (a ``perf_counter`` reading; ``NO_DEADLINE``: none) passes first; return the
    most visited move at the root (ties: the higher total, then the first expanded)."""
    moves, visits, totals = root_moves(
        game, root_state, players, iterations, exploration, rollout, rollout_cap, seed, deadline
    )
    if moves.shape[0] == 0:
        return -1
    best = 0
    for i in range(1, moves.shape[0]):
        if visits[i] > visits[best] or (visits[i] == visits[best] and totals[i] > totals[best]):
            best = i
    return moves[best]


@njit(cache=True)
def root_moves(
    game: int,
    root_state: np.ndarray,
    players: int,
    iterations: int,
    exploration: float,
    rollout: int,
    rollout_cap: int,
    seed: int,
    deadline: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run ``iterations`` UCT iterations from ``root_state`` (left untouched), fewer when
    ``deadline`` passes first (checked every ``search_parts.CHECK_EVERY`` iterations; the
    first always runs); return the root's moves, in the order they were expanded, with their
    visits and total shares for the seat to move there."""
    rng = np.zeros(1, dtype=np.uint64)
    seed_rng(rng, seed)
    capacity = initial_capacity(iterations, deadline)
    tree = new_tree(capacity)
    pool = np.empty(min(64 * capacity, 1 << 16), dtype=np.int64)  # grows by doubling
    pool_used = 0
    buf = np.empty(MAX_ACTIONS, dtype=np.int64)
    result = np.zeros(MAX_PLAYERS, dtype=np.float64)
    sim = np.empty_like(root_state)
    nodes = 1
    for iteration in range(iterations):
        if out_of_time(iteration, deadline):
            break
        copy_position(root_state, sim)
        node = 0
        depth = 0
        tree.path[0] = 0
        # Selection: down through fully expanded nodes.
        while True:
            if tree.untried[node] < 0:
                n = legal_actions(game, sim, buf)
                if pool_used + n > pool.shape[0]:
                    bigger = np.empty(2 * pool.shape[0] + n, dtype=np.int64)
                    bigger[:pool_used] = pool[:pool_used]
                    pool = bigger
                for i in range(n):  # Fisher–Yates into the pool
                    j = rand_below(rng, i + 1)
                    pool[pool_used + i] = pool[pool_used + j]
                    pool[pool_used + j] = buf[i]
                tree.untried_at[node] = pool_used
                tree.untried[node] = n
                pool_used += n
            if tree.untried[node] > 0 or tree.first_child[node] < 0:
                break
            log_n = math.log(tree.visits[node])
            best = tree.first_child[node]
            best_score = -math.inf
            child = best
            while child >= 0:
                v = tree.visits[child]
                score = tree.total[child] / v + exploration * math.sqrt(log_n / v)
                if score > best_score:
                    best_score = score
                    best = child
                child = tree.next_sibling[child]
            node = best
            apply(game, sim, tree.action[node])
            depth += 1
            tree.path[depth] = node
        # Expansion: one untried move, unless the game is over here.
        if tree.untried[node] > 0:
            if nodes == capacity:  # only with a deadline, whose arrays start small
                capacity = min(2 * capacity, iterations + 2)
                tree = grown_tree(tree, capacity)
            tree.untried[node] -= 1
            move = pool[tree.untried_at[node] + tree.untried[node]]
            child = nodes
            nodes += 1
            seat = current_player(game, sim)
            add_child(tree, node, child, move, seat)
            apply(game, sim, move)
            depth += 1
            tree.path[depth] = child
        playout(game, sim, rollout, rollout_cap, rng)
        shares(game, sim, players, result)
        backpropagate(tree, depth, result)
    return root_children(tree)


@njit(cache=True)
def random_playouts(game: int, root_state: np.ndarray, games: int, cap: int, seed: int) -> int:
    """Play ``games`` uniformly random games from ``root_state`` (to the end or ``cap``
    plies); return the plies played in all."""
    rng = np.zeros(1, dtype=np.uint64)
    seed_rng(rng, seed)
    sim = np.empty_like(root_state)
    plies = 0
    for _ in range(games):
        copy_position(root_state, sim)
        n = 0
        while n < cap and current_player(game, sim) >= 0:
            apply(game, sim, uniform_action(game, sim, rng))
            n += 1
        plies += n
    return plies


track(globals())
