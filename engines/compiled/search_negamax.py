"""The compiled alpha-beta shared by every two-player game with a kernel.

Negamax with iterative deepening, a transposition table, move ordering and a quiescence step,
over the game's kernel through the id dispatch of :mod:`engines.compiled.dispatch` (legal
moves, playing them, the seat to move, the result) and
:mod:`engines.compiled.dispatch_alphabeta` (the key, the class of a move, the weighted
evaluation). Positions are copied element by element (``search_parts.copy_position``).

Values are for the seat to move, in [-1, 1] at the horizon and ±(``WIN`` − ply) at the end of a
game, so faster wins and slower losses are preferred. Turns need not alternate: a child whose
seat to move is the parent's keeps the parent's sign and window.

- **Depth** counts plies of full width. Where it runs out, the quiescence step searches the
  forcing moves (``action_class`` 2: captures, ejections, closed squares) for up to
  ``quiescence`` more plies, the side to move free to stand on the evaluation instead.
- **Rules of the game's forcing moves** (both off unless asked): with ``compulsory`` a side
  that has a forcing move must make one (Alquerque's captures: where one exists, every legal
  move is one), so the quiescence step never stands on the evaluation there; with
  ``extend_single`` a move that is the only legal one spends no depth (within ``MAX_DEPTH``
  full-width plies), so forced sequences are followed to their end.
- **Transposition table** (a ``Table`` record): fixed-size arrays indexed by the position's
  key, entries replaced always. An entry settles a node only when it was searched to the same
  remaining depth, so the value of a search of depth *d* is exactly the minimax value of depth
  *d* (tests compare it with a plain minimax); an entry of another depth still gives its best
  move to try first.
- **Solved endings** (``search``'s ``endgame``, a game's table read through
  ``dispatch_alphabeta.solved``): at the horizon, a position the table decides as a win for the
  root's seat is valued from it (``SOLVED`` less its distance) instead of by the evaluation and
  the quiescence step; the rest is searched as if there were no table.
- **Move ordering**: the table's move (searched before the others are classified), then
  forcing moves, pushes, the two killer moves of the ply, then by the history heuristic
  (cut-offs by quiet moves, weighted by depth²).
- **Budget**: ``nodes`` (positions made by playing a move, quiescence included; 0 = no
  limit) stops the deepening, deterministically; an optional ``deadline`` (a
  ``time.perf_counter`` reading, 0.0 = none), read every ``CHECK_EVERY`` nodes through
  :mod:`engines.kernel_clock`, stops it too. Either way the result is the last depth that
  completed; depth 1 always completes, so there is a move to play.
- **Root**: moves are shuffled with the seed first (the tie-break among moves the ordering
  and the values cannot tell apart), then searched in the order of the previous depth's
  values. ``spread`` chooses what the root's values mean (:func:`search`).

What the search carries to each root move's search travels in named records numba passes as
structs: ``Work`` (the per-ply scratch), ``Table``, ``SearchLimits`` (the budgets and what was
spent) and ``Rules``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from engines.compiled.dispatch import (
    MAX_ACTIONS,
    MAX_PLAYERS,
    apply,
    current_player,
    legal_actions,
    returns,
)
from engines.compiled.dispatch_alphabeta import (
    FORCING,
    PUSH,
    action_class,
    evaluate_weighted,
    key_of,
    may_force,
    solved,
)
from engines.compiled.search_parts import copy_position
from engines.kernel_cache import track
from engines.kernel_clock import past
from engines.kernel_rng import rand_below, seed_rng

WIN = 1000.0
MATE_ZONE = WIN / 2
"""A value beyond this is a game's end, not an evaluation."""
SOLVED = 300.0
"""A position the game's endgame table wins, less its distance: above every evaluation, below a
game's end (a win on the board is still taken first), and not a forced result that would stop
the deepening."""
EXACT, LOWER, UPPER, VACANT = 0, 1, 2, -1
MAX_DEPTH = 64
MAX_QUIESCENCE = 32
MAX_PLY = MAX_DEPTH + MAX_QUIESCENCE + 2
CHECK_EVERY = 1024
"""Nodes between two readings of the clock (a reading costs about a microsecond)."""
HISTORY_BITS = 14
_HISTORY_MASK = (1 << HISTORY_BITS) - 1
_MIX = -7046029254386353131
"""2⁶⁴/φ as a signed 64-bit number: Fibonacci hashing of keys and actions into tables."""
BEST_ONLY = -1.0
"""``spread`` for a search that proves one move best: the others' values are upper bounds."""
_TIE = 1e-7

