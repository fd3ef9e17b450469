"""Alpha-beta for two-player Abalone, tuned for its wide, quiet positions.

The generic :class:`engines.agents.alphabeta.AlphaBetaAgent` lists and orders the moves of
every node, leaves included, because a single forced move extends its search (as Alquerque's
compulsory captures need). Abalone never forces a move, and listing 50–100 moves costs more
than evaluating the position, so this search evaluates its leaves directly. Moves are searched
in the state's order (ejections, pushes, then toward the centre), with iterative deepening and
the best move of the last iteration tried first; the node budget (and in a clocked match the
move's time, ``set_move_time``) stops deepening and the last completed depth's move is played.
Values are negamax, for the side to move, in [-1, 1] at the horizon and ±(``WIN`` − ply) at
the end of a game, so faster wins and slower losses are preferred. Ties at the root are
broken with the agent's generator.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from engines.agents.alphabeta import CHECK_EVERY, deepen, deepening_root_values
from engines.clock import NO_DEADLINE, MoveTimer, past
from engines.core import Action, Game, Seat, State

WIN = 100.0
_TIE = 1e-7
"""Width of the random tie-break bonus at the root: below any difference the evaluation means."""


class _OutOfNodesError(Exception):
    """The node budget ran out inside an iteration deeper than the first."""


class AbaloneSearch:
    """Iterative-deepening alpha-beta to ``depth`` plies within ``nodes`` nodes per move."""

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        depth: int,
        nodes: int,
        value: Callable[[State, Seat], float],
    ) -> None:
        self.rng = rng
        self.depth = depth
        self.nodes = nodes
        self.value = value
        self.count = 0
        self.completed_depth = 0
        self.iteration = 0
        self.timer = MoveTimer()
        self.deadline = NO_DEADLINE

    def set_move_time(self, seconds: float | None) -> None:
        """``TimedAgent``: stop deepening after ``seconds``; depth 1 always completes."""
        self.timer.set(seconds)

    def step(self, state: State) -> Action:
        actions = state.ordered_actions()
        if len(actions) == 1:
            return actions[0]
        self.count = 0
        self.completed_depth = 0
        self.deadline = self.timer.deadline()
        best = actions[0]
        for depth in range(1, self.depth + 1):
            if depth > 1 and not deepen(self.deadline, self.timer.seconds):
                break
            try:
                best, value = self._root(state, actions, depth)
            except _OutOfNodesError:
                break
            self.completed_depth = depth
            actions = [best] + [a for a in actions if a != best]
            if abs(value) > 1.0:
                break  # a forced result is known; deeper search cannot change it
        return best

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """Every legal move with its value for the seat to move, as
        :meth:`engines.agents.alphabeta.AlphaBetaAgent.root_values` gives them: exact (or,
        given ``within``, exact for the moves within it of the best and an upper bound below
        that for the others), from the last depth completed within ``depth`` and ``nodes``."""
        seat = state.current_player()
        self.count = 0
        self.deadline = self.timer.deadline()

        def value(action: Action, depth: int, floor: float) -> float:
            self.iteration = depth
            child = state.clone()
            child.apply(action)
            self._tick()
            return -self._negamax(child, 1 - seat, depth - 1, 1, -float("inf"), -floor)

        values, self.completed_depth = deepening_root_values(
            state.ordered_actions(), self.depth, within, value, _OutOfNodesError
        )
        return values

    def _root(self, state: State, actions: list[Action], depth: int) -> tuple[Action, float]:
        seat = state.current_player()
        self.iteration = depth
        best_total = -float("inf")
        best_value = -float("inf")
        best_action = actions[0]
        for action in actions:
            bonus = self.rng.random() * _TIE
            child = state.clone()
            child.apply(action)
            self._tick()
            value = -self._negamax(child, 1 - seat, depth - 1, 1, -float("inf"), bonus - best_total)
            if value + bonus > best_total:
                best_total, best_value, best_action = value + bonus, value, action
        return best_action, best_value

    def _tick(self) -> None:
        self.count += 1
        # The first iteration always completes, so there is a move to play.
        if self.iteration > 1 and (
            self.count > self.nodes or (self.count % CHECK_EVERY == 0 and past(self.deadline))
        ):
            raise _OutOfNodesError

    def _negamax(
        self, state: State, seat: Seat, depth: int, ply: int, alpha: float, beta: float
    ) -> float:
        """Value of ``state`` for ``seat``, the side to move there."""
        if state.is_terminal():
            share = state.returns()[seat]
            if share > 0.5:
                return WIN - ply
            if share < 0.5:
                return ply - WIN
            return 0.0
        if depth <= 0:
            return self.value(state, seat)
        best = -float("inf")
        for action in state.ordered_actions():
            child = state.clone()
            child.apply(action)
            self._tick()
            value = -self._negamax(child, 1 - seat, depth - 1, ply + 1, -beta, -alpha)
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        return best
