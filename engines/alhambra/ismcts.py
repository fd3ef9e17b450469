"""Information-set Monte Carlo tree search for Alhambra (single-observer ISMCTS).

One tree over the searching seat's information set: each iteration draws a determinisation
(``resample_from_infostate``: deck and bag re-drawn consistently with what the seat has seen),
walks the tree using only the actions legal in that determinisation (UCB with availability
counts, so an action seen rarely is not under-explored), adds one node, plays on with the
game's playout policy for at most ``rollout_plies`` plies and scores the end position with the
state's ``evaluate`` (projected points). The true draw order is never read: the agent works
on the view it is handed and on copies re-drawn from it.

Alhambra offers dozens of moves a turn, too many to try each with a few hundred iterations, so
each node considers only its ``width`` most promising moves: at the root those a heuristic
scores best (its scores also give a prior bonus that fades with visits), below it the game's
cheap ordering (``ordered_actions``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from engines.agents.tree_search import root_share_values
from engines.alhambra.policy import quick_score
from engines.alhambra.rules import AlhambraState
from engines.clock import MoveTimer, past
from engines.core import TERMINAL, Action, Game, Option, Seat, State

Scorer = Callable[[AlhambraState, Sequence[Action]], dict[Action, float]]


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


def _candidates(state: AlhambraState, width: int) -> list[Action]:
    legal = state.legal_actions()
    if len(legal) <= width:
        return legal
    return sorted(legal, key=lambda a: -quick_score(state, a))[:width]


class IsMctsAgent:
    """SO-ISMCTS with a fixed number of iterations (so matches replay); in a clocked match
    (``set_move_time``) a search also stops when the move's time is spent."""

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        iterations: int = 100,
        exploration: float = 0.7,
        rollout_plies: int = 10,
        width: int = 6,
        prior: float = 1.0,
        prior_scores: Scorer | None = None,
    ) -> None:
        self.rng = rng
        self.players = game.num_players
        self.iterations = int(iterations)
        self.exploration = exploration
        self.rollout_plies = int(rollout_plies)
        self.width = int(width)
        self.prior = prior
        self.prior_scores = prior_scores
        self.timer = MoveTimer()

    def set_move_time(self, seconds: float | None) -> None:
        """``TimedAgent``: stop each search after ``seconds`` (at least one iteration)."""
        self.timer.set(seconds)

    def step(self, state: State) -> Action:
        if not isinstance(state, AlhambraState):
            raise TypeError(f"an Alhambra agent cannot play {type(state).__name__}")
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        bias = self._root_bias(state, legal)
        root = self.search(state, bias)
        return max(bias, key=lambda a: (_rank(root.children.get(a)), bias[a]))

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """The root candidates searched often enough, with their mean result for the seat to
        move (the same search as ``step``; see
        ``engines.agents.tree_search.root_share_values``). Every value is a mean, so
        ``within`` changes nothing."""
        if not isinstance(state, AlhambraState):
            raise TypeError(f"an Alhambra agent cannot play {type(state).__name__}")
        root = self.search(state, self._root_bias(state, state.legal_actions()))
        children = ((a, c.visits, c.total) for a, c in root.children.items())
        return root_share_values(children, self.players)

    def _root_bias(self, state: AlhambraState, legal: list[Action]) -> dict[Action, float]:
        """The root's candidates, each with its prior in [0, 1] (best heuristic score = 1)."""
        if self.prior_scores is None:
            return dict.fromkeys(_candidates(state, self.width), 0.0)
        scores = self.prior_scores(state, legal)
        top = sorted(legal, key=lambda a: -scores[a])[: self.width]
        high, low = scores[top[0]], scores[top[-1]]
        span = high - low
        return {a: (scores[a] - low) / span if span > 0 else 1.0 for a in top}

    def search(self, state: AlhambraState, bias: dict[Action, float]) -> _Node:
        seat = state.current_player()
        root = _Node(TERMINAL)
        rng = self.rng
        deadline = self.timer.deadline()
        for i in range(self.iterations):
            if i and past(deadline):
                break
            sim = state.resample_from_infostate(seat, rng)
            path = [root]
            node = root
            while not sim.is_terminal():
                options = list(bias) if node is root else _candidates(sim, self.width)
                untried = [a for a in options if a not in node.children]
                if untried:
                    action = untried[int(rng.random() * len(untried))]
                    child = _Node(sim.current_player())
                    node.children[action] = child
                    for a in options:
                        if a != action and a in node.children:
                            node.children[a].avail += 1
                    sim.apply(action)
                    path.append(child)
                    break
                action = self._select(node, options, bias if node is root else None)
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

    def _select(
        self, node: _Node, options: list[Action], bias: dict[Action, float] | None
    ) -> Action:
        c = self.exploration
        best, best_score = options[0], -math.inf
        children = node.children
        for a in options:
            child = children[a]
            child.avail += 1
            score = child.total / child.visits + c * math.sqrt(math.log(child.avail) / child.visits)
            if bias is not None:
                score += self.prior * bias[a] / (1 + child.visits)
            if score > best_score:
                best, best_score = a, score
        return best


def _rank(node: _Node | None) -> int:
    return 0 if node is None else node.visits


MCTS_PARAMS = (
    Option("iterations", int, 100, "search iterations per decision", minimum=1, maximum=100_000),
    Option("exploration", float, 0.7, "UCB exploration constant", minimum=0.0, maximum=100.0),
    Option(
        "rollout_plies",
        int,
        10,
        "playout plies before the position is scored",
        minimum=0,
        maximum=10_000,
    ),
    Option("width", int, 6, "moves considered at each node", minimum=1, maximum=1_000),
    Option(
        "prior", float, 1.0, "weight of the heuristic prior at the root", minimum=0.0, maximum=100.0
    ),
)
