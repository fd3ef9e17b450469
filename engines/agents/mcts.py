"""Monte Carlo tree search (UCT) for any number of players.

Each node keeps the total return of the seat that moved *into* it, so selection at a node
maximises the mean return of the seat to move there. That works for two or more players and
for games where one seat moves several times in a row. The budget, the clock, the per-move loop
and the playouts are those every generic tree search shares (:mod:`engines.agents.tree_search`,
whose parameter helpers this module also offers under their old names).

This is the Python search. The ``mcts`` agent (:mod:`engines.compiled.choose_mcts`) plays it on
games without a compiled kernel, and on any game with ``backend`` ``python``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence

from engines.agents.tree_search import TreeSearchAgent
from engines.core import TERMINAL, Action, Game, Seat, State

__all__ = ["MctsAgent"]


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


class MctsAgent(TreeSearchAgent[_Node]):
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
        super().__init__(game, rng, iterations, exploration, rollout, max_rollout_plies)

    def _new_root(self) -> _Node:
        return _Node(-1, TERMINAL)

    def _position(self, state: State, seat: Seat) -> State:
        # Perfect information: the iteration plays a copy of the position itself.
        return state.clone()

    def _descend(self, root: _Node, sim: State) -> list[_Node]:
        """Select down the tree (:meth:`_select`), then add one node (:meth:`_expand`)."""
        path = self._select(root, sim)
        self._expand(path, sim)
        return path

    def _root_moves(self, root: _Node) -> Iterable[tuple[Action, int, float]]:
        return ((c.action, c.visits, c.total) for c in root.children)

    def _most_visited(self, root: _Node, legal: Sequence[Action]) -> Action:
        # Ties go to the child added first, as the children are listed in that order.
        return max(root.children, key=lambda c: (c.visits, c.total)).action

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
