"""Alpha-beta search for two-player games, with iterative deepening and a transposition table.

Turns need not alternate (a seat may move again after some moves), so each node maximises
when the root seat is to move and minimises otherwise, instead of negamax. Values are from the
root seat's point of view: the game's ``evaluate`` in [-1, 1] at the horizon, ``±WIN`` shifted
by the ply count at the end of a game so that faster wins and slower losses are preferred.

The transposition table is keyed by ``state.key()`` (board and side to move), so positions that
differ only in draw-rule counters share an entry; it is rebuilt for every move.

This is the Python search: the ``alphabeta`` agent (:mod:`engines.compiled.choose_alphabeta`)
plays it on games without a compiled kernel, and on any game with ``backend`` ``python``; game
levels build on it directly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable

from engines.clock import NO_DEADLINE, MoveTimer, past
from engines.core import Action, Game, Seat, State

WIN = 1000.0
"""Value of a won game at the root; any terminal value dominates any heuristic one."""
_MATE_ZONE = WIN / 2  # |value| above this is a game end, not a heuristic
_EXACT, _LOWER, _UPPER = 0, 1, 2
_TIE = 1e-7
"""Width of the random tie-break bonus: below any difference an evaluation means."""


CHECK_EVERY = 16
"""Nodes between two looks at the clock in a timed search (a node costs microseconds)."""
NEXT_DEPTH_SHARE = 0.5
"""A timed search starts no new depth after this share of its time: each depth costs
several times the one before, so it would not finish."""


class _OutOfNodesError(Exception):
    """Raised inside the search when the node budget (or a timed move's time) runs out
    mid-iteration."""


def deepen(deadline: float, allowance: float | None) -> bool:
    """Whether a timed search with ``deadline`` may start another depth: less than
    ``NEXT_DEPTH_SHARE`` of its ``allowance`` is spent (always, without a deadline)."""
    if deadline == NO_DEADLINE or allowance is None:
        return True
    return not past(deadline - (1.0 - NEXT_DEPTH_SHARE) * allowance)


class AlphaBetaAgent:
    """Iterative-deepening alpha-beta to ``depth`` plies or until ``nodes`` are spent.

    Forced moves (a single legal action) do not use up depth, which lets the search follow
    compulsory capture sequences. Equal best moves at the root are chosen with the agent's rng.
    """

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        depth: int = 4,
        nodes: int = 0,
        evaluator: Callable[[State, Seat], float] | None = None,
    ) -> None:
        """``evaluator(state, seat)`` replaces ``state.evaluate(seat)`` at the horizon; a
        game's levels use it to search with their own heuristic."""
        self.rng = rng
        self.evaluator = evaluator
        self.depth = depth
        self.nodes = nodes
        self.count = 0
        self.table: dict[Hashable, tuple[int, float, int, Action | None]] = {}
        self.root_seat: Seat = 0
        self.completed_depth = 0
        self._last_value = 0.0
        self.timer = MoveTimer()
        self.deadline = NO_DEADLINE

    # ------------------------------------------------------------------------- public
    def set_move_time(self, seconds: float | None) -> None:
        """``TimedAgent``: stop deepening after ``seconds``; depth 1 always completes."""
        self.timer.set(seconds)

    def step(self, state: State) -> Action:
        actions = state.ordered_actions()
        if len(actions) == 1:
            return actions[0]
        self.root_seat = state.current_player()
        self.count = 0
        self.table = {}  # entries hold root-relative values, so they do not outlive a move
        self.completed_depth = 0
        self.deadline = self.timer.deadline()
        best = actions[0]
        for depth in range(1, self.depth + 1):
            if depth > 1 and not deepen(self.deadline, self.timer.seconds):
                break
            try:
                best = self._root(state, actions, depth)
            except _OutOfNodesError:
                break
            self.completed_depth = depth
            # Try last iteration's best first next time.
            actions = [best] + [a for a in actions if a != best]
            if abs(self._last_value) > _MATE_ZONE:
                break  # a forced result is known; deeper search cannot change it
        return best

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """Every legal move with its value for the seat to move (``SearchAgent``).

        Where ``step`` only proves the best move best, this values every root move: exactly
        (a full window) when ``within`` is None; else exactly those within ``within`` of the
        best, each other one by an upper bound already below best − ``within`` (a window
        raised to there, which keeps most of alpha-beta's cut-offs). Iterative deepening within
        the same ``depth`` and ``nodes`` as ``step``: the values of the last completed depth.
        """
        self.root_seat = state.current_player()
        self.count = 0
        self.table = {}
        self.deadline = self.timer.deadline()

        def value(action: Action, depth: int, floor: float) -> float:
            child = state.clone()
            child.apply(action)
            self._tick(depth)
            return self._search(child, depth - 1, 1, floor, float("inf"), depth)

        values, self.completed_depth = deepening_root_values(
            state.ordered_actions(), self.depth, within, value, _OutOfNodesError
        )
        return values

    # ------------------------------------------------------------------------- search
    def _root(self, state: State, actions: list[Action], depth: int) -> Action:
        """Search every root move; return the best, equal moves split by the agent's rng.

        Each root move gets a random bonus far below any real difference in value and the
        highest value plus bonus wins, so every move tied for the best is equally likely. Unlike
        collecting all tied moves with exact values, this keeps alpha-beta's cut-offs when the
        evaluation is flat (as in many openings): a move must beat the best so far by the gap
        between their bonuses, which the first equal reply refutes.
        """
        best_total = -float("inf")
        best_value = -float("inf")
        best_action = actions[0]
        for action in actions:
            bonus = self.rng.random() * _TIE
            child = state.clone()
            child.apply(action)
            self._tick(depth)
            value = self._search(child, depth - 1, 1, best_total - bonus, float("inf"), depth)
            if value + bonus > best_total:
                best_total = value + bonus
                best_value = value
                best_action = action
        self._last_value = best_value
        return best_action

    def _tick(self, depth: int) -> None:
        self.count += 1
        # Depth 1 always completes so there is a move to play.
        if depth > 1 and (
            (self.nodes and self.count > self.nodes)
            or (self.count % CHECK_EVERY == 0 and past(self.deadline))
        ):
            raise _OutOfNodesError

    def _search(
        self, state: State, depth: int, ply: int, alpha: float, beta: float, iteration: int
    ) -> float:
        if state.is_terminal():
            return self._terminal_value(state, ply)
        key = state.key()
        settled, tt_move = self._probe(key, depth, ply, alpha, beta)
        if settled is not None:
            return settled
        actions = state.ordered_actions()
        forced = len(actions) == 1 and ply < 3 * iteration
        if depth <= 0 and not forced:
            if self.evaluator is not None:
                return self.evaluator(state, self.root_seat)
            return state.evaluate(self.root_seat)
        if tt_move is not None and tt_move in actions:
            actions = [tt_move] + [a for a in actions if a != tt_move]
        next_depth = depth if forced else depth - 1
        maximising = state.current_player() == self.root_seat
        alpha0, beta0 = alpha, beta
        best_move = actions[0]
        if maximising:
            best = -float("inf")
            for action in actions:
                child = state.clone()
                child.apply(action)
                self._tick(iteration)
                value = self._search(child, next_depth, ply + 1, alpha, beta, iteration)
                if value > best:
                    best, best_move = value, action
                    if value > alpha:
                        alpha = value
                        if alpha >= beta:
                            break
        else:
            best = float("inf")
            for action in actions:
                child = state.clone()
                child.apply(action)
                self._tick(iteration)
                value = self._search(child, next_depth, ply + 1, alpha, beta, iteration)
                if value < best:
                    best, best_move = value, action
                    if value < beta:
                        beta = value
                        if alpha >= beta:
                            break
        self._store(key, depth, ply, best, best_move, alpha0, beta0)
        return best

    # ------------------------------------------------------------------------- table
    def _probe(
        self, key: Hashable, depth: int, ply: int, alpha: float, beta: float
    ) -> tuple[float | None, Action | None]:
        """Look the position up: (a value that settles the node, else None; the stored move).

        An entry searched at least ``depth`` plies deep settles the node when it is exact, or
        when its bound already falls outside the window (a lower bound at or above ``beta``, an
        upper bound at or below ``alpha``). Its best move, if any, is tried first otherwise.
        """
        entry = self.table.get(key)
        if entry is None:
            return None, None
        e_depth, e_value, e_flag, tt_move = entry
        if e_depth >= depth:
            value = self._from_table(e_value, ply)
            if e_flag == _EXACT:
                return value, tt_move
            if e_flag == _LOWER and value >= beta:
                return value, tt_move
            if e_flag == _UPPER and value <= alpha:
                return value, tt_move
        return None, tt_move

    def _store(
        self,
        key: Hashable,
        depth: int,
        ply: int,
        best: float,
        best_move: Action,
        alpha: float,
        beta: float,
    ) -> None:
        """Record a searched node: its value, as an upper bound when it failed low (at or below
        the window ``alpha``–``beta`` it was searched with), a lower bound when it failed high,
        else exact; with its depth and best move."""
        if best <= alpha:
            flag = _UPPER
        elif best >= beta:
            flag = _LOWER
        else:
            flag = _EXACT
        self.table[key] = (max(depth, 0), self._to_table(best, ply), flag, best_move)

    # ------------------------------------------------------------------------- values
    def _terminal_value(self, state: State, ply: int) -> float:
        outcome = state.evaluate(self.root_seat)  # 1 won, -1 lost, 0 drawn
        if outcome > 0:
            return WIN - ply
        if outcome < 0:
            return ply - WIN
        return 0.0

    @staticmethod
    def _to_table(value: float, ply: int) -> float:
        # Game-end values depend on the distance from the root; store them node-relative.
        if value > _MATE_ZONE:
            return value + ply
        if value < -_MATE_ZONE:
            return value - ply
        return value

    @staticmethod
    def _from_table(value: float, ply: int) -> float:
        if value > _MATE_ZONE:
            return value - ply
        if value < -_MATE_ZONE:
            return value + ply
        return value


def deepening_root_values(
    actions: list[Action],
    depth: int,
    within: float | None,
    value: Callable[[Action, int, float], float],
    out_of_nodes: type[Exception],
) -> tuple[list[tuple[Action, float]], int]:
    """``SearchAgent.root_values`` of an alpha-beta by iterative deepening, and the depth they
    come from: at each depth from 1, ``value(action, depth, floor)`` values every root move,
    best first by the previous depth, with a window from ``floor`` up (−∞, or the best so far
    less ``within`` and a hair: a move that fails low is then out of the margin); a depth cut
    short by ``out_of_nodes`` leaves the previous one's values."""
    values: list[tuple[Action, float]] = []
    completed = 0
    for current in range(1, depth + 1):
        found: list[tuple[Action, float]] = []
        best = -float("inf")
        try:
            for action in actions:
                floor = -float("inf") if within is None else best - within - _TIE
                found.append((action, value(action, current, floor)))
                best = max(best, found[-1][1])
        except out_of_nodes:
            break
        values, completed = found, current
        actions = [a for a, _ in sorted(found, key=lambda av: -av[1])]
    return values, completed
