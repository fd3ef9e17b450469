"""Which compiled searches an agent calls, and compiling them so numba's on-disk cache holds them.

    python -m engines.compiled.warm                    # every search of every game
    python -m engines.compiled.warm alquerque:uct ...  # these only
    python -m engines.compiled.warm --jobs 2           # two processes side by side

What a compiled agent calls is a :class:`Need`: a game with a kernel and one of the compiled
searches (``uct``, the information-set ``ismcts``, the alpha-beta ``negamax``), whose entry
points its ``step`` and ``root_values`` reach. :func:`needs` derives a spec's from the agent it
builds, so no list of agent names can disagree with the factories; an agent that calls no
compiled code needs nothing. :func:`compile_need` runs a need's entry points once on a tiny
search, with the argument types agents pass: numba compiles them (or loads them from its cache)
and stores them in its cache, so any later process on the host loads them instead.

Importing this module loads no numba: a worker asks what a batch needs before it has any.

The Docker image runs the whole of it at build time with ``NUMBA_CACHE_DIR`` set, so workers
load the compiled code instead of compiling it (numba recompiles, once, on a machine whose CPU
differs from the one that built the cache). A Celery worker runs it per need, in a process of
its own, when a chunk first needs one (``workers.warmup``): no chunk's time limit counts it.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from engines.compiled.kernels import KERNEL_GAMES
from engines.core import Agent, Game
from engines.registry import load_game, make_agent

SEARCHES = ("uct", "ismcts", "negamax")
"""The compiled searches, each its own set of entry points."""


@dataclass(frozen=True, order=True)
class Need:
    """One compiled search for one game: ``alquerque:uct``."""

    game: str
    search: str

    def __str__(self) -> str:
        return f"{self.game}:{self.search}"

    @classmethod
    def parse(cls, text: str) -> Need:
        """``game:search`` back to a need; ``ValueError`` naming what is not one."""
        game, _, search = text.partition(":")
        need = cls(game, search)
        if need not in all_needs():
            known = ", ".join(map(str, all_needs()))
            raise ValueError(f"{text!r} is not a compiled search of a game (known: {known})")
        return need


def _searches_of(game: Game) -> tuple[str, ...]:
    """The compiled searches that play ``game``: the information-set search where players do
    not see everything, else UCT, and the alpha-beta on two-player games without chance."""
    gt = game.game_type
    if not gt.perfect_information:
        return ("ismcts",)
    if gt.chance or gt.min_players > 2:
        return ("uct",)
    return ("uct", "negamax")


def all_needs() -> tuple[Need, ...]:
    """Every compiled search of every game with a kernel, in a fixed order."""
    return tuple(Need(name, s) for name in KERNEL_GAMES for s in _searches_of(load_game(name)))


def _search_classes() -> Mapping[str, type]:
    """The compiled agents by the search they call (loads numba)."""
    from engines.compiled.agent_alphabeta import CompiledAlphaBetaAgent
    from engines.compiled.agent_ismcts import CompiledIsMctsAgent
    from engines.compiled.agent_mcts import CompiledMctsAgent

    return {
        "uct": CompiledMctsAgent,
        "ismcts": CompiledIsMctsAgent,
        "negamax": CompiledAlphaBetaAgent,
    }


def agent_needs(game: Game, agent: Agent) -> frozenset[Need]:
    """The compiled searches ``agent`` (built for ``game``) calls: per game and agent kind.

    Only an agent of this package can call one: any other is answered without loading numba.
    """
    if not type(agent).__module__.startswith(__package__ + "."):
        return frozenset()
    return frozenset(
        Need(game.name, search)
        for search, kind in _search_classes().items()
        if isinstance(agent, kind)
    )


def needs(game: Game, specs: Iterable[str | Mapping[str, Any]]) -> frozenset[Need]:
    """What the agents of ``specs`` (validated specs, as a batch stores them) need compiled
    to play ``game``; building an agent compiles nothing."""
    found: set[Need] = set()
    for spec in specs:
        found |= agent_needs(game, make_agent(game, spec, random.Random(0)))
    return frozenset(found)


def _tiny_agent(need: Need, game: Game) -> Any:
    """The smallest search of ``need``, with the parameter types its agents pass; with the
    game's endgame table where it has one, so that it is built and kept on disk too."""
    kind = _search_classes()[need.search]
    if need.search == "negamax":
        from engines.compiled.dispatch_alphabeta import endgame_loader

        return kind(game, random.Random(0), depth=2, endgame=endgame_loader(game))
    return kind(game, random.Random(0), iterations=2)


def compile_need(need: Need) -> None:
    """Compile (or load from numba's cache) the entry points of ``need``: a tiny search through
    ``step`` and ``root_values`` (player noise), the first also under a move time (clocks).

    Raises :class:`engines.compiled.agent_base.KernelCompileError` naming the need and the error.
    """
    from numba.core.errors import NumbaError

    from engines.compiled.agent_base import KernelCompileError

    game = load_game(need.game)
    state = game.new_initial_state(0)
    agent = _tiny_agent(need, game)
    steps: list[Callable[[], object]] = [
        lambda: agent.root_values(state),
        lambda: agent.set_move_time(60.0),
        lambda: agent.step(state),
    ]
    try:
        for run in steps:
            run()
    except KernelCompileError:
        raise
    except (NumbaError, RuntimeError) as exc:
        raise KernelCompileError(
            f"compiling the {need.search} search for {need.game} failed "
            f"({type(exc).__name__}: {exc})"
        ) from exc


def warm(selected: Iterable[Need] | None = None, jobs: int = 1) -> None:
    """Compile every need of ``selected`` (default: all of them), in order, or spread over
    ``jobs`` processes (numba compiles on one core; its cache takes writers side by side)."""
    chosen = list(all_needs() if selected is None else selected)
    if jobs <= 1 or len(chosen) <= 1:
        for need in chosen:
            compile_need(need)
        return
    # Spawned, not forked: the caller may have numba loaded, and LLVM does not survive a fork.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(jobs, len(chosen)), mp_context=context) as pool:
        list(pool.map(compile_need, chosen))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m engines.compiled.warm",
        description="Compile the compiled searches into numba's on-disk cache.",
    )
    parser.add_argument(
        "needs", nargs="*", metavar="GAME:SEARCH", help="these searches only (default: all)"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="processes compiling side by side (default 1)"
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {args.jobs}")
    try:
        chosen = [Need.parse(text) for text in args.needs]
    except ValueError as exc:
        parser.error(str(exc))
    # A failure ends the command with the error naming the search (the image's build stops).
    warm(chosen or None, jobs=args.jobs)


if __name__ == "__main__":
    main()