# Slots of the count a search spends its budgets against (``SearchLimits.spent``).
_NODES, _ABORTED, _MAY_STOP = 0, 1, 2
# Columns of a ply's frame (integers) and of its bounds (floats).
_F_DEPTH, _F_QUIET, _F_SEAT, _F_MOVER, _F_COUNT, _F_NEXT, _F_CUT = 0, 1, 2, 3, 4, 5, 6
_F_KEY, _F_SLOT, _F_BEST_MOVE, _F_PLAYED, _F_FLIP, _F_SCORED = 7, 8, 9, 10, 11, 12
_FRAME = 13
_B_ALPHA, _B_BETA, _B_BEST, _B_ALPHA0 = 0, 1, 2, 3

# Move-ordering scores, by rank.
_TABLE_MOVE = 4e18
_FORCING_SCORE = 3e18
_PUSH_SCORE = 2e18
_KILLER_SCORE = 1.5e18
_SECOND_KILLER_SCORE = 1.4e18


class Table(NamedTuple):
    """The transposition table: ``1 << bits`` entries indexed by a position's key, replaced
    always (``flags`` ``VACANT`` where nothing was stored)."""

    keys: np.ndarray
    values: np.ndarray  # for the side to move; game ends counted from the node
    depths: np.ndarray  # the remaining depth the entry was searched to
    flags: np.ndarray  # EXACT, LOWER or UPPER bound, or VACANT
    moves: np.ndarray  # the best move found, tried first when the entry cannot settle
    bits: int


class SearchLimits(NamedTuple):
    """What a search may spend, and what it has spent (``spent``: the nodes made, whether it
    was stopped, whether it may stop yet: depth 1 always completes)."""

    nodes: int  # positions made by playing a move, quiescence included (0: no limit)
    deadline: float  # a time.perf_counter reading (0.0: none), read every CHECK_EVERY nodes
    spent: np.ndarray


class Rules(NamedTuple):
    """What the values mean and which forcing-move rules the search keeps (:func:`search`)."""

    root: int  # the seat to move at the root, to whom a draw is worth -contempt
    contempt: float
    extend_single: bool
    compulsory: bool
    endgame: np.ndarray  # the game's solved endings (dispatch_alphabeta.solved), or empty


class Work(NamedTuple):
    """The search's scratch space, one row per ply: positions, frames and bounds of the
    explicit stack, the moves and their ordering scores, killers; the history heuristic's
    table, and room for a game's returns."""

    stack: np.ndarray
    frames: np.ndarray
    bounds: np.ndarray
    moves: np.ndarray
    scores: np.ndarray
    killers: np.ndarray
    history: np.ndarray
    buf: np.ndarray


@njit(cache=True)
def _slot(key: int, bits: int) -> int:
    return ((key * _MIX) >> (64 - bits)) & ((1 << bits) - 1)


@njit(cache=True)
def _history_slot(action: int) -> int:
    return ((action * _MIX) >> (64 - HISTORY_BITS)) & _HISTORY_MASK


@njit(cache=True)
def _to_table(value: float, ply: int) -> float:
    # Game-end values count plies from the root; the table keeps them from the node.
    if value > MATE_ZONE:
        return value + ply
    if value < -MATE_ZONE:
        return value - ply
    return value


@njit(cache=True)
def _from_table(value: float, ply: int) -> float:
    if value > MATE_ZONE:
        return value - ply
    if value < -MATE_ZONE:
        return value + ply
    return value


@njit(cache=True)
def _terminal_value(
    game: int, state: np.ndarray, seat: int, ply: int, buf: np.ndarray, root: int, contempt: float
) -> float:
    """A finished game for ``seat``: a win or a loss by its distance, a draw worth
    ``-contempt`` to the root's seat (``+contempt`` to the other)."""
    returns(game, state, buf)
    share = buf[seat]
    if share > 0.5:
        return WIN - ply
    if share < 0.5:
        return ply - WIN
    return -contempt if seat == root else contempt


