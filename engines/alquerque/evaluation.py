"""A weighted Alquerque evaluation, in readable Python: the reference for the compiled
``kernel_weighted.evaluate_weighted`` (``tests/engines/test_alquerque_eval.py`` proves the two
equal).

The evaluation is a logistic model: ``features`` describes a position for one seat, a weighted
sum of them is the log-odds that the seat wins, and the value is ``tanh(sum / 2)`` (that
probability, rescaled from [0, 1] to [-1, 1]). The weights were fitted to the outcomes of
self-play games (``python -m bench.alquerque_expert fit``).

Captures are compulsory, so most positions the search evaluates are quiet ones where the side
to move cannot capture: what decides them is what the opponent has ready, and whether the side
to move has a move left that gives nothing away. The features say it from the side to move's
view and change sign for the other seat, so a position is worth ``-v`` to one seat when it is
worth ``v`` to the other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from engines.alquerque.board import (
    FULL,
    NEIGHBOURS,
    POINTS,
    SIZE,
    WHITE,
    count_steps,
    hanging,
    longest_chain,
    supported,
)
from engines.alquerque.rules import AlquerqueState
from engines.core import Seat

FEATURE_NAMES = (
    "material",
    "tempo",
    "ready",
    "threat",
    "exposed",
    "safe_moves",
    "no_safe_move",
    "mobility",
    "support",
    "centre",
    "far_row",
    "spare",
)
"""The features, in the order of the weights: the first from the seat's pieces less the
opponent's; ``tempo`` to ``no_safe_move`` are the side to move's (counted for it, against it
for the other seat); ``mobility`` to ``far_row`` the seat's less the opponent's again.

- ``material``: pieces;
- ``tempo``: 1 (the move is the side to move's);
- ``ready``: the most pieces one capture of the side to move takes now (it must capture);
- ``threat``: the most pieces one capture of the other side would take, were it its turn;
- ``exposed``: pieces of the side to move that the other side could jump at once;
- ``safe_moves``: simple moves of the side to move after which the other side cannot capture;
- ``no_safe_move``: 1 when the side to move has no capture and no such move (it must give
  something away);
- ``mobility``: simple moves;
- ``support``: pieces with a friend right behind them on their column;
- ``centre``: pieces on the five points with eight lines (b2, d2, c3, b4, d4);
- ``far_row``: pieces on the opponent's home row, which can only move sideways there;
- ``spare``: spare moves, the rows still ahead of the seat's pieces summed (a piece never moves
  back, so it has at most that many forward slides left) less the opponent's, times the share
  of the 24 starting pieces already taken: a side left without a move loses, so reserve slides
  count most once few pieces are left.
