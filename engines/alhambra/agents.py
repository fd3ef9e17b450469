"""Alhambra's own computer players: ``greedy`` with its presets, and the information-set ``mcts``.

Every player reads only the view the runner hands it (hidden orders re-drawn) and only its
public parts; randomness comes from the generator it is built with.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from engines.alhambra import heuristics, notation
from engines.alhambra.flow import ACTION
from engines.alhambra.rules import AlhambraState
from engines.alhambra.tiles import COST, TYPE_OF
from engines.core import Action, AgentType, Game, Option, State

RESERVE_VALUE = 0.5
"""Worth of a tile kept in the reserve (it may be built later)."""


def _pick(
    rng: random.Random, actions: Sequence[Action], score: Callable[[Action], float]
) -> Action:
    """The best-scoring action; equal best ones are split by ``rng``."""
    best: list[Action] = []
    top = -float("inf")
    for a in actions:
        s = score(a)
        if s > top + 1e-9:
            top, best = s, [a]
        elif s > top - 1e-9:
            best.append(a)
    return best[0] if len(best) == 1 else rng.choice(best)


class GreedyAgent:
    """Scores each legal action once and plays the best.

    * a purchase: the tile's worth (majority points it should win at the coming scorings ×
      ``majority``, plus its best placement's wall gain × ``wall``), plus ``exact`` for an exact
      payment (another action), minus ``overpay`` per coin paid above the price;
    * a take: ``money`` per coin, less as the hand nears ``saturation`` coins, plus
      ``exact`` / 2 per market tile it makes exactly payable;
    * placing a bought or reserved tile: ``place_bonus`` plus its majority worth and wall gain
      at the best cell (a cell with more neighbours first, by ``compact``); otherwise the
      reserve;
    * an exchange: the change in majorities and walls; a removal only if nothing else is good.
    """

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        majority: float = 1.0,
        wall: float = 1.0,
        money: float = 0.8,
        exact: float = 4.0,
        overpay: float = 1.0,
        compact: float = 0.3,
        place_bonus: float = 2.0,
        saturation: float = 40.0,
    ) -> None:
        self.rng = rng
        self.majority = majority
        self.wall = wall
        self.money = money
        self.exact = exact
        self.overpay = overpay
        self.compact = compact
        self.place_bonus = place_bonus
        self.saturation = saturation

    def step(self, state: State) -> Action:
        if not isinstance(state, AlhambraState):
            raise TypeError(f"an Alhambra agent cannot play {type(state).__name__}")
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        scores = self.scores(state, legal)
        return _pick(self.rng, legal, scores.__getitem__)

    def scores(self, state: AlhambraState, legal: Sequence[Action]) -> dict[Action, float]:
        """The heuristic score of each of ``legal`` for the seat to move."""
        memo: dict[int, tuple[float, int | None]] = {}
        seat = state.current_player()

        def worth(tile: int) -> tuple[float, int | None]:
            if tile not in memo:
                spot, cell = heuristics.best_place(state, seat, tile, self.wall, self.compact)
                if cell is None:
                    memo[tile] = (RESERVE_VALUE, None)
                else:
                    gain = heuristics.majority_gain(state, seat, TYPE_OF[tile])
                    memo[tile] = (self.majority * gain + spot + self.place_bonus, cell)
            return memo[tile]

        score = self._placing if state.phase != ACTION else self._acting
        return {a: score(state, a, worth) for a in legal}

    def _placing(
        self, state: AlhambraState, action: Action, worth: Callable[[int], tuple[float, int | None]]
    ) -> float:
        d = notation.decode(action)
        if d.kind == "place":
            value, cell = worth(d.tile)
            return value + (0.01 if cell == d.cell else 0.0)
        if d.kind == "reserve":
            return RESERVE_VALUE
        return RESERVE_VALUE - 1.0  # give: only when nothing else is left

    def _acting(
        self, state: AlhambraState, action: Action, worth: Callable[[int], tuple[float, int | None]]
    ) -> float:
        d = notation.decode(action)
        seat = state.current_player()
        if d.kind == "take":
            display = state.display
            picked = [display[i] for i in range(len(display)) if d.mask >> i & 1]
            coins = sum(c % 10 for c in picked)
            enabled = heuristics.takes_enabling(state.hands[seat], picked, state.market)
            held = sum(c % 10 for c in state.hands[seat])
            # Money has no worth at the end: each coin counts less as the hand fills up.
            appetite = max(0.1, 1.0 - held / self.saturation)
            return self.money * coins * appetite + self.exact / 2 * enabled
        if d.kind == "buy":
            tile = state.market[d.slot]
            over = sum(d.values) - COST[tile]
            value, _ = worth(tile)
            bonus = self.exact if over == 0 else -self.overpay * over
            return value + bonus
        if d.kind == "place":  # from the reserve
            value, cell = worth(d.tile)
            return value - RESERVE_VALUE + (0.01 if cell == d.cell else 0.0)
        if d.kind == "swap":
            grid = state.grids[seat]
            cell = state.where[seat][d.other]
            old = grid[cell]  # read only: the trial layout is a copy
            gain = 0.0
            if TYPE_OF[d.tile] != TYPE_OF[old]:
                gain = heuristics.majority_gain(state, seat, TYPE_OF[d.tile]) + (
                    heuristics.majority_gain(state, seat, TYPE_OF[old], -1)
                )
            walls = heuristics.wall_gain(grid, cell, d.tile, state.longest_wall(seat))
            # An exchange costs the turn: it must gain something to beat a take.
            return self.majority * gain + self.wall * walls - 1.0
        if d.kind == "remove":
            return -2.0
        return -3.0  # pass


def _weight(name: str, default: float, doc: str) -> Option:
    return Option(name, float, default, doc, minimum=0.0, maximum=20.0)


GREEDY_PARAMS = (
    _weight("majority", 1.0, "weight of the majority points a tile should win"),
    _weight("wall", 1.0, "weight of each wall segment a placement adds to the longest wall"),
    _weight("money", 0.8, "worth of each coin taken"),
    _weight("exact", 4.0, "bonus for an exact payment (another action)"),
    _weight("overpay", 1.0, "cost of each coin paid above the price"),
    _weight("compact", 0.3, "preference per neighbour of a placement's cell"),
    _weight("place_bonus", 2.0, "worth of a tile built rather than kept in the reserve"),
    Option(
        "saturation",
        float,
        40.0,
        "coins in hand at which taking more money is worth little",
        minimum=1.0,
        maximum=1000.0,
    ),
)


def _greedy_type(name: str, description: str, presets: dict[str, float]) -> AgentType:
    return AgentType(
        name=name,
        description=description,
        factory=GreedyAgent,
        params=tuple(p for p in GREEDY_PARAMS if p.name not in presets),
        games=("alhambra",),
        presets=presets,
    )


GREEDY = _greedy_type(
    "greedy",
    "One-step heuristic: majority points a tile should win, wall gain, exact purchases, money "
    "worth taking; each weight a parameter.",
    {},
)
BUILDER = _greedy_type(
    "builder",
    "greedy preset that puts walls first.",
    {"wall": 3.0, "majority": 0.5, "compact": 0.1},
)
COLLECTOR = _greedy_type(
    "collector",
    "greedy preset that puts majorities first.",
    {"majority": 2.0, "wall": 0.4},
)
BANKER = _greedy_type(
    "banker",
    "greedy preset that hoards money and pays exactly.",
    {"money": 1.5, "exact": 8.0, "overpay": 2.5},
)


AGENTS: tuple[AgentType, ...] = (GREEDY, BUILDER, COLLECTOR, BANKER)
"""Alhambra's ``mcts`` and ``expert`` are in :mod:`engines.compiled.levels_alhambra` (the compiled
search sits above the games)."""