@njit(cache=True)
def _solved_value(verdict: int) -> float:
    """The value of a win or loss an endgame table decides (``dispatch_alphabeta.solved``) for
    the side to move: the fewer plies the win needs before a capture, the more, so that the
    winner makes progress instead of meeting a position again, which the repetition rule the
    table leaves out would draw; the longer a loss can be put off, the less it costs."""
    if verdict > 0:
        return SOLVED - verdict
    return -SOLVED - verdict - 1


@njit(cache=True)
def _root_wins(verdict: int, mover: int, root: int) -> bool:
    """Whether an endgame table's verdict is a win for the root's seat: only those settle a
    node. A loss it decides is searched on, so that against a player who errs the side to move
    still plays for what the evaluation sees instead of taking every losing move for equal."""
    return (verdict > 0 and mover == root) or (verdict < 0 and mover != root)


@njit(cache=True)
def _count(spent: np.ndarray, nodes: int, deadline: float) -> bool:
    """Count one node in ``spent`` (``SearchLimits.spent``); whether the search must stop
    (``nodes`` or the clock's ``deadline`` spent)."""
    spent[_NODES] += 1
    if spent[_MAY_STOP] == 0:
        return False
    over = nodes > 0 and spent[_NODES] > nodes
    if over or (spent[_NODES] % CHECK_EVERY == 0 and past(deadline)):
        spent[_ABORTED] = 1
    return spent[_ABORTED] == 1


@njit(cache=True)
def _order(game: int, state: np.ndarray, mover: int, row: np.ndarray, score: np.ndarray,
           first: int, n: int, killers: np.ndarray, history: np.ndarray) -> None:  # fmt: skip
    """Score the moves ``row[first:n]`` for the search order (higher first)."""
    for i in range(first, n):
        action = row[i]
        kind = action_class(game, state, action)
        if kind == FORCING:
            score[i] = _FORCING_SCORE
        elif kind == PUSH:
            score[i] = _PUSH_SCORE
        elif action == killers[0]:
            score[i] = _KILLER_SCORE
        elif action == killers[1]:
            score[i] = _SECOND_KILLER_SCORE
        else:
            score[i] = history[mover, _history_slot(action)]


@njit(cache=True)
def _next_move(game: int, state: np.ndarray, row: np.ndarray, score: np.ndarray, i: int,
               n: int, quiescent: bool) -> int:  # fmt: skip
    """Index of the next move to search from ``i`` on, brought to ``i`` (``n`` when none is
    left): the best scored one in a full-width node (a selection sort, one step per move
    searched, so a cut-off spares sorting the rest), the next forcing one in quiescence."""
    if quiescent:
        while i < n and action_class(game, state, row[i]) != FORCING:
            i += 1
        return i
    if i >= n:
        return n
    top = i
    for j in range(i + 1, n):
        if score[j] > score[top]:
            top = j
    action, value = row[top], score[top]
    row[top], score[top] = row[i], score[i]
    row[i], score[i] = action, value
    return i


