"""Information-set Monte Carlo tree search (single observer) for any game with hidden information.

Cowling, Powley and Whitehouse's SO-ISMCTS (2012): one tree over the information sets of the
seat to move at the root. Each iteration draws a fresh determinisation,
``state.resample_from_infostate(seat, rng)``: a position consistent with everything the seat
knows, its hidden part (the others' hands, a deck's order, the chance still to come) drawn
anew. The iteration walks the tree using only the actions legal in that determinisation, adds
one node, plays on and credits the result. The agent reads the position it is handed only
through ``current_player``, ``legal_actions`` (what the seat to move may play, which it knows)
and ``resample_from_infostate``: its choice depends on the seat's information alone.

Which actions a node offers can change from one determinisation to the next (an opponent can
play only the tiles it holds). A child is therefore scored by UCB1 with its *availability*
count, the number of iterations in which its parent was passed on the way down while it was
legal, in place of the parent's visits: ``mean + c·sqrt(ln(avail) / visits)``. Otherwise an
action legal in few determinisations would look under-explored every time it shows up.

Chance has no nodes of its own. A game's chance is drawn inside ``apply`` from the position's
generator, and ``resample_from_infostate`` re-draws the chance still to come, so each
determinisation carries its own outcomes, drawn with the game's own probabilities: a tree
edge's mean is the action's value averaged over the chance that follows it. Moves are keyed by
their action alone, which assumes, as every game here does, that each seat sees the actions
played (a game whose moves are themselves hidden would need the multiple-observer variant).

Each node keeps the total return of the seat that moved into it, as in
:mod:`engines.agents.mcts`, so any number of players works. The budget, the clock, the per-move
loop, the playouts and the credit are the ones both searches share
(:mod:`engines.agents.tree_search`): a match replays from its seed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence

from engines.agents.tree_search import (
    TreeSearchAgent,
    exploration_param,
    iterations_param,
    rollout_params,
)
from engines.core import TERMINAL, Action, AgentType, Game, Seat, State


class IsNode:
    """One information set of the searching seat, reached by an action of ``mover``.

    ``avail`` counts the iterations in which the parent was passed while this action was legal
    (so ``avail >= visits``).
    """

    __slots__ = ("avail", "children", "mover", "total", "visits")

    def __init__(self, mover: Seat) -> None:
        self.mover = mover
        self.children: dict[Action, IsNode] = {}
        self.visits = 0
        self.avail = 0
        self.total = 0.0


class IsMctsAgent(TreeSearchAgent[IsNode]):
    """SO-ISMCTS with an iteration budget, the game's (or uniform) playouts, the most visited
    root action played."""

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        iterations: int = 400,
        exploration: float = 0.7,
        rollout: str = "game",
        max_rollout_plies: int = 0,
    ) -> None:
        super().__init__(game, rng, iterations, exploration, rollout, max_rollout_plies)

    def _new_root(self) -> IsNode:
        return IsNode(TERMINAL)

    def _position(self, state: State, seat: Seat) -> State:
        # A fresh determinisation of what the seat to move at the root knows.
        return state.resample_from_infostate(seat, self.rng)

    def _root_moves(self, root: IsNode) -> Iterable[tuple[Action, int, float]]:
        return ((a, c.visits, c.total) for a, c in root.children.items())

    def _most_visited(self, root: IsNode, legal: Sequence[Action]) -> Action:
        # Every root action is legal in every determinisation (the seat knows its own moves),
        # so the most visited one is the most searched, as in UCT.
        children = root.children
        return max(
            (a for a in legal if a in children),
            key=lambda a: (children[a].visits, children[a].total),
        )

    def _descend(self, root: IsNode, sim: State) -> list[IsNode]:
        """Walk the tree on the determinisation ``sim``, playing each chosen action on it, and
        add one node: the first node with an action legal here but not yet in the tree expands
        it (one drawn at random); a node whose legal actions are all in the tree picks by UCB
        with availability. At each node passed, every child legal here counts one more
        availability. Returns the path from the root."""
        rng = self.rng
        node = root
        path = [root]
        while not sim.is_terminal():
            legal = sim.legal_actions()
            untried = [a for a in legal if a not in node.children]
            if untried:
                action = untried[rng.randrange(len(untried))]
                node.children[action] = IsNode(sim.current_player())
            else:
                action = self._select(node, legal)
            children = node.children
            for a in legal:
                child = children.get(a)
                if child is not None:
                    child.avail += 1
            sim.apply(action)
            node = children[action]
            path.append(node)
            if untried:
                break
        return path

    def _select(self, node: IsNode, legal: list[Action]) -> Action:
        """The legal child with the highest UCB1 score over its availability (each has been
        visited, and so was available, at least once)."""
        c = self.exploration
        children = node.children
        best = legal[0]
        best_score = -math.inf
        for a in legal:
            child = children[a]
            score = child.total / child.visits + c * math.sqrt(math.log(child.avail) / child.visits)
            if score > best_score:
                best, best_score = a, score
        return best


ISMCTS = AgentType(
    name="ismcts",
    description="Information-set Monte Carlo tree search (single observer): one tree over what "
    "the seat to move knows, a fresh re-draw of the hidden part each iteration; for games "
    "with hidden information or chance, any number of players.",
    factory=IsMctsAgent,
    params=(
        iterations_param(400),
        exploration_param(0.7, "UCB exploration constant (results are win shares in [0, 1])"),
        *rollout_params(),
    ),
    hidden_information_only=True,
)
