"""The compiled UCT search shared by every game with a kernel, and compiled random playouts.

The same search as :mod:`engines.agents.mcts` (per-seat returns for 2–4 players, a seat that
moves several times in a row, uniform expansion in a shuffled order, game or uniform
rollouts, a rollout cap with the game's evaluation, most-visited final pick), with the tree in
preallocated arrays and the game played by its kernel.

A game is reached through a small integer id, its place in
:data:`engines.compiled.kernels.KERNEL_GAMES` (``ALVEOLES``, ``ALQUERQUE``, ``ABALONE``
below): the ``_legal``, ``_apply``… functions branch on it and call that game's kernel. A
branch on an id inside ``@njit`` functions is what keeps numba's on-disk cache working:
functions passed as arguments, or closures built per game, are compiled again in every
process. Giving a game a kernel means its declaration in ``KERNEL_GAMES``, its id constant
and import here, and one more branch in each dispatch function (ARCHITECTURE.md, "A game
kernel"); an id no branch takes raises. The rest (``KERNEL_MODULES``, ``MAX_ACTIONS``, the
cache key) follows from the declaration. The dispatch functions are inlined where they are
called (``inline="always"``, numba's own inlining): a call that passes arrays costs about
what a random Abalone ply costs (it took the kernel's random playouts from 0.18 to 0.13 µs a
ply), and the search and the playouts make several a ply.
"""

from __future__ import annotations

import importlib
import math
from types import ModuleType

import numpy as np
from numba import njit

from engines import kernel_clock, kernel_rng
from engines.abalone import kernel as abalone
from engines.alhambra import kernel as alhambra
from engines.alhambra import kernel_build as alhambra_build
from engines.alhambra import kernel_money as alhambra_money
from engines.alhambra import kernel_rules as alhambra_rules
from engines.alquerque import kernel as alquerque
from engines.alveoles import kernel as alveoles
from engines.compiled.kernels import KERNEL_GAMES, kernel_id, kernel_module
from engines.kernel_cache import track
from engines.kernel_clock import NO_DEADLINE, past
from engines.kernel_rng import rand_below, seed_rng

ALVEOLES = kernel_id("alveoles")
ALQUERQUE = kernel_id("alquerque")
ABALONE = kernel_id("abalone")
ALHAMBRA = kernel_id("alhambra")
KERNEL_MODULES: tuple[ModuleType, ...] = tuple(
    importlib.import_module(kernel_module(name)) for name in KERNEL_GAMES
)
"""The declared kernels by id; each one's ``encode`` gives the position the search takes."""
RANDOM_ROLLOUT, GAME_ROLLOUT, STRONG_ROLLOUT = 0, 1, 2
"""Playout policies: uniform, the game's ``rollout_action``, its ``strong_rollout_action``."""
MAX_PLAYERS = 6
MAX_ACTIONS = max(kernel.MAX_ACTIONS for kernel in KERNEL_MODULES)
NO_BRANCH = "engines.compiled.uct: no dispatch branch for this kernel id"
CHECK_EVERY = 16
"""Iterations between two looks at the clock when a search has a deadline."""
TIMED_NODES = 4096
"""Nodes a search with a deadline makes room for at first, doubling as it needs: one that
stops at its deadline may run far fewer iterations than its budget, and making room for a
budget of a million would take longer than a Blitz move."""


@njit(cache=True, inline="always")
def _legal(game: int, state: np.ndarray, out: np.ndarray) -> int:
    if game == ALVEOLES:
        return alveoles.legal_actions(state, out)
    if game == ALQUERQUE:
        return alquerque.legal_actions(state, out)
    if game == ABALONE:
        return abalone.legal_actions(state, out)
    if game == ALHAMBRA:
        return alhambra.legal_actions(state, out)
    raise ValueError(NO_BRANCH)


@njit(cache=True, inline="always")
def _apply(game: int, state: np.ndarray, action: int) -> None:
    if game == ALVEOLES:
        alveoles.apply(state, action)
    elif game == ALQUERQUE:
        alquerque.apply(state, action)
    elif game == ABALONE:
        abalone.apply(state, action)
    elif game == ALHAMBRA:
        alhambra.apply(state, action)
    else:
        raise ValueError(NO_BRANCH)


@njit(cache=True, inline="always")
def _player(game: int, state: np.ndarray) -> int:
    if game == ALVEOLES:
        return alveoles.current_player(state)
    if game == ALQUERQUE:
        return alquerque.current_player(state)
    if game == ABALONE:
        return abalone.current_player(state)
    if game == ALHAMBRA:
        return alhambra.current_player(state)
    raise ValueError(NO_BRANCH)


