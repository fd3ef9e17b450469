"""The compiled ``mcts`` backend: the search of :mod:`engines.compiled.uct` behind the agent
contract. Importing this module loads numba."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from numba.core.errors import NumbaError

from engines import kernel_clock
from engines.agents.mcts import root_share_values
from engines.clock import MoveTimer
from engines.compiled import uct
from engines.compiled.kernels import has_kernel, kernel_id
from engines.core import Action, Game, State

ROLLOUTS = {"random": uct.RANDOM_ROLLOUT, "game": uct.GAME_ROLLOUT, "strong": uct.STRONG_ROLLOUT}
"""The ``rollout`` values: ``mcts``'s two, and ``strong`` for the levels built on it."""


class KernelCompileError(RuntimeError):
    """Compiling a compiled function failed: it names the function, so a match that needed it
    fails with this reason instead of a numba internal's."""


def call_compiled(function: Any, *args: Any) -> Any:
    """``function(*args)`` for a numba dispatcher; a failure while it is compiled (it has no
    compiled version after the call) comes back as :class:`KernelCompileError` naming it.

    Only numba's and LLVM's errors are translated: any other exception raised meanwhile (a
    worker's soft time limit arriving in the middle of a compilation) goes on as it was. When
    such an exception lands in one of numba's compiler callbacks, numba swallows it and fails
    later with a ``RuntimeError`` ("no compiled object yet"): that is translated too.
    """
    try:
        return function(*args)
    except (NumbaError, RuntimeError) as exc:
        if function.signatures:
            raise  # compiled: the failure is the function's own
        name = f"{function.py_func.__module__}.{function.py_func.__qualname__}"
        raise KernelCompileError(
            f"compiling {name} failed ({type(exc).__name__}: {exc}); a worker compiles it "
            "before taking work (python -m engines.compiled.warm fills the cache)"
        ) from exc


_READY: set[int] = set()
"""Kernel ids whose search this process has loaded for a clocked match."""


def _ready(game: Game, game_id: int) -> None:
    """Load the compiled search and its clock (about a second the first time in a process):
    done before a clocked match's first move, whose clock would be charged for it."""
    if game_id in _READY:
        return
    position = uct.KERNEL_MODULES[game_id].encode(game.new_initial_state(0))
    uct.root_moves(game_id, position, game.num_players, 1, 1.4, uct.RANDOM_ROLLOUT, 1, 0, 0.0)
    kernel_clock.past(1.0)  # a deadline long past: the clock is read
    _READY.add(game_id)


class CompiledMctsAgent:
    """:class:`engines.agents.mcts.MctsAgent` played by the game's kernel: same parameters,
    same meaning, one compiled search per move seeded from the agent's generator.

    With a rollout cap, unfinished playouts are scored by the kernel's own ``evaluate``. In a
    clocked match (``set_move_time``) the search also stops at the move's deadline.
    """

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        iterations: int = 400,
        exploration: float = 1.4,
        rollout: str = "game",
        max_rollout_plies: int = 0,
    ) -> None:
        if not has_kernel(game.name):
            raise ValueError(f"{game.name} has no compiled kernel")
        if not game.game_type.perfect_information:
            # This search would read the hidden order: such games have their own search.
            raise ValueError(f"{game.name} hides information: use its information-set search")
        self.rng = rng
        self.game = game
        self.game_id = kernel_id(game.name)
        self.encode = uct.KERNEL_MODULES[self.game_id].encode
        self.players = game.num_players
        self.iterations = iterations
        self.exploration = exploration
        self.rollout = ROLLOUTS[rollout]
        cap = game.game_type.max_game_length
        self.rollout_cap = min(max_rollout_plies, cap) if max_rollout_plies > 0 else cap
        self.timer = MoveTimer()

    def set_move_time(self, seconds: float | None) -> None:
        """``TimedAgent``: stop each search after ``seconds`` (at least one iteration)."""
        if seconds is not None:
            _ready(self.game, self.game_id)
        self.timer.set(seconds)

    def step(self, state: State) -> Action:
        actions = state.legal_actions()
        if len(actions) == 1:
            return actions[0]
        return int(call_compiled(uct.search, *self._search_args(state)))

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """The searched root moves with their mean result for the seat to move (the same search
        as ``step``; see ``engines.agents.mcts.root_share_values``). Each value is a mean, so
        ``within`` changes nothing."""
        moves, visits, totals = call_compiled(uct.root_moves, *self._search_args(state))
        children = zip(moves.tolist(), visits.tolist(), totals.tolist(), strict=True)
        return root_share_values(children, self.players)

    def _search_args(
        self, state: State
    ) -> tuple[int, np.ndarray, int, int, float, int, int, int, float]:
        """What the compiled search takes, with a fresh seed from the agent's generator and
        the move's deadline (``perf_counter`` seconds, the clock ``engines.kernel_clock``
        reads)."""
        return (
            self.game_id,
            self.encode(state),
            self.players,
            self.iterations,
            self.exploration,
            self.rollout,
            self.rollout_cap,
            self.rng.getrandbits(63),
            self.timer.deadline(),
        )