@njit(cache=True)
def _value(game: int, start: int, depth: int, quiet: int, alpha: float, beta: float, seat: int,
           weights: np.ndarray, work: Work, table: Table, limits: SearchLimits,
           rules: Rules) -> float:  # fmt: skip
    """Value of ``work.stack[start]`` for ``seat`` (the seat to move there, or the mover into
    a finished game) within ``alpha``–``beta``: ``depth`` full-width plies, then ``quiet``
    plies of forcing moves. Depth first over an explicit stack of frames, one per ply (numba's
    cache does not reload recursive functions reliably); 0.0 once the budget is spent
    (``SearchLimits.spent``).

    One loop, its records' arrays taken out once at the top: split into functions for the
    ordering, the table and the quiescence step, or reading the records' fields at each node,
    it searched 9 to 53 % fewer nodes a second (``bench/README.md``)."""
    stack, frames, bounds, moves, scores, killers, history, buf = work
    tt_keys, tt_values, tt_depths, tt_flags, tt_moves, bits = table
    nodes, deadline, ctl = limits
    root, contempt, extend_single, compulsory, endgame = rules
    ply = start
    frames[ply, _F_DEPTH] = depth
    frames[ply, _F_QUIET] = quiet
    frames[ply, _F_SEAT] = seat
    bounds[ply, _B_ALPHA] = alpha
    bounds[ply, _B_BETA] = beta
    entering = True
    done = False  # ``value`` holds the finished value of the node at ``ply``
    value = 0.0
    while True:
        if entering:
            entering = False
            state = stack[ply]
            mover = current_player(game, state)
            frames[ply, _F_MOVER] = mover
            frames[ply, _F_NEXT] = 0
            frames[ply, _F_CUT] = 0
            verdict = 0
            if mover >= 0 and frames[ply, _F_DEPTH] <= 0 and endgame.shape[0] > 0:
                # At the horizon only: within it, a win on the board is found and preferred.
                verdict = solved(game, state, endgame)
            if mover < 0:
                seat_here = frames[ply, _F_SEAT]
                value = _terminal_value(game, state, seat_here, ply, buf, root, contempt)
                done = True
            elif _root_wins(verdict, mover, root):
                value = _solved_value(verdict)
                done = True
            elif frames[ply, _F_DEPTH] <= 0:
                quiet_left = frames[ply, _F_QUIET]
                if compulsory and quiet_left > 0 and may_force(game, state):
                    # Every legal move is forcing: the side to move may not stand.
                    bounds[ply, _B_BEST] = -math.inf
                    frames[ply, _F_COUNT] = legal_actions(game, state, moves[ply])
                else:
                    stand = evaluate_weighted(game, state, mover, weights)
                    if (
                        quiet_left <= 0
                        or stand >= bounds[ply, _B_BETA]
                        or not may_force(game, state)
                    ):
                        value = stand
                        done = True
                    else:
                        bounds[ply, _B_BEST] = stand
                        bounds[ply, _B_ALPHA] = max(bounds[ply, _B_ALPHA], stand)
                        frames[ply, _F_COUNT] = legal_actions(game, state, moves[ply])
            else:
                key = key_of(game, state)
                slot = _slot(key, bits)
                frames[ply, _F_KEY] = key
                frames[ply, _F_SLOT] = slot
                table_move = -1
                if tt_flags[slot] != VACANT and tt_keys[slot] == key:
                    table_move = tt_moves[slot]
                    if tt_depths[slot] == frames[ply, _F_DEPTH]:
                        stored = _from_table(tt_values[slot], ply)
                        flag = tt_flags[slot]
                        if (
                            flag == EXACT
                            or (flag == LOWER and stored >= bounds[ply, _B_BETA])
                            or (flag == UPPER and stored <= bounds[ply, _B_ALPHA])
                        ):
                            value = stored
                            done = True
                if not done:
                    n = legal_actions(game, state, moves[ply])
                    frames[ply, _F_COUNT] = n
                    # The table's move first, alone: when it refutes, as it mostly does, the
                    # other moves are never classified.
                    row = moves[ply]
                    first = 0
                    for t in range(n):
                        if row[t] == table_move:
                            row[t] = row[0]
                            row[0] = table_move
                            first = 1
                            break
                    frames[ply, _F_SCORED] = 1 - first
                    if first == 0:
                        _order(game, state, mover, row, scores[ply], 0, n, killers[ply], history)
                    bounds[ply, _B_BEST] = -math.inf
                    bounds[ply, _B_ALPHA0] = bounds[ply, _B_ALPHA]
                    frames[ply, _F_BEST_MOVE] = moves[ply, 0]
        if done:
            done = False
            if ply == start:
                return value
            ply -= 1
            if frames[ply, _F_FLIP]:
                value = -value
            if value > bounds[ply, _B_BEST]:
                bounds[ply, _B_BEST] = value
                frames[ply, _F_BEST_MOVE] = frames[ply, _F_PLAYED]
                if value > bounds[ply, _B_ALPHA]:
                    bounds[ply, _B_ALPHA] = value
                    if value >= bounds[ply, _B_BETA]:
                        frames[ply, _F_CUT] = 1
                        played = frames[ply, _F_PLAYED]
                        depth_left = frames[ply, _F_DEPTH]
                        if depth_left > 0 and action_class(game, stack[ply], played) == 0:
                            # A quiet move that refuted: try it early in sibling positions.
                            if killers[ply, 0] != played:
                                killers[ply, 1] = killers[ply, 0]
                                killers[ply, 0] = played
                            slot = _history_slot(played)
                            history[frames[ply, _F_MOVER], slot] += depth_left * depth_left
        # The node at ``ply`` searches its next move, or is finished.
        state = stack[ply]
        depth_left = frames[ply, _F_DEPTH]
        n = frames[ply, _F_COUNT]
        i = n
        if not frames[ply, _F_CUT]:
            i = frames[ply, _F_NEXT]
            if depth_left > 0 and frames[ply, _F_SCORED] == 0:
                if i > 0:  # past the table's move: score the others
                    _order(game, state, frames[ply, _F_MOVER], moves[ply], scores[ply], 1, n,
                           killers[ply], history)  # fmt: skip
                    frames[ply, _F_SCORED] = 1
                    i = _next_move(game, state, moves[ply], scores[ply], i, n, False)
            else:
                i = _next_move(game, state, moves[ply], scores[ply], i, n, depth_left <= 0)
        if i >= n:
            value = bounds[ply, _B_BEST]
            if depth_left > 0:
                slot = frames[ply, _F_SLOT]
                tt_keys[slot] = frames[ply, _F_KEY]
                tt_values[slot] = _to_table(value, ply)
                tt_depths[slot] = depth_left
                tt_moves[slot] = frames[ply, _F_BEST_MOVE]
                if value <= bounds[ply, _B_ALPHA0]:
                    tt_flags[slot] = UPPER
                elif value >= bounds[ply, _B_BETA]:
                    tt_flags[slot] = LOWER
                else:
                    tt_flags[slot] = EXACT
            done = True
            continue
        frames[ply, _F_NEXT] = i + 1
        action = moves[ply, i]
        frames[ply, _F_PLAYED] = action
        child = stack[ply + 1]
        copy_position(state, child)
        apply(game, child, action)
        if _count(ctl, nodes, deadline):
            return 0.0
        mover = frames[ply, _F_MOVER]
        nxt = current_player(game, child)
        if depth_left > 0:
            # A forced reply spends no depth, within the stack's full-width plies.
            single = extend_single and n == 1 and ply + depth_left < MAX_DEPTH
            frames[ply + 1, _F_DEPTH] = depth_left if single else depth_left - 1
            frames[ply + 1, _F_QUIET] = frames[ply, _F_QUIET]
        else:
            frames[ply + 1, _F_DEPTH] = 0
            frames[ply + 1, _F_QUIET] = frames[ply, _F_QUIET] - 1
        if nxt < 0 or nxt == mover:
            frames[ply, _F_FLIP] = 0
            frames[ply + 1, _F_SEAT] = mover
            bounds[ply + 1, _B_ALPHA] = bounds[ply, _B_ALPHA]
            bounds[ply + 1, _B_BETA] = bounds[ply, _B_BETA]
        else:
            frames[ply, _F_FLIP] = 1
            frames[ply + 1, _F_SEAT] = nxt
            bounds[ply + 1, _B_ALPHA] = -bounds[ply, _B_BETA]
            bounds[ply + 1, _B_BETA] = -bounds[ply, _B_ALPHA]
        ply += 1
        entering = True


