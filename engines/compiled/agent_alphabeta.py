"""The compiled alpha-beta (:mod:`engines.compiled.search_negamax`) behind the agent contract,
on :class:`engines.compiled.agent_base.CompiledAgent`. Importing this module loads numba."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

import numpy as np

from engines.compiled import search_negamax
from engines.compiled.agent_base import CompiledAgent
from engines.core import Action, Game, State

QUIESCENCE = 4
"""Plies of forcing moves (captures, ejections, closed squares) searched past the horizon."""
MIN_TABLE_BITS, MAX_TABLE_BITS = 12, 20
"""The transposition table holds 2^bits entries (26 bytes each): about the node budget, within
these bounds (the largest, for searches without a node budget, is 26 MB)."""


def table_bits(nodes: int) -> int:
    """Bits of a transposition table for a search of ``nodes`` nodes (0 = no budget)."""
    if nodes <= 0:
        return MAX_TABLE_BITS
    return max(MIN_TABLE_BITS, min(MAX_TABLE_BITS, nodes.bit_length()))


class CompiledAlphaBetaAgent(CompiledAgent):
    """Iterative-deepening alpha-beta to ``depth`` plies within ``nodes`` nodes a move (0 = no
    budget) on the game's kernel, two players only.

    ``weights`` are the evaluation's, in the order of the kernel's ``WEIGHT_NAMES`` (empty for
    a game whose evaluation has none); a draw is worth ``-contempt`` to the agent (0: a draw is
    a draw). ``extend_single`` and ``compulsory`` are the search's rules for forcing moves
    (:mod:`engines.compiled.search_negamax`): a forced reply spends no depth, and a side with a
    forcing move must play one, so the quiescence step does not stand there. ``endgame`` loads
    the game's table of solved endings, built for this game's rules, at the first search
    (none: every position is searched). Each search is
    seeded from the agent's generator, which breaks ties among equal moves; with a node budget
    and no move time, a position and a seed give one move. After a search, ``completed_depth``
    and ``nodes_spent`` say how far it went.
    """

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        depth: int = 4,
        nodes: int = 0,
        quiescence: int = QUIESCENCE,
        weights: Sequence[float] = (),
        contempt: float = 0.0,
        extend_single: bool = False,
        compulsory: bool = False,
        endgame: Callable[[], np.ndarray] | None = None,
    ) -> None:
        if game.num_players != 2:
            raise ValueError(f"{game.name} with {game.num_players} players has no 2-player kernel")
        super().__init__(game, rng)
        self.depth = depth
        self.nodes = nodes
        self.quiescence = quiescence
        self.weights = np.asarray(weights, dtype=np.float64)
        self.contempt = contempt
        self.extend_single = extend_single
        self.compulsory = compulsory
        self.endgame_loader = endgame
        self.endgame: np.ndarray | None = None  # loaded at the first search
        self.table_bits = table_bits(nodes)
        self.completed_depth = 0
        self.nodes_spent = 0

    def smallest_budget(self) -> dict[str, int]:
        return {"depth": 1}

    def step(self, state: State) -> Action:
        actions = state.legal_actions()
        if len(actions) == 1:
            return actions[0]
        moves, _ = self._search(state, search_negamax.BEST_ONLY)
        return int(moves[0])

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """Every legal move with its value for the seat to move (``SearchAgent``), from the
        last depth completed within the same budgets as ``step``: exact when ``within`` is
        None; else exact for the moves within ``within`` of the best, and for each other an
        upper bound more than ``within`` below the best."""
        spread = math.inf if within is None else within
        moves, values = self._search(state, spread)
        return list(zip(moves.tolist(), values.tolist(), strict=True))

    def _table(self) -> np.ndarray:
        if self.endgame is None:
            loader = self.endgame_loader
            self.endgame = np.zeros(0, dtype=np.int8) if loader is None else loader()
        return self.endgame

    def _search(self, state: State, spread: float) -> tuple[np.ndarray, np.ndarray]:
        endgame = self._table()
        deadline = self.deadline()
        moves, values, self.completed_depth, self.nodes_spent = self.run(
            search_negamax.search,
            self.game_id,
            self.encode(state),
            self.depth,
            self.nodes,
            self.quiescence,
            self.weights,
            deadline,
            self.seed(),
            spread,
            self.table_bits,
            self.contempt,
            self.extend_single,
            self.compulsory,
            endgame,
        )
        return moves, values
