"""Information-set Monte Carlo tree search for Alhambra (single-observer ISMCTS).

One tree over the searching seat's information set: each iteration draws a determinisation
(``resample_from_infostate``: deck and bag re-drawn consistently with what the seat has seen),
walks the tree using only the actions legal in that determinisation (UCB with availability
counts, so an action seen rarely is not under-explored), adds one node, plays on with the
game's playout policy for at most ``rollout_plies`` plies and scores the end position with the
state's ``evaluate`` (projected points). The true draw order is never read: the agent works
on the view it is handed and on copies re-drawn from it.
"""

from __future__ import annotations

import math
import random

from engines.core import TERMINAL, Action, AgentType, Game, Option, Seat, State


class _Node:
    __slots__ = ("avail", "children", "mover", "total", "visits")

    def __init__(self, mover: Seat) -> None:
        self.mover = mover
        self.children: dict[Action, _Node] = {}
        self.visits = 0
        self.avail = 1
        self.total = 0.0


def _shares(state: State, players: int) -> list[float]:
    if state.is_terminal():
        return state.returns()
    scale = (players - 1) / players
    raw = [max(0.0, state.evaluate(s) * scale + 1.0 / players) for s in range(players)]
    total = sum(raw)
    return [r / total for r in raw] if total > 0 else [1.0 / players] * players


class IsMctsAgent:
    """SO-ISMCTS with a fixed number of iterations (never a time, so matches replay)."""

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        iterations: int = 200,
        exploration: float = 0.7,
        rollout_plies: int = 20,
    ) -> None:
        self.rng = rng
        self.players = game.num_players
        self.iterations = iterations
        self.exploration = exploration
        self.rollout_plies = rollout_plies

    def step(self, state: State) -> Action:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        root = self.search(state)
        return max(legal, key=lambda a: _rank(root.children.get(a)))

    def search(self, state: State) -> _Node:
        seat = state.current_player()
        root = _Node(TERMINAL)
        rng = self.rng
        for _ in range(self.iterations):
            sim = state.resample_from_infostate(seat, rng)
            path = [root]
            node = root
            while not sim.is_terminal():
                legal = sim.legal_actions()
                untried = [a for a in legal if a not in node.children]
                if untried:
                    action = untried[int(rng.random() * len(untried))]
                    child = _Node(sim.current_player())
                    node.children[action] = child
                    for a in legal:
                        if a != action and a in node.children:
                            node.children[a].avail += 1
                    sim.apply(action)
                    path.append(child)
                    break
                action = self._select(node, legal)
                sim.apply(action)
                node = node.children[action]
                path.append(node)
            plies = 0
            while plies < self.rollout_plies and not sim.is_terminal():
                sim.apply(sim.rollout_action(rng))
                plies += 1
            shares = _shares(sim, self.players)
            for visited in path:
                visited.visits += 1
                if visited.mover >= 0:
                    visited.total += shares[visited.mover]
        return root

    def _select(self, node: _Node, legal: list[Action]) -> Action:
        c = self.exploration
        best, best_score = legal[0], -math.inf
        children = node.children
        for a in legal:
            child = children[a]
            child.avail += 1
            score = child.total / child.visits + c * math.sqrt(math.log(child.avail) / child.visits)
            if score > best_score:
                best, best_score = a, score
        return best


def _rank(node: _Node | None) -> tuple[int, float]:
    if node is None or node.visits == 0:
        return (0, 0.0)
    return (node.visits, node.total / node.visits)


MCTS = AgentType(
    name="mcts",
    description=(
        "Information-set MCTS: each iteration re-draws the hidden deck and bag from the seat's "
        "view, short playouts scored by projected points."
    ),
    factory=IsMctsAgent,
    params=(
        Option(
            "iterations", int, 200, "search iterations per decision", minimum=1, maximum=100_000
        ),
        Option("exploration", float, 0.7, "UCB exploration constant", minimum=0.0, maximum=100.0),
        Option(
            "rollout_plies",
            int,
            20,
            "playout plies before the position is scored",
            minimum=0,
            maximum=10_000,
        ),
    ),
    games=("alhambra",),
)