"""

TUNED_WEIGHTS = (
    0.818426,
    0.020147,
    0.0,
    -0.018646,
    -0.065916,
    -0.0026,
    -0.454312,
    -0.03409,
    0.154559,
    0.036389,
    0.119333,
    0.3,
)
"""``expert``'s weights. All but ``spare`` were fitted by ``python -m bench.alquerque_expert
fit --games 600 --nodes 20000 --player <the earlier fit, spare 0.3>``: 48,232 quiet positions
of 600 self-play games (20,000 nodes a move, 8 random opening plies, seeds 9,100,000 to
9,100,599), mean log-loss 0.552 against 0.693 for an even guess. ``ready`` is 0 because the
positions fitted are quiet ones, where the side to move has no capture. The fit gives
``spare`` 0.011; it is 0.3 here because in play against ``hard`` 0.3 scored best of 0, 0.3 and
1.0 (``bench/README.md``, "A spare-moves (tempo) term"): what decides the won endings is rare in
positions that mostly come from drawn games."""

CENTRE_POINTS = (6, 8, 12, 16, 18)
CENTRE = sum(1 << p for p in CENTRE_POINTS)
FAR_ROW = (sum(1 << (4 * SIZE + c) for c in range(SIZE)), sum(1 << c for c in range(SIZE)))
"""Per colour, the row it cannot leave forwards: White's is row 5, Black's row 1."""


START_PIECES = 2 * 12


def rows_ahead(own: int, colour: int) -> int:
    """Rows still ahead of ``own``'s pieces, summed: White (rows 1 to 5 upwards) has ``4 - row``
    ahead of a piece on 0-based row ``row``, Black ``row``."""
    total = 0
    for p in range(POINTS):
        if own >> p & 1:
            row = p // SIZE
            total += SIZE - 1 - row if colour == WHITE else row
    return total


def spare(own: int, enemy: int, colour: int) -> float:
    """The ``spare`` feature for ``own`` of ``colour`` against ``enemy``."""
    taken = START_PIECES - own.bit_count() - enemy.bit_count()
    return (rows_ahead(own, colour) - rows_ahead(enemy, 1 - colour)) * taken / START_PIECES


def _forward(colour: int) -> int:
    return 1 if colour == WHITE else -1


def safe_moves(own: int, enemy: int, colour: int) -> int:
    """Simple moves of ``own`` (colour ``colour``) after which ``enemy`` has no capture."""
    empty = FULL ^ own ^ enemy
    count = 0
    for p in range(POINTS):
        if not own >> p & 1:
            continue
        for q in NEIGHBOURS[p]:
            # Forward or sideways only (docs/rules/alquerque.md): never towards one's own side.
            if not empty >> q & 1 or (q // SIZE - p // SIZE) * _forward(colour) < 0:
                continue
            after = own ^ (1 << p) ^ (1 << q)
            if longest_chain(enemy, after) == 0:
                count += 1
    return count


def features(state: AlquerqueState, seat: Seat) -> list[float]:
    """The position's features for ``seat``, in the order of ``FEATURE_NAMES``."""
    own, enemy = (state.white, state.black) if seat == WHITE else (state.black, state.white)
    mover = state.to_move
    moving, waiting = (state.white, state.black) if mover == WHITE else (state.black, state.white)
    empty = FULL ^ own ^ enemy
    ready = longest_chain(moving, waiting)
    safe = safe_moves(moving, waiting, mover)
    sign = 1.0 if mover == seat else -1.0
    return [
        float(own.bit_count() - enemy.bit_count()),
        sign,
        sign * ready,
        sign * longest_chain(waiting, moving),
        sign * hanging(waiting, moving, empty),
        sign * safe,
        sign * float(ready == 0 and safe == 0),
        float(count_steps(own, empty, seat) - count_steps(enemy, empty, 1 - seat)),
        float(supported(own, seat) - supported(enemy, 1 - seat)),
        float((own & CENTRE).bit_count() - (enemy & CENTRE).bit_count()),
        float((own & FAR_ROW[seat]).bit_count() - (enemy & FAR_ROW[1 - seat]).bit_count()),
        spare(own, enemy, seat),
    ]


def evaluate_weighted(state: AlquerqueState, seat: Seat, weights: Sequence[float]) -> float:
    """``tanh(w · features / 2)`` for ``seat``, in (-1, 1); ±1 or 0 once the game is over."""
    if len(weights) != len(FEATURE_NAMES):
        raise ValueError(f"{len(weights)} weights for {len(FEATURE_NAMES)} features")
    if state.is_terminal():
        winner = state.returns()
        if winner[0] == winner[1]:
            return 0.0
        return 1.0 if winner[seat] > winner[1 - seat] else -1.0
    total = 0.0
    for weight, feature in zip(weights, features(state, seat), strict=True):
        total += weight * feature
    return math.tanh(total / 2.0)


__all__ = [
    "CENTRE_POINTS",
    "FEATURE_NAMES",
    "TUNED_WEIGHTS",
    "evaluate_weighted",
    "features",
    "rows_ahead",
    "safe_moves",
    "spare",
]
