"""A game's kernel functions by its id: what every compiled search calls.

A game is reached through a small integer id, its place in
:data:`engines.compiled.kernels.KERNEL_GAMES`: each function here branches on it and calls that
game's kernel. A branch on an id inside ``@njit`` functions is what keeps numba's on-disk cache
working: functions passed as arguments, or closures built per game, are compiled again in every
process. Giving a game a kernel means its declaration in ``KERNEL_GAMES``, its id constant and
import here, and one more branch in each function (ARCHITECTURE.md, "A game kernel"); an id no
branch takes raises. ``KERNEL_MODULES`` and ``MAX_ACTIONS`` follow from the declaration, and
the cache key from what the searches reach (:mod:`engines.kernel_cache`).

The functions are inlined where they are called (``inline="always"``, numba's own inlining): a
call that passes arrays costs about what a random Abalone ply costs (it took the kernel's random
playouts from 0.18 to 0.13 µs a ply), and the searches and the playouts make several a ply.

``redraw``, ``quick_score`` and ``greedy_rollout_action`` exist for the games with hidden
information
(:data:`engines.compiled.kernels.HIDDEN_GAMES`), whose search is the information-set MCTS; the
alpha-beta's own needs are in :mod:`engines.compiled.dispatch_alphabeta`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import numpy as np
from numba import njit

from engines.abalone import kernel as abalone
from engines.alhambra import kernel as alhambra
from engines.alquerque import kernel as alquerque
from engines.alveoles import kernel as alveoles
from engines.compiled.kernels import KERNEL_GAMES, kernel_id, kernel_module
from engines.kernel_cache import track

ALVEOLES = kernel_id("alveoles")
ALQUERQUE = kernel_id("alquerque")
ABALONE = kernel_id("abalone")
ALHAMBRA = kernel_id("alhambra")
KERNEL_MODULES: tuple[ModuleType, ...] = tuple(
    importlib.import_module(kernel_module(name)) for name in KERNEL_GAMES
)
"""The declared kernels by id; each one's ``encode`` gives the position the searches take."""
MAX_PLAYERS = 6
MAX_ACTIONS = max(kernel.MAX_ACTIONS for kernel in KERNEL_MODULES)
NO_BRANCH = "engines.compiled.dispatch: no dispatch branch for this kernel id"


@njit(cache=True, inline="always")
def legal_actions(game: int, state: np.ndarray, out: np.ndarray) -> int:
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
def apply(game: int, state: np.ndarray, action: int) -> None:
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
def current_player(game: int, state: np.ndarray) -> int:
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
def returns(game: int, state: np.ndarray, out: np.ndarray) -> None:
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
def evaluate(game: int, state: np.ndarray, seat: int) -> float:
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
def random_action(game: int, state: np.ndarray, rng: np.ndarray) -> int:
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
def rollout_action(game: int, state: np.ndarray, rng: np.ndarray) -> int:
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
def strong_rollout_action(game: int, state: np.ndarray, rng: np.ndarray) -> int:
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
def redraw(game: int, state: np.ndarray, rng: np.ndarray) -> None:
    """Draw the hidden order again from what every seat knows (hidden-information games)."""
    if game == ALHAMBRA:
        alhambra.redraw(state, rng)
    else:
        raise ValueError(NO_BRANCH)


@njit(cache=True)
def greedy_rollout_action(game: int, state: np.ndarray, rng: np.ndarray) -> int:
    """A playout move weighted by the kernel's ``quick_score`` (hidden-information games)."""
    if game == ALHAMBRA:
        return alhambra.greedy_rollout_action(state, rng)
    raise ValueError(NO_BRANCH)


@njit(cache=True)
def quick_score(game: int, state: np.ndarray, action: int) -> float:
    """The kernel's cheap heuristic score of ``action`` (hidden-information games)."""
    if game == ALHAMBRA:
        return alhambra.quick_score(state, action)
    raise ValueError(NO_BRANCH)


track(globals())
