"""The three Alquerque levels of docs/rules/alquerque.md: ``easy``, ``medium`` and ``hard``.

They are built on the generic players: ``easy`` is mostly the random player, ``medium`` a
shallow alpha-beta with the default evaluation, ``hard`` a deeper alpha-beta whose evaluation
also counts the capture chains each side has ready, so it steers towards multi-captures and
away from the holes that give the opponent one. Their order of strength is measured by
``bench/ladder/``.
"""

from __future__ import annotations

import random

from engines.agents.alphabeta import AlphaBetaAgent
from engines.alquerque.board import (
    FULL,
    WHITE,
    count_steps,
    decode_path,
    hanging,
    longest_chain,
    supported,
)
from engines.alquerque.rules import AlquerqueState
from engines.core import Action, AgentType, Game, Option, Seat, State


class EasyAgent:
    """A uniformly random move, except with probability ``greedy_share`` the move whose
    resulting position the default evaluation likes best."""

    def __init__(self, game: Game, rng: random.Random, greedy_share: float = 0.3) -> None:
        self.rng = rng
        self.greedy_share = greedy_share

    def step(self, state: State) -> Action:
        actions = state.legal_actions()
        if len(actions) == 1:
            return actions[0]
        if self.rng.random() >= self.greedy_share:
            return self.rng.choice(actions)
        seat = state.current_player()
        best: list[Action] = []
        best_value = -2.0
        for action in actions:
            child = state.clone()
            child.apply(action)
            value = child.evaluate(seat)
            if value > best_value:
                best, best_value = [action], value
            elif value == best_value:
                best.append(action)
        return self.rng.choice(best)


def capture_aware_evaluation(state: State, seat: Seat) -> float:
    """Material, capture chains ready on both sides, support and mobility, in [-1, 1].

    The side to move will take its longest chain at once, so that chain counts nearly as
    material; the other side's ready chain is a threat the mover may still parry, so it counts
    less. Pieces with a friend right behind them cannot be jumped from the front.
    """
    assert isinstance(state, AlquerqueState)
    if state.is_terminal():
        return state.evaluate(seat)
    white, black, mover = state.white, state.black, state.to_move
    own, enemy = (white, black) if seat == WHITE else (black, white)
    mover_bits, waiter_bits = (white, black) if mover == WHITE else (black, white)
    legal = state.ordered_actions()
    ready = len(decode_path(legal[0])) - 1 if state.has_capture else 0
    threat = longest_chain(waiter_bits, mover_bits)
    swing = 0.85 * ready - 0.35 * threat  # for the mover
    if mover != seat:
        swing = -swing
    empty = FULL ^ white ^ black
    material = own.bit_count() - enemy.bit_count() + swing
    support = supported(own, seat) - supported(enemy, 1 - seat)
    mobility = count_steps(own, empty, seat) - count_steps(enemy, empty, 1 - seat)
    exposure = hanging(enemy, own, empty) - hanging(own, enemy, empty)
    value = material / 12.0 + 0.02 * support + 0.01 * mobility - 0.01 * exposure
    return max(-0.99, min(0.99, value))


def _medium(game: Game, rng: random.Random, depth: int = 2) -> AlphaBetaAgent:
    return AlphaBetaAgent(game, rng, depth=depth)


def _hard(game: Game, rng: random.Random, depth: int = 6, nodes: int = 6000) -> AlphaBetaAgent:
    return AlphaBetaAgent(game, rng, depth=depth, nodes=nodes, evaluator=capture_aware_evaluation)


EASY = AgentType(
    name="easy",
    description="Mostly random: a uniformly random move, sometimes the best-looking one ply ahead.",
    factory=EasyAgent,
    params=(
        Option(
            "greedy_share",
            float,
            0.3,
            "probability of playing the one-ply greedy move instead of a random one",
            minimum=0.0,
            maximum=1.0,
        ),
    ),
    games=("alquerque",),
    min_players=2,
    max_players=2,
)
MEDIUM = AgentType(
    name="medium",
    description="Looks a few plies ahead: alpha-beta with material, safety and mobility.",
    factory=_medium,
    params=(Option("depth", int, 2, "search depth in plies", minimum=1, maximum=8),),
    games=("alquerque",),
    min_players=2,
    max_players=2,
)
HARD = AgentType(
    name="hard",
    description="Searches deep and sets up multi-captures: alpha-beta with a capture-chain "
    "evaluation and a node budget.",
    factory=_hard,
    params=(
        Option("depth", int, 6, "deepest iteration in plies", minimum=1, maximum=20),
        Option("nodes", int, 6000, "node budget per move", minimum=100, maximum=10_000_000),
    ),
    games=("alquerque",),
    min_players=2,
    max_players=2,
)

AGENTS: tuple[AgentType, ...] = (EASY, MEDIUM, HARD)

__all__ = ["AGENTS", "EasyAgent", "capture_aware_evaluation"]