@njit(cache=True, inline="always")
def _returns(game: int, state: np.ndarray, out: np.ndarray) -> None:
    if game == ALVEOLES:
        alveoles.returns(state, out)
    elif game == ALQUERQUE:
        alquerque.returns(state, out)
    elif game == ABALONE:
        abalone.returns(state, out)
    elif game == ALHAMBRA:
        alhambra.returns(state, out)
    else:
        raise ValueError(NO_BRANCH)


@njit(cache=True, inline="always")
def _evaluate(game: int, state: np.ndarray, seat: int) -> float:
    if game == ALVEOLES:
        return alveoles.evaluate(state, seat)
    if game == ALQUERQUE:
        return alquerque.evaluate(state, seat)
    if game == ABALONE:
        return abalone.evaluate(state, seat)
    if game == ALHAMBRA:
        return alhambra.evaluate(state, seat)
    raise ValueError(NO_BRANCH)


@njit(cache=True, inline="always")
def _random_action(game: int, state: np.ndarray, rng: np.ndarray) -> int:
    if game == ALVEOLES:
        return alveoles.random_action(state, rng)
    if game == ALQUERQUE:
        return alquerque.random_action(state, rng)
    if game == ABALONE:
        return abalone.random_action(state, rng)
    if game == ALHAMBRA:
        return alhambra.random_action(state, rng)
    raise ValueError(NO_BRANCH)


@njit(cache=True, inline="always")
def _rollout_action(game: int, state: np.ndarray, rng: np.ndarray) -> int:
    if game == ALVEOLES:
        return alveoles.rollout_action(state, rng)
    if game == ALQUERQUE:
        return alquerque.rollout_action(state, rng)
    if game == ABALONE:
        return abalone.rollout_action(state, rng)
    if game == ALHAMBRA:
        return alhambra.rollout_action(state, rng)
    raise ValueError(NO_BRANCH)


@njit(cache=True, inline="always")
def _strong_rollout_action(game: int, state: np.ndarray, rng: np.ndarray) -> int:
    if game == ALVEOLES:
        return alveoles.strong_rollout_action(state, rng)
    if game == ALQUERQUE:
        return alquerque.strong_rollout_action(state, rng)
    if game == ABALONE:
        return abalone.strong_rollout_action(state, rng)
    if game == ALHAMBRA:
        return alhambra.strong_rollout_action(state, rng)
    raise ValueError(NO_BRANCH)