@njit(cache=True)
def search(
    game: int,
    root_state: np.ndarray,
    depth: int,
    nodes: int,
    quiescence: int,
    weights: np.ndarray,
    deadline: float,
    seed: int,
    spread: float,
    table_bits: int,
    contempt: float,
    extend_single: bool,
    compulsory: bool,
    endgame: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Search ``root_state`` (left untouched) by iterative deepening to ``depth`` plies.

    Returns the root's moves and values (for the seat to move) of the last completed depth,
    best first, then that depth and the nodes spent. ``spread`` says how exact the values
    are: ``BEST_ONLY`` proves the first move best (each other move's value is then an upper
    bound at or below it, and a proven win or loss ends the deepening); ``math.inf`` values
    every move exactly; a spread ``w`` ≥ 0 values exactly the moves within ``w`` of the best
    and bounds the others above by a value more than ``w`` below it. Among equal values the
    earlier move, in an order shuffled by ``seed`` and then sorted by the previous depth, comes
    first. A finished game has no moves. A draw is worth ``-contempt`` to the seat to move
    at the root (0.0: the plain minimax value), so that a side that thinks itself level or a
    little behind plays on instead of repeating the position. ``extend_single`` and
    ``compulsory`` are the forcing-move rules of the module's description. ``endgame`` is the
    game's table of solved endings (``dispatch_alphabeta.solved``; empty: none): at the horizon,
    a position it decides as a win for the root's seat is valued from it (``_solved_value``)
    instead of by the evaluation and the quiescence step.
    """
    rng = np.zeros(1, dtype=np.uint64)
    seed_rng(rng, seed)
    size = 1 << table_bits
    table = Table(
        np.empty(size, dtype=np.int64),
        np.empty(size, dtype=np.float64),
        np.empty(size, dtype=np.int8),
        np.full(size, VACANT, dtype=np.int8),
        np.empty(size, dtype=np.int64),
        table_bits,
    )
    work = Work(
        np.empty((MAX_PLY + 2, root_state.shape[0]), dtype=np.int64),
        np.zeros((MAX_PLY + 2, _FRAME), dtype=np.int64),
        np.zeros((MAX_PLY + 2, 4), dtype=np.float64),
        np.empty((MAX_PLY + 1, MAX_ACTIONS), dtype=np.int64),
        np.empty((MAX_PLY + 1, MAX_ACTIONS), dtype=np.float64),
        np.full((MAX_PLY + 1, 2), -1, dtype=np.int64),
        np.zeros((MAX_PLAYERS, 1 << HISTORY_BITS), dtype=np.float64),
        np.zeros(MAX_PLAYERS, dtype=np.float64),
    )
    limits = SearchLimits(nodes, deadline, np.zeros(3, dtype=np.int64))
    ctl = limits.spent
    stack, moves = work.stack, work.moves
    depth = min(depth, MAX_DEPTH)
    quiescence = min(quiescence, MAX_QUIESCENCE)

    stack[0] = root_state
    mover = current_player(game, root_state)
    rules = Rules(mover, contempt, extend_single, compulsory, endgame)
    count = legal_actions(game, root_state, moves[0]) if mover >= 0 else 0
    order = moves[0, :count].copy()
    for i in range(count - 1, 0, -1):  # Fisher–Yates: the tie-break among equals
        j = rand_below(rng, i + 1)
        order[i], order[j] = order[j], order[i]
    # Depth 0's order: forcing moves, then pushes, the rest as shuffled.
    kinds = np.empty(count, dtype=np.float64)
    for i in range(count):
        kinds[i] = -action_class(game, root_state, order[i])
    order = order[np.argsort(kinds, kind="mergesort")]
    values = np.zeros(count, dtype=np.float64)
    found = np.zeros(count, dtype=np.float64)
    completed = 0
    for current in range(1, depth + 1):
        ctl[_MAY_STOP] = 1 if current > 1 else 0
        best = -math.inf
        for i in range(count):
            if spread == BEST_ONLY:
                floor = best
            elif math.isinf(spread):
                floor = -math.inf
            else:
                floor = best - spread - _TIE
            child = stack[1]
            copy_position(root_state, child)
            apply(game, child, order[i])
            if _count(ctl, nodes, deadline):
                break
            nxt = current_player(game, child)
            if nxt < 0 or nxt == mover:
                value = _value(game, 1, current - 1, quiescence, floor, math.inf, mover, weights,
                               work, table, limits, rules)  # fmt: skip
            else:
                value = -_value(game, 1, current - 1, quiescence, -math.inf, -floor, nxt,
                                weights, work, table, limits, rules)  # fmt: skip
            if ctl[_ABORTED]:
                break
            found[i] = value
            best = max(best, value)
        if ctl[_ABORTED]:
            break
        completed = current
        ranked = np.argsort(-found, kind="mergesort")
        order = order[ranked]
        values = found[ranked]
        if spread == BEST_ONLY and abs(values[0]) > MATE_ZONE:
            break  # a forced result is known; a deeper search cannot change it
    return order, values, completed, ctl[_NODES]


track(globals())
