"""What the compiled alpha-beta asks of a game's kernel beyond what UCT asks.

The same id dispatch as :mod:`engines.compiled.dispatch` (a branch on a game's place in
:data:`engines.compiled.kernels.KERNEL_GAMES`, which keeps numba's on-disk cache working), for
three more functions of a two-player kernel:

- ``key(state) -> int``: the position (side to move included) as a 64-bit key for the
  transposition table;
- ``action_class(state, action) -> int``: 2 for a forcing move (a capture, an ejection, a
  closed square: what the quiescence step follows), 1 for a push that ejects nothing, else 0;
- a test that the side to move may have a forcing move (``may_capture``, ``may_close``,
  ``may_eject``), so that a quiet position is not listed for them;
- where a game has solved endings, what its table decides of a position (``solved(state,
  table)``, Alquerque's ``endgame.probe``);
- the evaluation for a seat, in [-1, 1], with the game's weights where it has any
  (``evaluate_weighted(state, seat, weights)``; Abalone's, in the order of its
  ``WEIGHT_NAMES``, Alquerque's in the order of ``engines.alquerque.evaluation.FEATURE_NAMES``,
  each game's default evaluation when the array is empty), else the kernel's ``evaluate`` (the
  weights array is then unread).

A game whose kernel the alpha-beta should play gets one branch in each function here besides
its branches in :mod:`engines.compiled.dispatch`; an id no branch takes raises.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from engines.abalone import kernel as abalone
from engines.alquerque import endgame as alquerque_endgame
from engines.alquerque import kernel as alquerque
from engines.alquerque import kernel_weighted as alquerque_weighted
from engines.alveoles import kernel as alveoles
from engines.compiled.dispatch import ABALONE, ALQUERQUE, ALVEOLES, NO_BRANCH
from engines.compiled.kernels import kernel_id
from engines.core import Game
from engines.kernel_cache import track

FORCING = 2
"""``action_class`` of a move the quiescence step searches."""
PUSH = 1
"""``action_class`` of a move ordered after the forcing ones and before the rest."""


@njit(cache=True)
def key_of(game: int, state: np.ndarray) -> int:
    if game == ALVEOLES:
        return alveoles.key(state)
    if game == ALQUERQUE:
        return alquerque.key(state)
    if game == ABALONE:
        return abalone.key(state)
    raise ValueError(NO_BRANCH)


@njit(cache=True)
def action_class(game: int, state: np.ndarray, action: int) -> int:
    if game == ALVEOLES:
        return alveoles.action_class(state, action)
    if game == ALQUERQUE:
        return alquerque.action_class(state, action)
    if game == ABALONE:
        return abalone.action_class(state, action)
    raise ValueError(NO_BRANCH)


@njit(cache=True)
def may_force(game: int, state: np.ndarray) -> bool:
    """False only when no legal move of the side to move is forcing: spares the quiescence
    step listing the moves of a quiet position."""
    if game == ALVEOLES:
        return alveoles.may_close(state)
    if game == ALQUERQUE:
        return alquerque.may_capture(state)
    if game == ABALONE:
        return abalone.may_eject(state)
    raise ValueError(NO_BRANCH)


@njit(cache=True)
def evaluate_weighted(game: int, state: np.ndarray, seat: int, weights: np.ndarray) -> float:
    if game == ALVEOLES:
        return alveoles.evaluate(state, seat)
    if game == ALQUERQUE:
        return alquerque_weighted.evaluate_weighted(state, seat, weights)
    if game == ABALONE:
        if weights.shape[0] == 0:
            return abalone.evaluate(state, seat)
        return abalone.evaluate_weighted(state, seat, weights)
    raise ValueError(NO_BRANCH)


def endgame_loader(game: Game) -> Callable[[], np.ndarray] | None:
    """What loads ``game``'s table of solved endings for ``solved`` (None: it has none, or
    none for these rules); only Alquerque has one."""
    if kernel_id(game.name) == ALQUERQUE:
        return alquerque_endgame.table_loader(game)
    return None


@njit(cache=True)
def solved(game: int, state: np.ndarray, table: np.ndarray) -> int:
    """What the game's endgame table decides of a position for the side to move: ``c`` > 0, a
    win in at most ``c`` plies before a capture; ``-c`` < 0, a loss that can be put off for
    ``c - 1``; 0, nothing (a draw, or a position it does not hold). Only Alquerque has one."""
    if game == ALQUERQUE:
        return alquerque_endgame.probe(table, state)
    return 0


track(globals())
