"""Alquerque's weighted evaluation, compiled: the features of a position and
``tanh(weights · features / 2)`` over them, for the compiled alpha-beta's candidate levels.

:mod:`engines.alquerque.evaluation` is the readable reference (the features' meaning and the
fitted weights); ``tests/engines/test_alquerque_eval.py`` proves the two equal. It sits beside
:mod:`engines.alquerque.kernel`, whose bitboards, capture tables and default ``evaluate`` it
reads, so the rules' kernel keeps to the rules.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.alquerque.board import POINTS, WHITE
from engines.alquerque.evaluation import FEATURE_NAMES
from engines.alquerque.kernel import (
    _STEP_TO,
    BLACK_BITS,
    ENDED,
    MAX_ACTIONS,
    WHITE_BITS,
    WINNER,
    _can_capture,
    _captures,
    _hanging,
    _path_len,
    _popcount,
    _sides,
    _steps,
    evaluate,
)
from engines.kernel_cache import track

_FEATURES = len(FEATURE_NAMES)
_CENTRE = (1 << 6) | (1 << 8) | (1 << 12) | (1 << 16) | (1 << 18)
_FAR_ROW = np.array([31 << 20, 31], dtype=np.int64)
"""Per colour, the row it cannot leave forwards (White's row 5, Black's row 1)."""
_ROW_ABOVE = 5
_START_PIECES = 24


@njit(cache=True)
def _longest_chain(own: int, enemy: int) -> int:
    """Most pieces one capture of ``own`` takes now (0 when it has none): the longest of the
    kernel's capture sequences, each of which lands once a jump."""
    if not _can_capture(own, enemy):
        return 0
    codes = np.empty(MAX_ACTIONS, dtype=np.int64)
    n = _captures(own, enemy, codes, 0)
    longest = 0
    for i in range(n):
        longest = max(longest, _path_len(codes[i]) - 1)
    return longest


@njit(cache=True)
def _safe_moves(own: int, enemy: int, colour: int) -> int:
    """Simple moves of ``own`` after which ``enemy`` has no capture."""
    empty = ((1 << POINTS) - 1) ^ own ^ enemy
    count = 0
    for p in range(POINTS):
        if not own >> p & 1:
            continue
        for k in range(8):
            q = _STEP_TO[colour, p, k]
            if q < 0:
                break
            if empty >> q & 1 and not _can_capture(enemy, own ^ (1 << p) ^ (1 << q)):
                count += 1
    return count


@njit(cache=True)
def _supported(own: int, colour: int) -> int:
    if colour == WHITE:
        return _popcount(own & (own << _ROW_ABOVE))
    return _popcount(own & (own >> _ROW_ABOVE))


@njit(cache=True)
def _rows_ahead(own: int, colour: int) -> int:
    """Rows still ahead of ``own``'s pieces, summed (White's forward is up the rows)."""
    total = 0
    for p in range(POINTS):
        if own >> p & 1:
            row = p // _ROW_ABOVE
            total += _ROW_ABOVE - 1 - row if colour == WHITE else row
    return total


@njit(cache=True)
def features(state: np.ndarray, seat: int, out: np.ndarray) -> None:
    """The position's features for ``seat`` into ``out``, in the order of ``FEATURE_NAMES``."""
    if seat == WHITE:
        own, enemy = state[WHITE_BITS], state[BLACK_BITS]
    else:
        own, enemy = state[BLACK_BITS], state[WHITE_BITS]
    moving, waiting, mover = _sides(state)
    empty = ((1 << POINTS) - 1) ^ own ^ enemy
    ready = _longest_chain(moving, waiting)
    safe = _safe_moves(moving, waiting, mover)
    sign = 1.0 if mover == seat else -1.0
    out[0] = _popcount(own) - _popcount(enemy)
    out[1] = sign
    out[2] = sign * ready
    out[3] = sign * _longest_chain(waiting, moving)
    out[4] = sign * _hanging(waiting, moving, empty)
    out[5] = sign * safe
    out[6] = sign if ready == 0 and safe == 0 else 0.0
    out[7] = _steps(own, empty, seat) - _steps(enemy, empty, 1 - seat)
    out[8] = _supported(own, seat) - _supported(enemy, 1 - seat)
    out[9] = _popcount(own & _CENTRE) - _popcount(enemy & _CENTRE)
    out[10] = _popcount(own & _FAR_ROW[seat]) - _popcount(enemy & _FAR_ROW[1 - seat])
    taken = _START_PIECES - _popcount(own) - _popcount(enemy)
    ahead = _rows_ahead(own, seat) - _rows_ahead(enemy, 1 - seat)
    out[11] = ahead * taken / _START_PIECES


@njit(cache=True)
def evaluate_weighted(state: np.ndarray, seat: int, weights: np.ndarray) -> float:
    """``tanh(weights · features / 2)`` for ``seat`` (the logistic model of
    ``engines.alquerque.evaluation``); with no weights, the default ``evaluate``."""
    if weights.shape[0] == 0:
        return evaluate(state, seat)
    if state[ENDED]:
        winner = state[WINNER]
        return 0.0 if winner < 0 else (1.0 if winner == seat else -1.0)
    values = np.empty(_FEATURES, dtype=np.float64)
    features(state, seat, values)
    total = 0.0
    for i in range(values.shape[0]):
        total += weights[i] * values[i]
    return np.tanh(total / 2.0)


track(globals())
