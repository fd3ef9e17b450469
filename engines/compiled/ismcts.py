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

The kernel is reached through its id, as in :mod:`engines.compiled.uct` (a branch per game in
each dispatch function below, so numba caches the search on disk); the games the compiled
search plays without hidden information have no branch here and are refused.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from engines import kernel_clock, kernel_rng
from engines.alhambra import kernel as alhambra
from engines.alhambra import kernel_build, kernel_money, kernel_rules
from engines.compiled import uct
from engines.compiled.kernels import kernel_id
from engines.compiled.uct import (
    CHECK_EVERY,
    _apply,
    _legal,
    _player,
    _random_action,
    _rollout_action,
    _shares,
    _strong_rollout_action,
)
from engines.kernel_cache import track
from engines.kernel_clock import past
from engines.kernel_rng import rand_below, seed_rng

ALHAMBRA = kernel_id("alhambra")
HIDDEN_GAMES = ("alhambra",)
"""Games whose compiled search is this one: their kernels have ``redraw`` and
``quick_score``."""
MAX_PLAYERS = 6
MAX_WIDTH = 64
NO_BRANCH = "engines.compiled.ismcts: no dispatch branch for this kernel id"


@njit(cache=True)
def _redraw(game: int, state: np.ndarray, rng: np.ndarray) -> None:
    if game == ALHAMBRA:
        alhambra.redraw(state, rng)
    else:
        raise ValueError(NO_BRANCH)


@njit(cache=True)
def _quick_score(game: int, state: np.ndarray, action: int) -> float:
    if game == ALHAMBRA:
        return alhambra.quick_score(state, action)
    raise ValueError(NO_BRANCH)


@njit(cache=True)
def _candidates(game: int, state: np.ndarray, width: int, buf: np.ndarray, out: np.ndarray) -> int:
    """The ``width`` legal moves with the best quick score (ties: the lower action number)."""
    n = _legal(game, state, buf)
    scores = np.empty(n, dtype=np.float64)
    for i in range(n):
        scores[i] = _quick_score(game, state, buf[i])
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
    each of ``root_actions`` (0 visits: never tried)."""
    rng = np.zeros(1, dtype=np.uint64)
    seed_rng(rng, seed)
    capacity = iterations + 2
    action = np.empty(capacity, dtype=np.int64)
    mover = np.empty(capacity, dtype=np.int64)
    visits = np.zeros(capacity, dtype=np.int64)
    avail = np.ones(capacity, dtype=np.int64)
    total = np.zeros(capacity, dtype=np.float64)
    first_child = np.full(capacity, -1, dtype=np.int64)
    next_sibling = np.full(capacity, -1, dtype=np.int64)
    buf = np.empty(uct.MAX_ACTIONS, dtype=np.int64)
    options = np.empty(MAX_WIDTH, dtype=np.int64)
    child_of = np.empty(MAX_WIDTH, dtype=np.int64)
    path = np.empty(capacity + 1, dtype=np.int64)
    shares = np.zeros(MAX_PLAYERS, dtype=np.float64)
    sim = np.empty_like(root_state)
    nodes = 1
    action[0] = -1
    mover[0] = -1
    n_root = root_actions.shape[0]
    for iteration in range(iterations):
        if iteration > 0 and iteration % CHECK_EVERY == 0 and past(deadline):
            break
        sim[:] = root_state
        _redraw(game, sim, rng)
        node = 0
        depth = 0
        path[0] = 0
        while _player(game, sim) >= 0:
            if node == 0:
                k = n_root
                options[:k] = root_actions
            else:
                k = _candidates(game, sim, width, buf, options)
            untried = 0
            for i in range(k):
                child_of[i] = -1
                c = first_child[node]
                while c >= 0:
                    if action[c] == options[i]:
                        child_of[i] = c
                        break
                    c = next_sibling[c]
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
                child = nodes
                nodes += 1
                action[child] = move
                mover[child] = _player(game, sim)
                next_sibling[child] = first_child[node]
                first_child[node] = child
                for i in range(k):
                    if child_of[i] >= 0:
                        avail[child_of[i]] += 1
                _apply(game, sim, move)
                depth += 1
                path[depth] = child
                break
            best = -1
            best_score = -math.inf
            for i in range(k):
                c = child_of[i]
                avail[c] += 1
                score = total[c] / visits[c] + exploration * math.sqrt(
                    math.log(avail[c]) / visits[c]
                )
                if node == 0:
                    score += prior * root_bias[i] / (1 + visits[c])
                if score > best_score:
                    best_score = score
                    best = c
            node = best
            _apply(game, sim, action[node])
            depth += 1
            path[depth] = node
        plies = 0
        while plies < rollout_plies and _player(game, sim) >= 0:
            if rollout == uct.STRONG_ROLLOUT:
                move = _strong_rollout_action(game, sim, rng)
            elif rollout == uct.GAME_ROLLOUT:
                move = _rollout_action(game, sim, rng)
            else:
                move = _random_action(game, sim, rng)
            _apply(game, sim, move)
            plies += 1
        _shares(game, sim, players, shares)
        for d in range(depth + 1):
            visited = path[d]
            visits[visited] += 1
            if mover[visited] >= 0:
                total[visited] += shares[mover[visited]]
    seen = np.zeros(n_root, dtype=np.int64)
    sums = np.zeros(n_root, dtype=np.float64)
    c = first_child[0]
    while c >= 0:
        for i in range(n_root):
            if root_actions[i] == action[c]:
                seen[i] = visits[c]
                sums[i] = total[c]
        c = next_sibling[c]
    return root_actions.copy(), seen, sums


track(globals(), kernel_rng, kernel_clock, uct, alhambra, kernel_rules, kernel_build, kernel_money)
