"""What the generic Monte Carlo tree searches share (:mod:`engines.agents.mcts`,
:mod:`engines.agents.ismcts`): their parameters, the budget and clock, the per-move loop, the
playouts and the credit of a playout's result.

``TreeSearchAgent.search`` runs the iterations: each draws a position to search from
(``_position``: a copy of the state, or a determinisation of what the seat knows), walks it down
the tree adding one node (``_descend``), plays it on (``_simulate``) and credits every node it
passed with the result of the seat that moved into it. The two searches differ only in those
hooks and in how they read the root's children (``_root_moves``, ``_most_visited``).

Each node keeps the total return of the seat that moved *into* it, so any number of players
works, and a seat may move several times in a row. The budget is a number of iterations, so a
match replays identically from its seed; in a clocked match (``set_move_time``) the search also
stops when the move's time is spent.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Generic, Protocol, TypeVar

from engines.clock import MoveTimer, past
from engines.core import Action, Game, Option, Seat, State


def iterations_param(default: int, description: str = "search iterations per move") -> Option:
    """A tree search's ``iterations``: its budget, the same bounds for every one."""
    return Option("iterations", int, default, description, minimum=1, maximum=1_000_000)


def exploration_param(default: float, description: str = "UCT exploration constant") -> Option:
    """A tree search's ``exploration``: the constant of its upper confidence bound."""
    return Option("exploration", float, default, description, minimum=0.0, maximum=100.0)


def rollout_params() -> tuple[Option, Option]:
    """A Monte Carlo search's playouts: whose policy, and where they stop for the evaluation."""
    return (
        Option(
            "rollout",
            str,
            "game",
            "playout policy: the game's own ('game') or uniform ('random')",
            choices=("game", "random"),
        ),
        Option(
            "max_rollout_plies",
            int,
            0,
            "stop each playout after this many plies and use the game's evaluation (0 = play out)",
            minimum=0,
            maximum=100_000,
        ),
    )


ROOT_VALUE_MIN_VISITS = 0.1
"""``root_values`` of an MCTS lists a root move only when it was searched at least this share of
the most searched move's visits: the mean of a move tried once or twice is luck, not a value."""


def root_share_values(
    children: Iterable[tuple[Action, int, float]], players: int
) -> list[tuple[Action, float]]:
    """``SearchAgent.root_values`` of a tree search from its root moves ``(action, visits,
    total share)``: each well-searched move's mean share for the seat to move, on the scale of
    ``State.evaluate`` (share r maps to (r − 1/n)·n/(n − 1), as ``evaluate`` reads a result)."""
    searched = [c for c in children if c[1] > 0]
    if not searched:
        return []
    most = max(visits for _, visits, _ in searched)
    floor = max(1.0, ROOT_VALUE_MIN_VISITS * most)
    scale = players / (players - 1) if players > 1 else 2.0
    return [
        (action, (total / visits - 1.0 / max(players, 2)) * scale)
        for action, visits, total in searched
        if visits >= floor
    ]


def rollout_cap(game: Game, max_rollout_plies: int) -> int:
    """Most plies of one playout: ``max_rollout_plies`` within the game's own cap, or that cap
    when ``max_rollout_plies`` is 0 (play each playout to the end)."""
    cap = game.game_type.max_game_length
    return min(max_rollout_plies, cap) if max_rollout_plies > 0 else cap


def leaf_shares(state: State, players: int) -> list[float]:
    """Per-seat shares in [0, 1]: the returns once over, else read from ``evaluate``."""
    if state.is_terminal():
        return state.returns()
    if players == 1:
        return [(state.evaluate(0) + 1.0) / 2.0]
    # evaluate() maps a share r to (r - 1/n) * n / (n - 1); invert it and renormalise.
    scale = (players - 1) / players
    raw = [max(0.0, state.evaluate(s) * scale + 1.0 / players) for s in range(players)]
    total = sum(raw)
    return [r / total for r in raw] if total > 0 else [1.0 / players] * players


class SearchNode(Protocol):
    """What the shared loop reads and credits on a node of either tree."""

    mover: Seat
    visits: int
    total: float


NodeT = TypeVar("NodeT", bound=SearchNode)


class TreeSearchAgent(ABC, Generic[NodeT]):
    """A Monte Carlo tree search with an iteration budget, the game's (or uniform) playouts and
    the most visited root move played; subclasses say how a tree is walked (see the module
    docstring)."""

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        iterations: int,
        exploration: float,
        rollout: str = "game",
        max_rollout_plies: int = 0,
    ) -> None:
        self.rng = rng
        self.players = game.num_players
        self.iterations = int(iterations)
        self.exploration = exploration
        self.game_rollout = rollout == "game"
        self.rollout_cap = rollout_cap(game, max_rollout_plies)
        self.timer = MoveTimer()

    def set_move_time(self, seconds: float | None) -> None:
        """``TimedAgent``: stop each search after ``seconds`` (at least one iteration)."""
        self.timer.set(seconds)

    def step(self, state: State) -> Action:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        return self._most_visited(self.search(state), legal)

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """The searched root moves with their mean result for the seat to move (the same search
        as ``step``; see ``root_share_values``). Each value is a mean, so ``within`` changes
        nothing."""
        return root_share_values(self._root_moves(self.search(state)), self.players)

    def search(self, state: State) -> NodeT:
        """Run the iterations from ``state`` (left untouched) and return the root node."""
        root = self._new_root()
        seat = state.current_player()
        players = self.players
        deadline = self.timer.deadline()
        for i in range(self.iterations):
            if i and past(deadline):
                break
            sim = self._position(state, seat)
            path = self._descend(root, sim)
            self._simulate(sim)
            shares = leaf_shares(sim, players)
            for visited in path:
                visited.visits += 1
                if visited.mover >= 0:
                    visited.total += shares[visited.mover]
        return root

    @abstractmethod
    def _new_root(self) -> NodeT:
        """An empty tree's root."""

    @abstractmethod
    def _position(self, state: State, seat: Seat) -> State:
        """The position one iteration searches from: ``state`` as ``seat`` (to move at the root)
        may see it, a fresh object the iteration plays on."""

    @abstractmethod
    def _descend(self, root: NodeT, sim: State) -> list[NodeT]:
        """Walk the tree from ``root`` playing each move on ``sim`` and add at most one node;
        the path from the root."""

    @abstractmethod
    def _root_moves(self, root: NodeT) -> Iterable[tuple[Action, int, float]]:
        """The root's children as ``(action, visits, total)``."""

    @abstractmethod
    def _most_visited(self, root: NodeT, legal: Sequence[Action]) -> Action:
        """The move ``step`` plays after a search: the most visited root move."""

    def _simulate(self, sim: State) -> None:
        """Play ``sim`` on with the rollout policy until the game ends or the cap is reached."""
        rng = self.rng
        plies = 0
        cap = self.rollout_cap
        if self.game_rollout:
            while plies < cap and not sim.is_terminal():
                sim.apply(sim.rollout_action(rng))
                plies += 1
        else:
            while plies < cap and not sim.is_terminal():
                sim.apply(rng.choice(sim.legal_actions()))
                plies += 1
