"""Compiled information-set MCTS for games with hidden information and chance (Alhambra).

The search of :mod:`engines.alhambra.ismcts` over a game's kernel: one tree over the searching
seat's information set; each iteration re-draws what that seat cannot see (the kernel's
``redraw``, one determinisation per iteration), walks the tree using only the moves legal in
that determinisation (UCB with availability counts), adds one node, plays on with the game's
playout policy for at most ``rollout_plies`` plies and scores the end with the game's
``evaluate``. Each node considers only its ``width`` most promising moves: at the root the
candidates and their prior come from the caller (the agent's heuristic), below it the
kernel's ``quick_score``.

Chance during play (the spent money reshuffled into a new deck) is drawn by the position's own
generator, which ``redraw`` re-seeds from the search's generator each iteration.

Only the choice of a child is its own: the tree, its growth under a deadline, the playouts,
the clock and the scoring are UCT's (:mod:`engines.compiled.search_parts`), and the kernel is
reached through :mod:`engines.compiled.dispatch`, whose ``redraw`` branches only for the games
of :data:`engines.compiled.kernels.HIDDEN_GAMES`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from engines.compiled.dispatch import (
    MAX_ACTIONS,
    MAX_PLAYERS,
    apply,
    current_player,
    greedy_rollout_action,
    legal_actions,
    quick_score,
    redraw,
)
from engines.compiled.search_parts import (
    add_child,
    backpropagate,
    copy_position,
    grown_tree,
    initial_capacity,
    new_tree,
    out_of_time,
    playout,
    shares,
)
from engines.kernel_cache import track
from engines.kernel_rng import rand_below, seed_rng

GREEDY_ROLLOUT = 3
"""The playout policy of this search alone, beside :mod:`search_parts`' three: the kernel's
``greedy_rollout_action``, each move weighted by its quick score."""


@njit(cache=True)
def hidden_playout(game: int, sim: np.ndarray, rollout: int, cap: int, rng: np.ndarray) -> int:
    """:func:`search_parts.playout`, or with ``GREEDY_ROLLOUT`` the greedy-weighted playout
    (kept here so that the other searches' code and cache key do not reach it)."""
    if rollout != GREEDY_ROLLOUT:
        return playout(game, sim, rollout, cap, rng)
    plies = 0
    while plies < cap and current_player(game, sim) >= 0:
        apply(game, sim, greedy_rollout_action(game, sim, rng))
        plies += 1
    return plies


@njit(cache=True)
def candidates(game: int, state: np.ndarray, width: int, buf: np.ndarray, out: np.ndarray) -> int:
    """The ``width`` legal moves with the best quick score (ties: the lower action number)."""
    n = legal_actions(game, state, buf)
    scores = np.empty(n, dtype=np.float64)
    for i in range(n):
        scores[i] = quick_score(game, state, buf[i])
    k = min(width, n)
    for j in range(k):
        best = -1
        for i in range(n):
            if scores[i] == -math.inf:
                continue
            if (
                best < 0
                or scores[i] > scores[best]
                or (scores[i] == scores[best] and buf[i] < buf[best])
            ):
                best = i
        out[j] = buf[best]
        scores[best] = -math.inf
    return k


@njit(cache=True)
def root_moves(
    game: int,
    root_state: np.ndarray,
    players: int,
    iterations: int,
    exploration: float,
    rollout_plies: int,
    width: int,
    root_actions: np.ndarray,
    root_bias: np.ndarray,
    prior: float,
    rollout: int,
    seed: int,
    deadline: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run ``iterations`` iterations from the seat to move's information set (``root_state``
    is left untouched; its hidden order is re-drawn before every use), or fewer when
    ``deadline`` (a ``perf_counter`` time; ``NO_DEADLINE`` for none) passes first, checked
    every ``CHECK_EVERY`` iterations after the first; return the visits and total shares of
    each of ``root_actions`` (0 visits: never tried). Below the root each node considers its
    ``width`` best moves by ``quick_score`` (any width up to the kernel's ``MAX_ACTIONS``)."""
    rng = np.zeros(1, dtype=np.uint64)
    seed_rng(rng, seed)
    capacity = initial_capacity(iterations, deadline)
    tree = new_tree(capacity)
    buf = np.empty(MAX_ACTIONS, dtype=np.int64)
    n_root = root_actions.shape[0]
    room = max(n_root, min(width, MAX_ACTIONS))
    options = np.empty(room, dtype=np.int64)
    child_of = np.empty(room, dtype=np.int64)
    result = np.zeros(MAX_PLAYERS, dtype=np.float64)
    sim = np.empty_like(root_state)
    nodes = 1
    for iteration in range(iterations):
        if out_of_time(iteration, deadline):
            break
        copy_position(root_state, sim)
        redraw(game, sim, rng)
        node = 0
        depth = 0
        tree.path[0] = 0
        while current_player(game, sim) >= 0:
            if node == 0:
                k = n_root
                options[:k] = root_actions
            else:
                k = candidates(game, sim, width, buf, options)
            untried = 0
            for i in range(k):
                child_of[i] = -1
                c = tree.first_child[node]
                while c >= 0:
                    if tree.action[c] == options[i]:
                        child_of[i] = c
                        break
                    c = tree.next_sibling[c]
                if child_of[i] < 0:
                    untried += 1
            if untried > 0:
                move = options[0]
                pick = rand_below(rng, untried)
                for i in range(k):
                    if child_of[i] < 0:
                        if pick == 0:
                            move = options[i]
                            break
                        pick -= 1
                if nodes == capacity:  # only with a deadline, whose arrays start small
                    capacity = min(2 * capacity, iterations + 2)
                    tree = grown_tree(tree, capacity)
                child = nodes
                nodes += 1
                seat = current_player(game, sim)
                add_child(tree, node, child, move, seat)
                for i in range(k):
                    if child_of[i] >= 0:
                        tree.avail[child_of[i]] += 1
                apply(game, sim, move)
                depth += 1
                tree.path[depth] = child
                break
            best = -1
            best_score = -math.inf
            for i in range(k):
                c = child_of[i]
                tree.avail[c] += 1
                score = tree.total[c] / tree.visits[c] + exploration * math.sqrt(
                    math.log(tree.avail[c]) / tree.visits[c]
                )
                if node == 0:
                    score += prior * root_bias[i] / (1 + tree.visits[c])
                if score > best_score:
                    best_score = score
                    best = c
            node = best
            apply(game, sim, tree.action[node])
            depth += 1
            tree.path[depth] = node
        hidden_playout(game, sim, rollout, rollout_plies, rng)
        shares(game, sim, players, result)
        backpropagate(tree, depth, result)
    seen = np.zeros(n_root, dtype=np.int64)
    sums = np.zeros(n_root, dtype=np.float64)
    c = tree.first_child[0]
    while c >= 0:
        for i in range(n_root):
            if root_actions[i] == tree.action[c]:
                seen[i] = tree.visits[c]
                sums[i] = tree.total[c]
        c = tree.next_sibling[c]
    return root_actions.copy(), seen, sums


track(globals())
