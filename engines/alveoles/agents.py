"""Computer players of Les Alvéoles: ``greedy`` and the parametrised ``value`` strategy.

Both read the position through :mod:`engines.alveoles.heuristics` (forced-closing cascades), draw
randomness only from the generator they are built with, and never modify the state they are
handed. The generic ``mcts`` and ``alphabeta`` players use the state's hooks instead.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from engines.alveoles.heuristics import cascade, closing_value, handover, safe_grooves
from engines.alveoles.notation import GROOVE_SQUARES
from engines.alveoles.perfect import PERFECT
from engines.alveoles.rules import AlveolesState
from engines.alveoles.scoring import BONUS, lines_of_square
from engines.core import Action, AgentType, Game, Option, Seat, State

HIGH = 20
"""Squares worth at least this much are the "high" tier (50, 30, 20 on the classic board)."""
WHITE_UNIT = 5.0
"""Points-equivalent of pushing one white square onto an opponent at ``white_push = 1``."""


def _pick(
    rng: random.Random, actions: Sequence[Action], score: Callable[[Action], float]
) -> Action:
    """The best-scoring action; equal best ones are split by ``rng`` (in ascending order)."""
    best: list[Action] = []
    top = -float("inf")
    for a in actions:
        s = score(a)
        if s > top + 1e-9:
            top, best = s, [a]
        elif s > top - 1e-9:
            best.append(a)
    return best[0] if len(best) == 1 else rng.choice(sorted(best))


def _as_alveoles(state: State) -> AlveolesState:
    if not isinstance(state, AlveolesState):
        raise TypeError(f"an Alvéoles agent cannot play {type(state).__name__}")
    return state


class GreedyAgent:
    """Closes the most valuable square it can, else plays a random safe groove, else hands over
    the cheapest chain (net points others collect from the forced closings it starts)."""

    def __init__(self, game: Game, rng: random.Random) -> None:
        self.rng = rng

    def step(self, state: State) -> Action:
        st = _as_alveoles(state)
        legal = st.legal_actions()
        if len(legal) == 1:
            return legal[0]
        if st.forced:
            return _pick(self.rng, legal, lambda g: closing_value(st, g))
        safe = safe_grooves(st)
        if safe:
            return self.rng.choice(safe)
        seat = st.current_player()
        return _pick(self.rng, legal, lambda g: -handover(st, g, seat))


class ValueAgent:
    """A square-value strategy: prices every move by the squares it wins and hands over.

    Parameters (all ≥ 0; 0 everywhere is a plain point-counting player):

    * ``want_high`` — extra appetite for high squares (≥ 20): each one it takes counts
      ``value × (1 + want_high)``.
    * ``fear_high`` — extra dread of giving high squares away: each one an opponent takes
      counts ``value × (1 + fear_high)`` against it.
    * ``white_push`` — preference for making opponents close white squares (which passes the
      turn back): worth ``5 × white_push`` points per white square an opponent must close, and
      among quiet moves it plates around white squares rather than numbered ones.
    * ``bonus_weight`` — weight of bonus lines and 3 × 3 blocks: closing a square in a row,
      column or block still open to a seat counts ``100 × bonus_weight × (share owned)²``.
    * ``caution`` — how much more what it gives away weighs than what it takes (factor
      ``1 + caution``), and how much it avoids putting a second plate on valuable squares
      during quiet play (they become the next sacrifices).
    """

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        want_high: float = 0.0,
        fear_high: float = 0.0,
        white_push: float = 0.0,
        bonus_weight: float = 0.0,
        caution: float = 0.0,
    ) -> None:
        self.rng = rng
        self.want_high = want_high
        self.fear_high = fear_high
        self.white_push = white_push
        self.bonus_weight = bonus_weight
        self.caution = caution

    def want(self, value: int) -> float:
        return value * (1.0 + self.want_high) if value >= HIGH else float(value)

    def fear(self, value: int) -> float:
        return value * (1.0 + self.fear_high) if value >= HIGH else float(value)

    def step(self, state: State) -> Action:
        st = _as_alveoles(state)
        legal = st.legal_actions()
        if len(legal) == 1:
            return legal[0]
        seat = st.current_player()
        if st.forced:
            return _pick(self.rng, legal, lambda g: self.exchange(st, g, seat))
        safe = safe_grooves(st)
        if safe:
            return _pick(self.rng, safe, lambda g: self.quiet(st, g))
        return _pick(self.rng, legal, lambda g: self.exchange(st, g, seat))

    def exchange(self, st: AlveolesState, groove: Action, seat: Seat) -> float:
        """Weighted balance of the squares taken and handed over when ``seat`` plays ``groove``."""
        values = st.game.values
        closures, _ = cascade(st, groove)
        owned = st.owned_masks()
        game = st.game
        lines = lines_of_square(game.rows, game.cols, game.square_bonus)
        total = 0.0
        for who, sq in closures:
            value = values[sq]
            gain = (
                self.bonus_weight * _bonus_potential(owned, who, sq, lines)
                if self.bonus_weight
                else 0
            )
            if who == seat:
                total += self.want(value) + gain
            else:
                total -= (1.0 + self.caution) * (self.fear(value) + gain)
                if value == 1:
                    total += WHITE_UNIT * self.white_push
            owned[who] |= 1 << sq
        return total

    def quiet(self, st: AlveolesState, groove: Action) -> float:
        """Preference among safe grooves (none of them gives a third plate)."""
        values = st.game.values
        score = 0.0
        for sq in GROOVE_SQUARES[groove]:
            value = values[sq]
            if st.sides(sq) == 1:  # this plate makes it 2-sided: a future sacrifice
                score -= self.caution * self.fear(value) / 4.0
            score += self.white_push * (1.0 if value == 1 else -1.0)
        return score


def _bonus_potential(
    owned: list[int], seat: Seat, sq: int, lines: tuple[tuple[int, ...], ...]
) -> float:
    """Bonus points ``seat`` may expect from taking ``sq``: squared share of each open line
    (``lines``: the board's bonus lines through each square)."""
    others = 0
    for s, mask in enumerate(owned):
        if s != seat:
            others |= mask
    mine = owned[seat]
    total = 0.0
    for line in lines[sq]:
        if line & others:
            continue  # someone else already holds a square of it
        share = ((line & mine).bit_count() + 1) / line.bit_count()
        total += share * share
    return BONUS * total


def _weight(name: str, doc: str) -> Option:
    return Option(name, float, 0.0, doc, minimum=0.0, maximum=10.0)


GREEDY = AgentType(
    name="greedy",
    description=(
        "Closes the most valuable square it can, plays safe grooves at random, and when it must "
        "open a chain hands over the cheapest one."
    ),
    factory=GreedyAgent,
    games=("alveoles",),
)

VALUE_PARAMS = (
    _weight("want_high", "extra appetite for squares worth ≥ 20 (value × (1 + w) when taken)"),
    _weight("fear_high", "extra dread of handing over squares worth ≥ 20 (value × (1 + w))"),
    _weight("white_push", "points-equivalent (× 5) of each white square an opponent must close"),
    _weight("bonus_weight", "weight of the rows, columns and 3 × 3 blocks a square helps complete"),
    _weight("caution", "extra weight of what it gives away; avoids 2-sided valuable squares"),
)


def _value_type(name: str, description: str, presets: dict[str, float]) -> AgentType:
    return AgentType(
        name=name,
        description=description,
        factory=ValueAgent,
        params=tuple(p for p in VALUE_PARAMS if p.name not in presets),
        games=("alveoles",),
        presets=presets,
    )


VALUE = _value_type(
    "value",
    "Square-value strategy: weights for taking and giving away high squares, pushing whites "
    "onto opponents, bonus lines and caution.",
    {},
)
HUNTER = _value_type(
    "hunter",
    "value preset that chases the 50, 30 and 20 squares.",
    {"want_high": 1.0, "fear_high": 0.5},
)
WHITE_PUSHER = _value_type(
    "white_pusher",
    "value preset that makes opponents close white squares and keeps numbered squares fresh.",
    {"white_push": 1.0, "caution": 0.25},
)
BONUS_BUILDER = _value_type(
    "bonus_builder",
    "value preset that aims at complete rows, columns and 3 × 3 blocks.",
    {"bonus_weight": 1.0},
)
CAUTIOUS = _value_type(
    "cautious",
    "value preset that minimises what it gives away, high squares above all.",
    {"caution": 1.0, "fear_high": 1.0},
)

AGENTS: tuple[AgentType, ...] = (
    GREEDY,
    VALUE,
    HUNTER,
    WHITE_PUSHER,
    BONUS_BUILDER,
    CAUTIOUS,
    PERFECT,
)
