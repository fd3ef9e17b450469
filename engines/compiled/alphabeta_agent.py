"""The compiled alpha-beta (:mod:`engines.compiled.negamax`) behind the agent contract.
Importing this module loads numba."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence

import numpy as np

from engines.compiled import negamax, uct
from engines.compiled.kernels import has_kernel, kernel_id
from engines.core import Action, Game, State
from engines.kernel_clock import NO_DEADLINE

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


class CompiledAlphaBetaAgent:
    """Iterative-deepening alpha-beta to ``depth`` plies within ``nodes`` nodes a move (0 = no
    budget) on the game's kernel, two players only.

    ``weights`` are the evaluation's, in the order of the kernel's ``WEIGHT_NAMES`` (empty for
    a game whose evaluation has none); a draw is worth ``-contempt`` to the agent (0: a draw is
    a draw). Each search is seeded from the agent's generator, which
    breaks ties among equal moves; with a node budget and no move time, a position and a seed
    give one move. After a search, ``completed_depth`` and ``nodes_spent`` say how far it went.
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
    ) -> None:
        if not has_kernel(game.name) or game.num_players != 2:
            raise ValueError(f"{game.name} with {game.num_players} players has no 2-player kernel")
        self.rng = rng
        self.game_id = kernel_id(game.name)
        self.encode = uct.KERNEL_MODULES[self.game_id].encode
        self.depth = depth
        self.nodes = nodes
        self.quiescence = quiescence
        self.weights = np.asarray(weights, dtype=np.float64)
        self.contempt = contempt
        self.table_bits = table_bits(nodes)
        self.move_time: float | None = None
        self.completed_depth = 0
        self.nodes_spent = 0

    def set_move_time(self, seconds: float | None) -> None:
        """Search each move until ``seconds`` have passed, or the depth or node budget is
        reached, whichever comes first (a time-controlled match sets it before each move);
        ``None`` goes back to the budgets alone. At least depth 1 is always searched."""
        if seconds is not None and not (math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"a move time must be a finite number of seconds, not {seconds}")
        self.move_time = seconds

    def step(self, state: State) -> Action:
        actions = state.legal_actions()
        if len(actions) == 1:
            return actions[0]
        moves, _ = self._search(state, negamax.BEST_ONLY)
        return int(moves[0])

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """Every legal move with its value for the seat to move (``SearchAgent``), from the
        last depth completed within the same budgets as ``step``: exact when ``within`` is
        None; else exact for the moves within ``within`` of the best, and for each other an
        upper bound more than ``within`` below the best."""
        spread = math.inf if within is None else within
        moves, values = self._search(state, spread)
        return list(zip(moves.tolist(), values.tolist(), strict=True))

    def _search(self, state: State, spread: float) -> tuple[np.ndarray, np.ndarray]:
        deadline = NO_DEADLINE
        if self.move_time is not None:
            deadline = time.perf_counter() + self.move_time
        moves, values, self.completed_depth, self.nodes_spent = negamax.search(
            self.game_id,
            self.encode(state),
            self.depth,
            self.nodes,
            self.quiescence,
            self.weights,
            deadline,
            self.rng.getrandbits(63),
            spread,
            self.table_bits,
            self.contempt,
        )
        return moves, values