@njit(cache=True)
def _shares(game: int, state: np.ndarray, players: int, out: np.ndarray) -> None:
    """Per-seat shares in [0, 1]: the returns once over, else from the game's evaluation
    (inverted and renormalised as the Python search does)."""
    if _player(game, state) < 0:
        _returns(game, state, out)
        return
    scale = (players - 1) / players
    total = 0.0
    for s in range(players):
        raw = max(0.0, _evaluate(game, state, s) * scale + 1.0 / players)
        out[s] = raw
        total += raw
    for s in range(players):
        out[s] = out[s] / total if total > 0 else 1.0 / players


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
    ``deadline`` passes first (checked every ``CHECK_EVERY`` iterations; the first always
    runs); return the root's moves, in the order they were expanded, with their visits and
    total shares for the seat to move there."""
    rng = np.zeros(1, dtype=np.uint64)
    seed_rng(rng, seed)
    timed = deadline != NO_DEADLINE
    # Every iteration adds at most one node to the root: iterations + 2 never runs out.
    capacity = min(iterations + 2, TIMED_NODES) if timed else iterations + 2
    action = np.empty(capacity, dtype=np.int64)
    mover = np.empty(capacity, dtype=np.int64)
    visits = np.zeros(capacity, dtype=np.int64)
    total = np.zeros(capacity, dtype=np.float64)
    first_child = np.full(capacity, -1, dtype=np.int64)
    last_child = np.full(capacity, -1, dtype=np.int64)
    next_sibling = np.full(capacity, -1, dtype=np.int64)
    untried_at = np.zeros(capacity, dtype=np.int64)
    untried = np.full(capacity, -1, dtype=np.int64)  # -1: moves not listed yet
    pool = np.empty(min(64 * capacity, 1 << 16), dtype=np.int64)  # grows by doubling
    pool_used = 0
    buf = np.empty(MAX_ACTIONS, dtype=np.int64)
    path = np.empty(capacity + 1, dtype=np.int64)
    shares = np.zeros(MAX_PLAYERS, dtype=np.float64)
    sim = np.empty_like(root_state)
    nodes = 1
    action[0] = -1
    mover[0] = -1
    for iteration in range(iterations):
        if timed and iteration > 0 and iteration % CHECK_EVERY == 0 and past(deadline):
            break
        sim[:] = root_state
        node = 0
        depth = 0
        path[0] = 0
        # Selection: down through fully expanded nodes.
        while True:
            if untried[node] < 0:
                n = _legal(game, sim, buf)
                if pool_used + n > pool.shape[0]:
                    bigger = np.empty(2 * pool.shape[0] + n, dtype=np.int64)
                    bigger[:pool_used] = pool[:pool_used]
                    pool = bigger
                for i in range(n):  # Fisher–Yates into the pool
                    j = rand_below(rng, i + 1)
                    pool[pool_used + i] = pool[pool_used + j]
                    pool[pool_used + j] = buf[i]
                untried_at[node] = pool_used
                untried[node] = n
                pool_used += n
            if untried[node] > 0 or first_child[node] < 0:
                break
            log_n = math.log(visits[node])
            best = first_child[node]
            best_score = -math.inf
            child = best
            while child >= 0:
                v = visits[child]
                score = total[child] / v + exploration * math.sqrt(log_n / v)
                if score > best_score:
                    best_score = score
                    best = child
                child = next_sibling[child]
            node = best
            _apply(game, sim, action[node])
            depth += 1
            path[depth] = node
        # Expansion: one untried move, unless the game is over here.
        if untried[node] > 0:
            if nodes == capacity:  # only with a deadline, whose arrays start small
                capacity = min(2 * capacity, iterations + 2)
                action = _grown(action, capacity, -1)
                mover = _grown(mover, capacity, -1)
                visits = _grown(visits, capacity, 0)
                total = _grown_float(total, capacity)
                first_child = _grown(first_child, capacity, -1)
                last_child = _grown(last_child, capacity, -1)
                next_sibling = _grown(next_sibling, capacity, -1)
                untried_at = _grown(untried_at, capacity, 0)
                untried = _grown(untried, capacity, -1)
                path = _grown(path, capacity + 1, 0)
            untried[node] -= 1
            move = pool[untried_at[node] + untried[node]]
            child = nodes
            nodes += 1
            action[child] = move
            mover[child] = _player(game, sim)
            if last_child[node] < 0:
                first_child[node] = child
            else:
                next_sibling[last_child[node]] = child
            last_child[node] = child
            _apply(game, sim, move)
            depth += 1
            path[depth] = child
        # Simulation.
        plies = 0
        if rollout == GAME_ROLLOUT:
            while plies < rollout_cap and _player(game, sim) >= 0:
                _apply(game, sim, _rollout_action(game, sim, rng))
                plies += 1
        elif rollout == STRONG_ROLLOUT:
            while plies < rollout_cap and _player(game, sim) >= 0:
                _apply(game, sim, _strong_rollout_action(game, sim, rng))
                plies += 1
        else:
            while plies < rollout_cap and _player(game, sim) >= 0:
                _apply(game, sim, _random_action(game, sim, rng))
                plies += 1
        _shares(game, sim, players, shares)
        # Backpropagation: each node scores for the seat that moved into it.
        for k in range(depth + 1):
            visited = path[k]
            visits[visited] += 1
            if mover[visited] >= 0:
                total[visited] += shares[mover[visited]]
    # The root's children, in the order they were expanded.
    count = 0
    child = first_child[0]
    while child >= 0:
        count += 1
        child = next_sibling[child]
    moves = np.empty(count, dtype=np.int64)
    seen = np.empty(count, dtype=np.int64)
    shares = np.empty(count, dtype=np.float64)
    child = first_child[0]
    for i in range(count):
        moves[i] = action[child]
        seen[i] = visits[child]
        shares[i] = total[child]
        child = next_sibling[child]
    return moves, seen, shares


@njit(cache=True)
def random_playouts(game: int, root_state: np.ndarray, games: int, cap: int, seed: int) -> int:
    """Play ``games`` uniformly random games from ``root_state`` (to the end or ``cap``
    plies); return the plies played in all."""
    rng = np.zeros(1, dtype=np.uint64)
    seed_rng(rng, seed)
    sim = np.empty_like(root_state)
    plies = 0
    for _ in range(games):
        sim[:] = root_state
        n = 0
        while n < cap and _player(game, sim) >= 0:
            _apply(game, sim, _random_action(game, sim, rng))
            n += 1
        plies += n
    return plies


track(
    globals(),
    kernel_rng,
    kernel_clock,
    *KERNEL_MODULES,
    alhambra_rules,
    alhambra_build,
    alhambra_money,
)
