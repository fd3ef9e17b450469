"""A compilation that fails names the function (``engines.compiled.agent_base.call_compiled``); what
a batch's agents need compiled follows from the agents (``engines.compiled.warm``); a worker's
compiler is shared with the processes it forks and keeps a failure's reason
(``workers.warmup``)."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys

import pytest
from numba import njit
from repo_paths import REPO

from engines.compiled.agent_base import KernelCompileError, call_compiled
from engines.compiled.warm import Need, all_needs, needs
from engines.errors import OptionError
from engines.registry import agent_types, load_game, make_agent
from workers import warmup


def test_a_failed_compilation_names_the_function() -> None:
    @njit
    def broken(x: int) -> int:
        return x.no_such_attribute  # type: ignore[attr-defined,no-any-return]

    with pytest.raises(KernelCompileError, match=r"compiling .*broken failed \(TypingError"):
        call_compiled(broken, 1)


def test_a_compilation_undone_inside_numba_is_named_too() -> None:
    """What a time limit's exception left behind when numba's compiler callback swallowed it:
    numba's RuntimeError about its missing object, from a function still without a compiled
    version."""

    def search(x: int) -> int:
        raise RuntimeError("no compiled object yet for <Library 'search'>")

    class Dispatcher:
        """A numba dispatcher as it stands after such a failure: nothing compiled."""

        def __init__(self) -> None:
            self.py_func = search
            self.signatures: list[object] = []

        def __call__(self, x: int) -> int:
            return self.py_func(x)

    with pytest.raises(KernelCompileError, match=r"compiling .*search failed \(RuntimeError: no"):
        call_compiled(Dispatcher(), 1)


def test_an_error_of_compiled_code_that_ran_is_its_own() -> None:
    @njit
    def refuses(x: int) -> int:
        if x > 0:
            raise RuntimeError("x must not be positive")
        return x

    assert call_compiled(refuses, 0) == 0
    with pytest.raises(RuntimeError, match="must not be positive") as caught:
        call_compiled(refuses, 1)
    assert not isinstance(caught.value, KernelCompileError)


# What each agent plays, as docs/games.md and docs/rules/<game>.md state it.
EXPECTED = [
    ("alveoles", 2, ["random", "greedy"], set()),
    ("alquerque", 2, ["random", "easy"], set()),
    ("alquerque", 2, [{"name": "mcts", "backend": "python"}, "hard"], set()),
    ("alquerque", 2, ["mcts"], {"alquerque:uct"}),
    ("alquerque", 2, ["alphabeta", "random"], {"alquerque:negamax"}),
    ("alquerque", 2, ["expert", "hard"], {"alquerque:negamax"}),
    ("alquerque", 2, ["master", "expert"], {"alquerque:negamax"}),
    ("alveoles", 2, ["expert", "alphabeta"], {"alveoles:uct", "alveoles:negamax"}),
    ("alveoles", 3, ["expert", "greedy", "value"], {"alveoles:uct"}),
    ("alveoles", 3, ["master", "expert", "greedy"], {"alveoles:uct"}),
    ("abalone", 2, ["expert", "hard"], {"abalone:negamax"}),
    ("abalone", 2, ["master", "expert"], {"abalone:negamax"}),
    ("abalone", 3, ["expert", "greedy", "greedy"], {"abalone:uct"}),
    ("abalone", 3, ["master", "greedy", "greedy"], {"abalone:uct"}),
    ("alhambra", 3, ["mcts", "greedy", "banker"], {"alhambra:ismcts"}),
    ("alhambra", 2, ["expert", "builder"], {"alhambra:ismcts"}),
]


@pytest.mark.parametrize(("game", "players", "specs", "expected"), EXPECTED)
def test_a_batch_needs_the_searches_its_agents_call(
    game: str, players: int, specs: list[object], expected: set[str]
) -> None:
    built = load_game(game, players=players)
    assert {str(n) for n in needs(built, specs)} == expected  # type: ignore[arg-type]


def test_every_compiled_agent_of_every_game_needs_a_declared_search() -> None:
    """An agent made by this package's factories is one of the compiled searches, and what it
    needs is among what a worker can compile."""
    declared = set(all_needs())
    for need in declared:
        game = load_game(need.game)
        for players in sorted({game.game_type.min_players, 2, 3}):
            if not game.game_type.min_players <= players <= game.game_type.max_players:
                continue
            built = load_game(need.game, players=players)
            for atype in agent_types(built):
                try:
                    agent = make_agent(built, {"name": atype.name})
                except OptionError:
                    continue  # e.g. `perfect`, which plays only the boards it can solve
                found = needs(built, [{"name": atype.name}])
                assert found <= declared
                if type(agent).__module__.startswith("engines.compiled."):
                    assert found, f"{atype.name} on {need.game} needs nothing compiled"


def test_asking_about_agents_without_compiled_code_loads_no_numba() -> None:
    code = (
        "import sys; from engines.compiled.warm import needs; from engines.registry import "
        "load_game; g = load_game('alhambra', players=3); "
        "assert not needs(g, ['random', 'greedy', {'name': 'mcts', 'backend': 'python'}]); "
        "assert 'numba' not in sys.modules, 'numba loaded'"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _ask(compiler: warmup.HostCompiler, need: Need) -> None:
    compiler.request([need])


def test_what_a_forked_player_asks_for_reaches_the_compiler_and_back() -> None:
    need = Need("alquerque", "uct")
    ok = [sys.executable, "-c", "pass"]
    compiler = warmup.HostCompiler(all_needs(), command=ok)
    assert compiler.state(need) == warmup.IDLE
    assert not compiler.compile_next()  # nothing asked for
    child = multiprocessing.get_context("fork").Process(target=_ask, args=(compiler, need))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    assert compiler.state(need) == warmup.WANTED
    assert compiler.request([need]).pending == (need,)
    assert compiler.compile_next()
    assert compiler.state(need) == warmup.READY
    assert compiler.request([need]).ready
    other = Need("alquerque", "negamax")
    assert compiler.request([need, other]).pending == (other,)


def test_a_failed_compilation_is_kept_with_its_reason_and_not_retried() -> None:
    need = Need("abalone", "negamax")
    reason = "KernelCompileError: compiling the negamax search for abalone failed (boom)"
    fails = [sys.executable, "-c", f"import sys; print('noise'); sys.exit({reason!r})"]
    compiler = warmup.HostCompiler(all_needs(), command=fails)
    assert compiler.request([need]).pending == (need,)
    assert compiler.compile_next()
    assert compiler.state(need) == warmup.FAILED
    assert compiler.request([need]).failure == reason
    assert not compiler.compile_next()


def test_the_compile_command_refuses_what_is_no_search() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "workers.warmup", "alquerque:ismcts"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "'alquerque:ismcts' is not a compiled search" in lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--jobs", "0"], "--jobs must be at least 1, not 0"),
        (["--jobs", "two"], "argument --jobs: invalid int value: 'two'"),
        (["chess:uct"], "'chess:uct' is not a compiled search of a game"),
    ],
)
def test_the_warm_command_refuses_bad_arguments_in_one_line(args: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "engines.compiled.warm", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


def test_the_warm_command_spreads_its_searches_over_processes() -> None:
    """Two searches in two spawned processes (loaded from the cache the suite filled)."""
    command = ["-m", "engines.compiled.warm", "--jobs", "2", "alquerque:uct", "alveoles:negamax"]
    done = subprocess.run(
        [sys.executable, *command],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
