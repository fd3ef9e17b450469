"""Monte Carlo tree search (UCT) for any number of players.

Each node keeps the total return of the seat that moved *into* it, so selection at a node
maximises the mean return of the seat to move there. That works for two or more players and
for games where one seat moves several times in a row. The budget is a number of iterations,
so a match replays identically from its seed; in a clocked match (``set_move_time``) the
search also stops when the move's time is spent.

This is the Python search. The ``mcts`` agent (:mod:`engines.compiled.choose_mcts`) plays it on
games without a compiled kernel, and on any game with ``backend`` ``python``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable

from engines.clock import MoveTimer, past
from engines.core import TERMINAL, Action, Game, Option, Seat, State


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


class _Node:
    """One position in the search tree, reached by ``action`` played by ``mover``."""

    __slots__ = ("action", "children", "mover", "total", "untried", "visits")

    def __init__(self, action: Action, mover: Seat) -> None:
        self.action = action
        self.mover = mover
        self.children: list[_Node] = []
        self.untried: list[Action] | None = None  # filled on first visit
        self.visits = 0
        self.total = 0.0


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


class MctsAgent:
    """UCT with uniform expansion, game-provided or uniform rollouts, most-visited final pick."""

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        iterations: int = 400,
        exploration: float = 1.4,
        rollout: str = "game",
        max_rollout_plies: int = 0,
    ) -> None:
        self.rng = rng
        self.players = game.num_players
        self.iterations = iterations
        self.exploration = exploration
        self.game_rollout = rollout == "game"
        self.rollout_cap = rollout_cap(game, max_rollout_plies)
        self.timer = MoveTimer()

    def set_move_time(self, seconds: float | None) -> None:
        """``TimedAgent``: stop each search after ``seconds`` (at least one iteration)."""
        self.timer.set(seconds)

    def step(self, state: State) -> Action:
        actions = state.legal_actions()
        if len(actions) == 1:
            return actions[0]
        root = self.search(state)
        best = max(root.children, key=lambda c: (c.visits, c.total))
        return best.action

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """The searched root moves with their mean result for the seat to move (the same search
        as ``step``; see ``root_share_values``). Each value is a mean, so ``within`` changes
        nothing."""
        root = self.search(state)
        return root_share_values(
            ((c.action, c.visits, c.total) for c in root.children), self.players
        )

    def search(self, state: State) -> _Node:
        """Run the iterations from ``state`` (left untouched) and return the root node.

        Each iteration plays a copy of ``state`` down the tree (:meth:`_select`), adds one node
        (:meth:`_expand`), plays on to the end or the rollout cap (:meth:`_simulate`) and credits
        the result to every node it passed (:meth:`_backpropagate`).
        """
        root = _Node(-1, TERMINAL)
        players = self.players
        deadline = self.timer.deadline()
        for i in range(self.iterations):
            if i and past(deadline):
                break
            sim = state.clone()
            path = self._select(root, sim)
            self._expand(path, sim)
            self._simulate(sim)
            self._backpropagate(path, leaf_shares(sim, players))
        return root

    def _select(self, root: _Node, sim: State) -> list[_Node]:
        """Descend from ``root`` through fully expanded nodes, playing their moves on ``sim``.

        At each node the child with the highest UCT score (mean return of the seat to move plus
        the exploration bonus) is taken. A node's legal moves are listed and shuffled on its
        first visit. Returns the path, ending at a node with untried moves or no children.
        """
        rng = self.rng
        c = self.exploration
        node = root
        path = [root]
        while True:
            if node.untried is None:
                node.untried = sim.legal_actions()
                rng.shuffle(node.untried)
            if node.untried or not node.children:
                return path
            log_n = math.log(node.visits)
            best_child = node.children[0]
            best_score = -math.inf
            for child in node.children:
                score = child.total / child.visits + c * math.sqrt(log_n / child.visits)
                if score > best_score:
                    best_score = score
                    best_child = child
            node = best_child
            sim.apply(node.action)
            path.append(node)

    @staticmethod
    def _expand(path: list[_Node], sim: State) -> None:
        """Add one untried move of the path's last node as a new child, unless the game is over
        there; play it on ``sim`` and extend ``path``."""
        node = path[-1]
        if node.untried:
            action = node.untried.pop()
            child = _Node(action, sim.current_player())
            node.children.append(child)
            sim.apply(action)
            path.append(child)

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

    @staticmethod
    def _backpropagate(path: list[_Node], shares: list[float]) -> None:
        """Count a visit on every node of ``path``; each scores for the seat that moved into it."""
        for visited in path:
            visited.visits += 1
            if visited.mover >= 0:
                visited.total += shares[visited.mover]
