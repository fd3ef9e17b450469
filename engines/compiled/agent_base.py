"""What every compiled agent is built on: its game's kernel, its generator, its clock and the
loading of its search. Importing this module loads numba.

:class:`CompiledAgent` owns the kernel id and encoder, the agent's generator (each search is
seeded from it), the move timer (``set_move_time``, ``engines.clock.MoveTimer``: one meaning
for every compiled search) and ``preload``, which runs the agent's own ``step`` and
``root_values`` once on a tiny budget so that numba compiles or loads from its cache exactly
the functions those entry points call, with the argument types they pass. ``play_match`` calls
``preload`` before a clocked match's first clock starts (``engines.core.LoadingAgent``), so no
move is charged for loading; ``engines.compiled.warm`` fills the on-disk cache the same way.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from numba.core.errors import NumbaError

from engines.clock import MoveTimer
from engines.compiled.agent_signals import signals_held
from engines.compiled.dispatch import KERNEL_MODULES
from engines.compiled.kernels import has_kernel, kernel_id
from engines.compiled.search_parts import GAME_ROLLOUT, RANDOM_ROLLOUT, STRONG_ROLLOUT
from engines.core import Action, Game, State

ROLLOUTS = {"random": RANDOM_ROLLOUT, "game": GAME_ROLLOUT, "strong": STRONG_ROLLOUT}
"""The ``rollout`` values of the Monte Carlo searches: ``mcts``'s two, and ``strong`` for the
levels built on them."""
PRELOAD_SEED = 0
"""The game seed of the position ``preload`` searches."""


class KernelCompileError(RuntimeError):
    """Compiling a compiled function failed: it names the function, so a match that needed it
    fails with this reason instead of a numba internal's."""


def call_compiled(function: Any, *args: Any) -> Any:
    """``function(*args)`` for a numba dispatcher; a failure while it is compiled (it has no
    compiled version after the call) comes back as :class:`KernelCompileError` naming it.

    Ctrl-C, a worker's soft time limit and the like take effect when the call has returned
    (:func:`engines.compiled.agent_signals.signals_held`): raised inside numba's code, their
    exceptions corrupt its results. Only numba's and LLVM's errors are translated; should an
    exception land in one of numba's compiler callbacks all the same (from a signal that is
    not held), numba swallows it and fails later with a ``RuntimeError`` ("no compiled object
    yet"): that is translated too.
    """
    try:
        with signals_held():
            return function(*args)
    except (NumbaError, RuntimeError) as exc:
        if function.signatures:
            raise  # compiled: the failure is the function's own
        name = f"{function.py_func.__module__}.{function.py_func.__qualname__}"
        raise KernelCompileError(
            f"compiling {name} failed ({type(exc).__name__}: {exc}); a worker compiles it "
            "before taking work (python -m engines.compiled.warm fills the cache)"
        ) from exc


def preload_position(game: Game) -> State:
    """A position of ``game`` where the seat to move has a choice (so ``step`` searches): the
    start of the game with seed ``PRELOAD_SEED``, played on by first legal moves until one."""
    state = game.new_initial_state(PRELOAD_SEED)
    while not state.is_terminal() and len(state.legal_actions()) < 2:
        state.apply_action(state.legal_actions()[0])
    return state


class CompiledAgent(ABC):
    """The base of the compiled agents: ``game`` must have a kernel
    (:data:`engines.compiled.kernels.KERNEL_GAMES`).

    A subclass implements ``step`` and ``root_values`` with :meth:`run` (a compiled call whose
    compile failure names the function), the seed of :meth:`seed` and the deadline of
    :meth:`deadline`, and says in :meth:`smallest_budget` which of its attributes make a search
    as short as it can be.
    """

    def __init__(self, game: Game, rng: random.Random) -> None:
        if not has_kernel(game.name):
            raise ValueError(f"{game.name} has no compiled kernel")
        self.game = game
        self.rng = rng
        self.game_id = kernel_id(game.name)
        self.encode = KERNEL_MODULES[self.game_id].encode
        self.players = game.num_players
        self.timer = MoveTimer()
        self.loaded = False

    @abstractmethod
    def step(self, state: State) -> Action: ...

    @abstractmethod
    def root_values(
        self, state: State, within: float | None = None
    ) -> list[tuple[Action, float]]: ...

    @abstractmethod
    def smallest_budget(self) -> Mapping[str, Any]:
        """Attribute values that make one search as short as it can be (``preload``)."""

    def set_move_time(self, seconds: float | None) -> None:
        """``TimedAgent``: each search stops once ``seconds`` have passed (at least one
        iteration or depth always completes) or its budget is spent, whichever comes first;
        ``None``: the budget alone. A clocked match loads the search first (``preload``)."""
        self.timer.set(seconds)
        if seconds is not None:
            self.preload()

    def preload(self) -> None:
        """Compile, or load from numba's cache, every compiled function ``step`` and
        ``root_values`` call, by calling them (once per agent; a second call returns at once).
        The agent is left as it was: its generator's state, its budgets and its last search's
        figures. Raises :class:`KernelCompileError` naming a function that fails to compile."""
        if self.loaded:
            return
        state = preload_position(self.game)
        kept = dict(vars(self))
        generator = self.rng.getstate()
        try:
            for name, value in self.smallest_budget().items():
                setattr(self, name, value)
            if not state.is_terminal():
                self.step(state)
                self.root_values(state)
        finally:
            vars(self).clear()
            vars(self).update(kept)
            self.rng.setstate(generator)
        self.loaded = True

    def seed(self) -> int:
        """A fresh seed for one search, from the agent's generator."""
        return self.rng.getrandbits(63)

    def deadline(self) -> float:
        """The deadline of a search starting now (``perf_counter`` seconds, the clock
        ``engines.kernel_clock`` reads; ``NO_DEADLINE`` without a move time)."""
        return self.timer.deadline()

    @staticmethod
    def run(function: Any, *args: Any) -> Any:
        """``function(*args)`` through :func:`call_compiled`."""
        return call_compiled(function, *args)
