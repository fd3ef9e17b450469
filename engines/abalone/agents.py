"""Abalone computer players: ``greedy`` and the levels ``easy``, ``medium`` and ``hard``.

All of them judge positions with the evaluation of decision B7 (docs/rules/abalone.md,
:func:`engines.abalone.heuristics.evaluate`), whose four weights are parameters of every one
of them. ``greedy`` looks one ply ahead; ``easy`` plays greedily some of the time and at random
otherwise; ``medium`` and ``hard`` are the alpha-beta of :mod:`engines.abalone.search` (two
players) with that evaluation, searching one and two plies within a node budget. Budgets are
nodes, so every match replays exactly from its seed; in a clocked match the move's time
bounds the search too (``engines.clock``).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from engines.abalone.heuristics import DEFAULT_WEIGHTS, Weights, evaluate
from engines.abalone.rules import AbaloneState
from engines.abalone.search import AbaloneSearch
from engines.core import Action, AgentType, Game, Option, Seat, State


def evaluator(weights: Weights) -> Callable[[State, Seat], float]:
    """``state, seat -> value`` with these weights; ±1 once the game is over."""

    def value(state: State, seat: Seat) -> float:
        assert isinstance(state, AbaloneState)
        if state.is_terminal():
            return state.evaluate(seat)
        return evaluate(state, seat, weights)

    return value


class GreedyAgent:
    """The move whose resulting position the evaluation likes best (ties at random); with
    probability ``1 - greedy_share`` a uniformly random move instead."""

    def __init__(
        self, game: Game, rng: random.Random, weights: Weights, greedy_share: float = 1.0
    ) -> None:
        self.rng = rng
        self.value = evaluator(weights)
        self.greedy_share = greedy_share

    def step(self, state: State) -> Action:
        actions = state.legal_actions()
        if len(actions) == 1:
            return actions[0]
        if self.greedy_share < 1.0 and self.rng.random() >= self.greedy_share:
            return self.rng.choice(actions)
        seat = state.current_player()
        best: list[Action] = []
        best_value = -2.0
        for action in actions:
            child = state.clone()
            child.apply(action)
            v = self.value(child, seat)
            if v > best_value:
                best, best_value = [action], v
            elif v == best_value:
                best.append(action)
        return best[0] if len(best) == 1 else self.rng.choice(best)


WEIGHT_PARAMS: tuple[Option, ...] = (
    Option(
        "marbles",
        float,
        DEFAULT_WEIGHTS.marbles,
        "weight of marbles pushed off minus marbles lost (over the marbles needed to win)",
        minimum=0.0,
        maximum=100.0,
    ),
    Option(
        "centre",
        float,
        DEFAULT_WEIGHTS.centre,
        "weight of the marbles' mean distance from the centre, opponents' minus own (over 4)",
        minimum=0.0,
        maximum=100.0,
    ),
    Option(
        "cohesion",
        float,
        DEFAULT_WEIGHTS.cohesion,
        "weight of adjacent friendly pairs per marble, own minus opponents' (over 3)",
        minimum=0.0,
        maximum=100.0,
    ),
    Option(
        "danger",
        float,
        DEFAULT_WEIGHTS.danger,
        "weight of edge marbles the opponent could push off next move, theirs minus own (over 3)",
        minimum=0.0,
        maximum=100.0,
    ),
)


def _weights(marbles: float, centre: float, cohesion: float, danger: float) -> Weights:
    return Weights(marbles=marbles, centre=centre, cohesion=cohesion, danger=danger)


def _greedy(
    game: Game,
    rng: random.Random,
    marbles: float = DEFAULT_WEIGHTS.marbles,
    centre: float = DEFAULT_WEIGHTS.centre,
    cohesion: float = DEFAULT_WEIGHTS.cohesion,
    danger: float = DEFAULT_WEIGHTS.danger,
    greedy_share: float = 1.0,
) -> GreedyAgent:
    return GreedyAgent(game, rng, _weights(marbles, centre, cohesion, danger), greedy_share)


def _search(
    game: Game,
    rng: random.Random,
    depth: int,
    nodes: int,
    marbles: float = DEFAULT_WEIGHTS.marbles,
    centre: float = DEFAULT_WEIGHTS.centre,
    cohesion: float = DEFAULT_WEIGHTS.cohesion,
    danger: float = DEFAULT_WEIGHTS.danger,
) -> AbaloneSearch:
    weights = _weights(marbles, centre, cohesion, danger)
    return AbaloneSearch(game, rng, depth=depth, nodes=nodes, value=evaluator(weights))


EASY_GREEDY_SHARE = 0.5
MEDIUM_DEPTH, MEDIUM_NODES = 1, 1000
HARD_DEPTH, HARD_NODES = 2, 2000


def _depth_param(default: int) -> Option:
    return Option("depth", int, default, "deepest iteration in plies", minimum=1, maximum=20)


def _nodes_param(default: int) -> Option:
    return Option("nodes", int, default, "node budget per move", minimum=100, maximum=10_000_000)


GREEDY = AgentType(
    name="greedy",
    description="One ply ahead on the evaluation (marbles off, centre, cohesion, edge danger).",
    factory=_greedy,
    params=WEIGHT_PARAMS,
    games=("abalone",),
    min_players=2,
    max_players=3,
)
EASY = AgentType(
    name="easy",
    description="Greedy one ply ahead half of the time, a uniformly random move otherwise.",
    factory=_greedy,
    params=(
        *WEIGHT_PARAMS,
        Option(
            "greedy_share",
            float,
            EASY_GREEDY_SHARE,
            "probability of the greedy move instead of a random one",
            minimum=0.0,
            maximum=1.0,
        ),
    ),
    games=("abalone",),
    min_players=2,
    max_players=3,
)
MEDIUM = AgentType(
    name="medium",
    description=f"Alpha-beta {MEDIUM_DEPTH} plies deep ({MEDIUM_NODES} nodes) on the evaluation.",
    factory=lambda game, rng, depth=MEDIUM_DEPTH, nodes=MEDIUM_NODES, **w: _search(
        game, rng, depth, nodes, **w
    ),
    params=(_depth_param(MEDIUM_DEPTH), _nodes_param(MEDIUM_NODES), *WEIGHT_PARAMS),
    games=("abalone",),
    min_players=2,
    max_players=2,
)
HARD = AgentType(
    name="hard",
    description=f"Alpha-beta up to {HARD_DEPTH} plies within {HARD_NODES} nodes a move, "
    "ejections and pushes searched first.",
    factory=lambda game, rng, depth=HARD_DEPTH, nodes=HARD_NODES, **w: _search(
        game, rng, depth, nodes, **w
    ),
    params=(_depth_param(HARD_DEPTH), _nodes_param(HARD_NODES), *WEIGHT_PARAMS),
    games=("abalone",),
    min_players=2,
    max_players=2,
)

AGENTS: tuple[AgentType, ...] = (GREEDY, EASY, MEDIUM, HARD)

__all__ = ["AGENTS", "GreedyAgent", "evaluator"]
