"""Engine speed: random playouts of every registered game, side by side with OpenSpiel.

    .venv/bin/python -m bench.engines                 # every game, 7 rounds of ~1 s per loop
    .venv/bin/python -m bench.engines --game alquerque --seconds 4 --rounds 5
    .venv/bin/python -m bench.engines --kernels       # the two kernel targets, one process

For each game, in the same run and interleaved round by round so that machine load hits both
sides alike:
- ours: ``new_initial_state``, ``legal_actions``, ``rng.choice``, ``apply`` (the unchecked path),
  until the end or the game's ply cap;
- OpenSpiel's closest game (``OPENSPIEL_GAMES``) through its Python loop (``legal_actions``,
  ``random.choice``, ``apply_action``) and through its C++ loop (``evaluate_bots`` with two
  ``make_uniform_random_bot``; plies read from the finished state's history).
Times are CPU seconds of this process (``time.process_time``), so other work on the machine
perturbs them less; each figure is the median over the rounds, and each ratio the median of the
per-round ratios. It prints games/s, µs per ply and
the ratios ours/OpenSpiel (below 1 = we are faster), then MCTS iterations per second at each
game's opening (ours, and OpenSpiel's C++ ``MCTSBot`` with random rollouts as a yardstick).
For Abalone it also times search (``abalone_search``): alpha-beta nodes per CPU second on
middle-game positions, for the generic agent at depth 2 and for the ``hard`` level's own
search, and ``hard``'s CPU time per move over whole self-play games; then the compiled
alpha-beta (``compiled_alphabeta``): its nodes per CPU second over ``hard``'s on the same
positions, and the depth it completes within one second there and at the opening.

For games with a compiled kernel it adds ``kernel``: random playouts run inside the kernel
(``engines.compiled.search_uct.random_playouts``), the compiled ``mcts`` with random rollouts,
their ratios to OpenSpiel's C++ loop and ``MCTSBot``, and first the kernels' compile time in a
fresh process (cold cache, then cached).
Results go to ``bench/results/engines.json``. Needs the ``bench`` extra (``open_spiel``).

Alhambra (``--game alhambra``, or with every game) adds its own figures: random 3-player games
per CPU second through the public contract (the same loop) and inside its kernel, interleaved
round by round with random Alvéoles playouts so that the ratios between the rates are
measured under the same load; the compiled information-set MCTS's iterations per CPU second
at a 3-player opening; and a cProfile of the contract's loop.

``--searches`` measures only the compiled searches, round by round in one process: the
alpha-beta's nodes per CPU second (Abalone's eight middle-game positions and Alquerque's
opening, iterative deepening within a node budget), UCT's iterations per CPU second at each
kernel game's opening (random rollouts) and the information-set search's at a 3-player
Alhambra opening (``bench/results/searches.json``). Run it from two checkouts in turn to
compare two versions of the searches on one machine state.

``--kernels`` measures only the two kernel targets, in one process, the four loops interleaved
round by round: Alhambra's kernel against its public contract (random 3-player games per CPU
second, target ≥ 20×) and Abalone's kernel against OpenSpiel's ``chinese_checkers`` C++ loop
(random plies per CPU second, target ≥ 5×), each the median of the per-round ratios, with the
load average before and after (``bench/results/kernels.json``).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from engines.agents.mcts import MctsAgent
from engines.compiled import dispatch, search_ismcts, search_parts, search_uct
from engines.compiled.kernels import has_kernel, kernel_id
from engines.registry import game_names, load_game

RESULTS = Path(__file__).resolve().parent / "results"
OPENSPIEL_GAMES: dict[str, tuple[str, dict[str, Any]]] = {
    "abalone": ("chinese_checkers", {}),
    "alquerque": ("checkers", {}),
    "alveoles": ("dots_and_boxes", {"num_rows": 8, "num_cols": 8}),
}
"""Our game -> the OpenSpiel game closest to it in board size and kind of move."""

Loop = Callable[[random.Random], tuple[int, int]]
"""Plays some games; returns (games, plies)."""


def timed(loop: Loop, seconds: float, seed: int) -> dict[str, float]:
    """Run ``loop`` repeatedly for about ``seconds`` of CPU time; rates per game and ply."""
    rng = random.Random(seed)
    games = plies = 0
    started = time.process_time()
    while True:
        g, p = loop(rng)
        games += g
        plies += p
        spent = time.process_time() - started
        if spent >= seconds:
            break
    return {
        "games_per_s": games / spent,
        "us_per_ply": 1e6 * spent / plies,
        "plies_per_game": plies / games,
    }


def our_loop(name: str, players: int | None = None) -> Loop:
    """Random playouts of ``name`` (with ``players``, else its minimum) through the contract."""
    game = load_game(name, players=players)
    cap = game.game_type.max_game_length

    def loop(rng: random.Random) -> tuple[int, int]:
        state = game.new_initial_state(rng.getrandbits(32))
        plies = 0
        while not state.is_terminal() and plies < cap:
            state.apply(rng.choice(state.legal_actions()))
            plies += 1
        return 1, plies

    return loop


def kernel_loop(name: str, batch: int = 200, players: int | None = None) -> Loop:
    """Random playouts inside the compiled kernel: ``batch`` games per call, one call."""
    game = load_game(name, players=players)
    game_id = kernel_id(name)
    root = dispatch.KERNEL_MODULES[game_id].encode(game.new_initial_state(0))
    cap = game.game_type.max_game_length

    def loop(rng: random.Random) -> tuple[int, int]:
        return batch, int(
            search_uct.random_playouts(game_id, root, batch, cap, rng.getrandbits(63))
        )

    return loop


def compile_times() -> dict[str, float]:
    """Seconds to compile every kernel the compiled search uses (``engines.compiled.warm`` in a
    fresh process with an empty ``NUMBA_CACHE_DIR``), then to load them from that cache in
    another fresh process: wall time and CPU time of the child (the steadier figure on a
    shared machine). Both include the child's start-up and imports."""
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for label in ("cold", "cached"):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "engines.compiled.warm"], env=env, check=True)
            out[f"{label}_wall_s"] = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            out[f"{label}_cpu_s"] = (after.ru_utime - before.ru_utime) + (
                after.ru_stime - before.ru_stime
            )
    return out


def compiled_mcts_rate(name: str, iterations: int) -> float:
    """Compiled UCT iterations per CPU second from the opening, uniform random rollouts."""
    game = load_game(name)
    game_id = kernel_id(name)
    root = dispatch.KERNEL_MODULES[game_id].encode(game.new_initial_state(0))
    cap = game.game_type.max_game_length
    started = time.process_time()
    search_uct.search(
        game_id, root, game.num_players, iterations, 1.4, search_parts.RANDOM_ROLLOUT, cap, 1, 0.0
    )
    return iterations / (time.process_time() - started)


def openspiel_python_loop(name: str, params: dict[str, Any]) -> Loop:
    import pyspiel

    game = pyspiel.load_game(name, params)

    def loop(rng: random.Random) -> tuple[int, int]:
        state = game.new_initial_state()
        plies = 0
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
            plies += 1
        return 1, plies

    return loop


def openspiel_cpp_loop(name: str, params: dict[str, Any]) -> Loop:
    import pyspiel

    game = pyspiel.load_game(name, params)
    players = game.num_players()

    def loop(rng: random.Random) -> tuple[int, int]:
        bots = [pyspiel.make_uniform_random_bot(p, rng.getrandbits(31)) for p in range(players)]
        state = game.new_initial_state()
        pyspiel.evaluate_bots(state, bots, rng.getrandbits(31))  # plays ``state`` to the end
        return 1, len(state.history())

    return loop


def mcts_rate(name: str, iterations: int) -> float:
    """Our UCT iterations per CPU second from the opening (game-provided rollouts)."""
    game = load_game(name)
    agent = MctsAgent(game, random.Random(0), iterations=iterations)
    state = game.new_initial_state(0)
    started = time.process_time()
    agent.search(state)
    return iterations / (time.process_time() - started)


def openspiel_mcts_rate(name: str, params: dict[str, Any], iterations: int) -> float:
    import pyspiel

    game = pyspiel.load_game(name, params)
    evaluator = pyspiel.RandomRolloutEvaluator(1, 0)
    bot = pyspiel.MCTSBot(game, evaluator, 1.4, iterations, 1000, False, 0, False)
    started = time.process_time()
    bot.step(game.new_initial_state())
    return iterations / (time.process_time() - started)


KERNEL_PLY_TARGETS = {"abalone": 5.0}
"""Kernel random plies per second over OpenSpiel's C++ loop's, where not the usual 10×
(Abalone's issue asks 5× over chinese_checkers, whose C++ moves are cheaper than Abalone's)."""


def bench_game(name: str, seconds: float, rounds: int, iterations: int) -> dict[str, Any]:
    compiled = has_kernel(name)
    if compiled:  # compile (or load) before anything is timed
        kernel_loop(name, 1)(random.Random(0))
    loops: dict[str, Loop] = {"ours": our_loop(name)}
    if compiled:
        loops["kernel"] = kernel_loop(name)
    baseline = OPENSPIEL_GAMES.get(name)
    if baseline is not None:
        loops["openspiel_python"] = openspiel_python_loop(*baseline)
        loops["openspiel_cpp"] = openspiel_cpp_loop(*baseline)
    for loop in loops.values():  # warm-up: imports, lazily filled tables
        timed(loop, seconds / 4, 0)
    runs: dict[str, list[dict[str, float]]] = {key: [] for key in loops}
    for r in range(rounds):
        for key, loop in loops.items():
            runs[key].append(timed(loop, seconds, 1 + r))
    out: dict[str, Any] = {"game": name}
    for key, samples in runs.items():
        out[key] = {
            metric: statistics.median(s[metric] for s in samples)
            for metric in ("games_per_s", "us_per_ply", "plies_per_game")
        }
    if compiled:
        out["ratio_plies_per_s_kernel_vs_ours"] = statistics.median(
            theirs["us_per_ply"] / ours["us_per_ply"]
            for ours, theirs in zip(runs["kernel"], runs["ours"], strict=True)
        )
    out["mcts_iterations_per_s"] = {"ours": mcts_rate(name, iterations)}
    if compiled:
        out["mcts_iterations_per_s"]["compiled_random"] = statistics.median(
            compiled_mcts_rate(name, 10 * iterations) for _ in range(3)
        )
    if baseline is not None:
        out["openspiel_game"] = {"name": baseline[0], "params": baseline[1]}
        for key in ("openspiel_python", "openspiel_cpp"):
            # Paired round by round, then the median: load that drifts during the run cancels.
            out[f"ratio_us_per_ply_vs_{key}"] = statistics.median(
                ours["us_per_ply"] / theirs["us_per_ply"]
                for ours, theirs in zip(runs["ours"], runs[key], strict=True)
            )
        out["mcts_iterations_per_s"]["openspiel_cpp"] = openspiel_mcts_rate(*baseline, iterations)
        if compiled:
            out["ratio_games_per_s_kernel_vs_openspiel_cpp"] = statistics.median(
                ours["games_per_s"] / theirs["games_per_s"]
                for ours, theirs in zip(runs["kernel"], runs["openspiel_cpp"], strict=True)
            )
            out["ratio_plies_per_s_kernel_vs_openspiel_cpp"] = statistics.median(
                theirs["us_per_ply"] / ours["us_per_ply"]
                for ours, theirs in zip(runs["kernel"], runs["openspiel_cpp"], strict=True)
            )
            out["target_plies_per_s_kernel_vs_openspiel_cpp"] = KERNEL_PLY_TARGETS.get(name, 10.0)
            rates = out["mcts_iterations_per_s"]
            out["ratio_mcts_compiled_random_vs_openspiel_cpp"] = (
                rates["compiled_random"] / rates["openspiel_cpp"]
            )
    return out


ALHAMBRA_PLAYERS = 3
ALHAMBRA_KERNEL_RATIO = 20.0
"""The kernel's random 3-player games per second, as a multiple of the contract's (the
contract's own target, 100 games/s, was retired in favour of the kernel)."""


def profile_loop(loop: Loop, games: int, top: int = 12) -> list[dict[str, Any]]:
    """The ``top`` functions by own time over ``games`` games of ``loop``."""
    profiler = cProfile.Profile()
    rng = random.Random(0)
    profiler.enable()
    for _ in range(games):
        loop(rng)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]  # type: ignore[attr-defined]
    return [
        {
            "function": f"{Path(file).name}:{line}({func})",
            "calls": calls,
            "own_s": own,
            "cumulative_s": cum,
            "own_share": own / total if total else 0.0,
        }
        for (file, line, func), (_, calls, own, cum, _) in rows
    ]


def ismcts_rate(players: int, iterations: int) -> float:
    """Compiled information-set MCTS iterations per CPU second at an Alhambra opening with
    ``players`` seats: the ``mcts`` defaults (10 playout plies, width 6), greedy's six best
    moves at the root."""
    from engines.alhambra.agents import GreedyAgent
    from engines.alhambra.rules import AlhambraState

    game = load_game("alhambra", players=players)
    state = game.new_initial_state(0)
    assert isinstance(state, AlhambraState)
    legal = state.legal_actions()
    scores = GreedyAgent(game, random.Random(0)).scores(state, legal)
    top = sorted(legal, key=lambda a: -scores[a])[:6]
    moves = np.array(top, dtype=np.int64)
    bias = np.zeros(len(top))
    root = dispatch.KERNEL_MODULES[dispatch.ALHAMBRA].encode(state)
    args = (dispatch.ALHAMBRA, root, players, iterations, 0.7, 10, 6, moves, bias, 1.0)
    # Compiled or loaded before timing.
    search_ismcts.root_moves(*args, search_parts.GAME_ROLLOUT, 0, 0.0)
    started = time.process_time()
    search_ismcts.root_moves(*args, search_parts.GAME_ROLLOUT, 1, 0.0)
    return iterations / (time.process_time() - started)


def bench_alhambra(
    seconds: float, rounds: int, profile_games: int, iterations: int
) -> dict[str, Any]:
    """Random 3-player Alhambra games/s through the contract and in the kernel, beside random
    Alvéoles games/s, the information-set search's rate, and a profile."""
    alhambra = our_loop("alhambra", ALHAMBRA_PLAYERS)
    alveoles = our_loop("alveoles")
    kernel = kernel_loop("alhambra", 50, ALHAMBRA_PLAYERS)
    for loop in (alhambra, alveoles, kernel):
        timed(loop, seconds / 4, 0)
    triples = [
        tuple(timed(loop, seconds, 1 + r) for loop in (alhambra, alveoles, kernel))
        for r in range(rounds)
    ]
    out: dict[str, Any] = {"game": "alhambra", "players": ALHAMBRA_PLAYERS}
    for key, index in (("alhambra", 0), ("alveoles", 1), ("kernel", 2)):
        out[key] = {
            metric: statistics.median(p[index][metric] for p in triples)
            for metric in ("games_per_s", "us_per_ply", "plies_per_game")
        }
    out["ratio_games_per_s_vs_alveoles"] = statistics.median(
        a["games_per_s"] / b["games_per_s"] for a, b, _ in triples
    )
    out["ratio_us_per_ply_vs_alveoles"] = statistics.median(
        a["us_per_ply"] / b["us_per_ply"] for a, b, _ in triples
    )
    out["ratio_games_per_s_kernel_vs_contract"] = statistics.median(
        k["games_per_s"] / a["games_per_s"] for a, _, k in triples
    )
    out["kernel_target_ratio"] = ALHAMBRA_KERNEL_RATIO
    out["ismcts_iterations_per_s"] = ismcts_rate(ALHAMBRA_PLAYERS, iterations)
    out["profile"] = profile_loop(alhambra, profile_games)
    return out


def report_alhambra(row: dict[str, Any]) -> None:
    a, b, k = row["alhambra"], row["alveoles"], row["kernel"]
    print(f"\nalhambra ({row['players']} players, random)")
    for key, r in (
        ("alhambra, public contract", a),
        ("alhambra, kernel", k),
        ("alveoles (2 players), contract", b),
    ):
        print(
            f"  {key:<38} {r['games_per_s']:>10.1f} games/s {r['us_per_ply']:>8.2f} µs/ply "
            f"{r['plies_per_game']:>7.1f} plies/game"
        )
    print(
        f"  alhambra/alveoles games per s: {row['ratio_games_per_s_vs_alveoles']:.3f}; "
        f"µs per ply: {row['ratio_us_per_ply_vs_alveoles']:.2f}"
    )
    ratio = row["ratio_games_per_s_kernel_vs_contract"]
    met = "met" if ratio >= row["kernel_target_ratio"] else "NOT met"
    target = row["kernel_target_ratio"]
    print(f"  kernel/contract games per s: {ratio:.1f} (target ≥ {target:.0f}: {met})")
    print(
        f"  compiled information-set MCTS at the opening: "
        f"{row['ismcts_iterations_per_s']:,.0f} iterations/s"
    )
    print("  where the contract's time goes (cProfile, own time):")
    for p in row["profile"]:
        print(f"    {100 * p['own_share']:5.1f}%  {p['calls']:>8} calls  {p['function']}")


def report(row: dict[str, Any]) -> None:
    name = row["game"]
    print(f"\n{name}")
    for key in ("ours", "kernel", "openspiel_python", "openspiel_cpp"):
        if key in row:
            r = row[key]
            label = key if key in ("ours", "kernel") else f"{key} ({row['openspiel_game']['name']})"
            print(
                f"  {label:<38} {r['games_per_s']:>10.1f} games/s {r['us_per_ply']:>8.2f} µs/ply "
                f"{r['plies_per_game']:>7.1f} plies/game"
            )
    for key in ("openspiel_python", "openspiel_cpp"):
        ratio = row.get(f"ratio_us_per_ply_vs_{key}")
        if ratio is not None:
            print(f"  ours/{key} µs per ply: {ratio:.2f}")
    rates = row["mcts_iterations_per_s"]
    print(
        "  MCTS iterations/s at the opening: " + ", ".join(f"{k} {v:.0f}" for k, v in rates.items())
    )
    if "ratio_plies_per_s_kernel_vs_ours" in row:
        print(f"  kernel plies/s / ours: {row['ratio_plies_per_s_kernel_vs_ours']:.1f}×")
    ply_target = row.get("target_plies_per_s_kernel_vs_openspiel_cpp", 10.0)
    for key, target, what in (
        ("ratio_games_per_s_kernel_vs_openspiel_cpp", 10.0, "kernel games/s"),
        ("ratio_plies_per_s_kernel_vs_openspiel_cpp", ply_target, "kernel plies/s"),
        ("ratio_mcts_compiled_random_vs_openspiel_cpp", 5.0, "compiled mcts (random) it/s"),
    ):
        if key in row:
            verdict = "met" if row[key] >= target else "NOT met"
            print(f"  {what} / OpenSpiel C++: {row[key]:.1f}× (target ≥ {target:g}×: {verdict})")


# --------------------------------------------------------------------------- Abalone search

ABALONE_TARGET = 3.0
"""Abalone's µs per ply may be at most this many times chinese_checkers' Python loop's."""


ALPHABETA_NODES_TARGET = 20.0
"""The compiled alpha-beta's nodes per CPU second over ``hard``'s, at least."""
ALPHABETA_DEPTH_TARGET = 5
"""Plies the compiled alpha-beta completes within one second, at least."""


def _abalone_positions(count: int) -> list[Any]:
    """Middle-game positions: ``count`` games between greedy players, 20 to 60 plies in."""
    from engines.core import agent_rng, match_seed
    from engines.registry import make_agent

    game = load_game("abalone")
    positions = []
    for i in range(count):
        seed = match_seed(77, i)
        agents = [make_agent(game, "easy", agent_rng(seed, s)) for s in range(2)]
        state = game.new_initial_state(seed)
        for _ in range(20 + (40 * i) // max(1, count - 1)):
            if state.is_terminal():
                break
            state.apply(agents[state.current_player()].step(state))
        if not state.is_terminal():
            positions.append(state)
    return positions


def abalone_search(seconds: float) -> dict[str, Any]:
    """Alpha-beta nodes per CPU second on middle-game positions (the generic agent at depth 2,
    and the levels' own search), and ``hard``'s CPU time per move over whole self-play games."""
    from engines.agents.alphabeta import AlphaBetaAgent
    from engines.core import agent_rng, match_seed, play_match
    from engines.registry import make_agent

    game = load_game("abalone")
    positions = _abalone_positions(8)
    out: dict[str, Any] = {}
    for label, build in (
        ("generic_alphabeta_depth2", lambda: AlphaBetaAgent(game, random.Random(0), depth=2)),
        ("hard", lambda: make_agent(game, "hard", random.Random(0))),
    ):
        nodes = 0
        started = time.process_time()
        for state in positions:
            agent = build()
            agent.step(state)
            nodes += agent.count  # type: ignore[attr-defined]
        spent = time.process_time() - started
        out[f"{label}_nodes_per_s"] = nodes / spent
        out[f"{label}_nodes_per_move"] = nodes / len(positions)
    moves = 0
    spent = 0.0
    games = 0
    while spent < max(seconds, 1.0) * 5 or games < 2:
        seed = match_seed(78, games)
        agents = [make_agent(game, "hard", agent_rng(seed, s)) for s in range(2)]
        started = time.process_time()
        result = play_match(game, agents, seed)
        spent += time.process_time() - started
        moves += result.plies
        games += 1
    out["hard_ms_per_move"] = 1000 * spent / moves
    out["hard_s_per_game"] = spent / games
    out["hard_games_timed"] = games
    return out


def compiled_alphabeta(rounds: int) -> dict[str, Any]:
    """The compiled alpha-beta on Abalone against ``hard``'s search: nodes per CPU second on the
    same eight middle-game positions, round by round (the ratio is the median of the rounds'),
    and the depth it completes within one second at the standard opening and at each position:
    by the clock (``set_move_time(1.0)``, wall time, so machine load lowers it) and within the
    nodes it searches in one CPU second (as measured here, so load does not)."""
    from engines.compiled.agent_alphabeta import CompiledAlphaBetaAgent
    from engines.registry import make_agent

    game = load_game("abalone")
    positions = _abalone_positions(8)
    budget = 200_000
    CompiledAlphaBetaAgent(game, random.Random(0), depth=2).step(positions[0])  # load numba
    ratios, hard_rates, compiled_rates = [], [], []
    for r in range(rounds):
        nodes = 0
        started = time.process_time()
        for state in positions:
            hard = make_agent(game, "hard", random.Random(r))
            hard.step(state)
            nodes += hard.count  # type: ignore[attr-defined]
        hard_rate = nodes / (time.process_time() - started)
        nodes = 0
        started = time.process_time()
        for state in positions:
            agent = CompiledAlphaBetaAgent(game, random.Random(r), depth=64, nodes=budget)
            agent.step(state)
            nodes += agent.nodes_spent
        compiled_rate = nodes / (time.process_time() - started)
        hard_rates.append(hard_rate)
        compiled_rates.append(compiled_rate)
        ratios.append(compiled_rate / hard_rate)
    per_cpu_second = int(statistics.median(compiled_rates))
    depths: dict[str, dict[str, int]] = {}
    for label, state in [("opening", game.new_initial_state(0))] + [
        (f"middle_{i}", s) for i, s in enumerate(positions)
    ]:
        clocked = CompiledAlphaBetaAgent(game, random.Random(0), depth=64)
        clocked.set_move_time(1.0)
        clocked.step(state)
        counted = CompiledAlphaBetaAgent(game, random.Random(0), depth=64, nodes=per_cpu_second)
        counted.step(state)
        depths[label] = {
            "wall_second": clocked.completed_depth,
            "cpu_second": counted.completed_depth,
        }
    return {
        "hard_nodes_per_cpu_s": statistics.median(hard_rates),
        "compiled_nodes_per_cpu_s": statistics.median(compiled_rates),
        "ratio_nodes_per_s": statistics.median(ratios),
        "rounds": rounds,
        "depth_within_one_second": depths,
    }


def report_compiled_alphabeta(figures: dict[str, Any]) -> None:
    ratio = figures["ratio_nodes_per_s"]
    print(
        f"compiled alpha-beta {figures['compiled_nodes_per_cpu_s']:.0f} nodes per CPU s, hard "
        f"{figures['hard_nodes_per_cpu_s']:.0f}: ratio {ratio:.1f}× (target >= "
        f"{ALPHABETA_NODES_TARGET:g}×: "
        + ("met" if ratio >= ALPHABETA_NODES_TARGET else "NOT met")
        + f", median of {figures['rounds']} rounds)"
    )
    print("depth completed within one second (by the clock / within one CPU second's nodes):")
    for label, depth in figures["depth_within_one_second"].items():
        print(f"  {label:>9}: {depth['wall_second']:2d} / {depth['cpu_second']:2d} plies")
    shallow = min(d["cpu_second"] for d in figures["depth_within_one_second"].values())
    print(
        f"target (>= {ALPHABETA_DEPTH_TARGET} plies full width within one CPU second everywhere): "
        + ("met" if shallow >= ALPHABETA_DEPTH_TARGET else "NOT met")
        + f" (shallowest {shallow})"
    )


def report_abalone(row: dict[str, Any]) -> None:
    ratio = row.get("ratio_us_per_ply_vs_openspiel_python")
    if ratio is not None:
        print(
            f"\ntarget (Abalone µs/ply <= {ABALONE_TARGET:g}× OpenSpiel chinese_checkers Python "
            f"loop): " + ("met" if ratio <= ABALONE_TARGET else "NOT met") + f" ({ratio:.2f}×)"
        )
    search = row["search"]
    print(
        "Abalone search: generic alpha-beta (depth 2) "
        f"{search['generic_alphabeta_depth2_nodes_per_s']:.0f} nodes/s, "
        f"hard {search['hard_nodes_per_s']:.0f} nodes/s "
        f"({search['hard_nodes_per_move']:.0f} nodes a move); hard self-play "
        f"{search['hard_ms_per_move']:.1f} ms a move, {search['hard_s_per_game']:.2f} s a game "
        f"({search['hard_games_timed']} games)"
    )


# --------------------------------------------------------------------------- kernel targets
KERNEL_TARGETS = {"alhambra": ALHAMBRA_KERNEL_RATIO, "abalone": KERNEL_PLY_TARGETS["abalone"]}
"""Alhambra: its kernel's random 3-player games per CPU second over its contract's. Abalone: its
kernel's random plies per CPU second over OpenSpiel ``chinese_checkers``' C++ loop's."""


def kernel_targets(seconds: float, rounds: int) -> dict[str, Any]:
    """Both kernel ratios in one process, the four loops interleaved round by round (so load
    that drifts during the run hits every side alike); each ratio is the median of the
    per-round ratios. The load average is read before and after."""
    loops: dict[str, Loop] = {
        "alhambra_contract": our_loop("alhambra", ALHAMBRA_PLAYERS),
        "alhambra_kernel": kernel_loop("alhambra", 50, ALHAMBRA_PLAYERS),
        "abalone_kernel": kernel_loop("abalone"),
        "chinese_checkers_cpp": openspiel_cpp_loop(*OPENSPIEL_GAMES["abalone"]),
    }
    load_before = os.getloadavg()
    for loop in loops.values():  # compile or load the kernels, fill lazy tables
        timed(loop, seconds / 4, 0)
    runs: dict[str, list[dict[str, float]]] = {key: [] for key in loops}
    for r in range(rounds):
        for key, loop in loops.items():
            runs[key].append(timed(loop, seconds, 1 + r))
    out: dict[str, Any] = {
        "rounds": rounds,
        "seconds": seconds,
        "load_before": load_before,
        "load_after": os.getloadavg(),
    }
    for key, samples in runs.items():
        out[key] = {
            metric: statistics.median(s[metric] for s in samples)
            for metric in ("games_per_s", "us_per_ply", "plies_per_game")
        }
    alhambra = [
        k["games_per_s"] / c["games_per_s"]
        for k, c in zip(runs["alhambra_kernel"], runs["alhambra_contract"], strict=True)
    ]
    abalone = [
        c["us_per_ply"] / k["us_per_ply"]
        for k, c in zip(runs["abalone_kernel"], runs["chinese_checkers_cpp"], strict=True)
    ]
    out["ratio_alhambra_kernel_vs_contract_games_per_s"] = statistics.median(alhambra)
    out["ratio_abalone_kernel_vs_chinese_checkers_cpp_plies_per_s"] = statistics.median(abalone)
    out["per_round"] = {"alhambra": alhambra, "abalone": abalone}
    return out


def report_kernel_targets(row: dict[str, Any]) -> None:
    before = ", ".join(f"{x:.1f}" for x in row["load_before"])
    after = ", ".join(f"{x:.1f}" for x in row["load_after"])
    print(f"\nkernel targets ({row['rounds']} rounds of {row['seconds']:g} CPU s per loop)")
    print(f"  load average before: {before}; after: {after}")
    for key in ("alhambra_contract", "alhambra_kernel", "abalone_kernel", "chinese_checkers_cpp"):
        r = row[key]
        print(
            f"  {key:<22} {r['games_per_s']:>10.1f} games/s {r['us_per_ply']:>8.3f} µs/ply "
            f"{r['plies_per_game']:>7.1f} plies/game"
        )
    for game, key, what in (
        ("alhambra", "ratio_alhambra_kernel_vs_contract_games_per_s", "kernel/contract games/s"),
        (
            "abalone",
            "ratio_abalone_kernel_vs_chinese_checkers_cpp_plies_per_s",
            "kernel/chinese_checkers C++ plies/s",
        ),
    ):
        target = KERNEL_TARGETS[game]
        verdict = "met" if row[key] >= target else "NOT met"
        rounds = " ".join(f"{x:.2f}" for x in row["per_round"][game])
        print(
            f"  {game} {what}: {row[key]:.2f}× (target ≥ {target:g}×: {verdict}; rounds {rounds})"
        )


def _negamax_rate(game_name: str, positions: list[Any], budget: int) -> float:
    """Compiled alpha-beta nodes per CPU second over ``positions``, ``budget`` nodes each."""
    from engines.compiled.agent_alphabeta import CompiledAlphaBetaAgent

    game = load_game(game_name)
    nodes = 0
    started = time.process_time()
    for state in positions:
        agent = CompiledAlphaBetaAgent(game, random.Random(0), depth=64, nodes=budget)
        agent.step(state)
        nodes += agent.nodes_spent
    return nodes / (time.process_time() - started)


def search_rates(rounds: int, iterations: int) -> dict[str, Any]:
    """Each compiled search's rate, median over ``rounds`` rounds (one of each a round, so
    load drifts hit them alike), after a first call that loads or compiles them all."""
    searched = {
        "abalone": _abalone_positions(8),
        "alquerque": [load_game("alquerque").new_initial_state(0)],
    }
    uct_games = [name for name in game_names() if has_kernel(name) and name != "alhambra"]
    figures: dict[str, list[float]] = {}

    def one_round(budget: int, its: int) -> None:
        for name, positions in searched.items():
            rate = _negamax_rate(name, positions, budget)
            figures.setdefault(f"negamax {name} nodes/s", []).append(rate)
        for name in uct_games:
            figures.setdefault(f"uct {name} it/s", []).append(compiled_mcts_rate(name, its))
        figures.setdefault("ismcts alhambra it/s", []).append(ismcts_rate(3, its))

    one_round(2_000, 50)  # load every search before timing
    figures.clear()
    for _ in range(rounds):
        one_round(100_000, iterations)
    return {
        "rounds": rounds,
        "median": {k: statistics.median(v) for k, v in figures.items()},
        "per_round": figures,
        "load_average": os.getloadavg(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="only these games (repeatable)")
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per loop and round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iterations", type=int, default=2000, help="MCTS iterations timed")
    parser.add_argument(
        "--profile-games", type=int, default=20, help="Alhambra games under the profiler"
    )
    parser.add_argument(
        "--kernels",
        action="store_true",
        help="only the kernel targets: Alhambra's and Abalone's ratios, in one process",
    )
    parser.add_argument(
        "--searches",
        action="store_true",
        help="only the compiled searches' rates (alpha-beta, UCT, information-set MCTS)",
    )
    parser.add_argument("--out", type=Path, help="where --searches writes its JSON")
    args = parser.parse_args(argv)
    if args.searches:
        row = search_rates(args.rounds, args.iterations)
        for key, value in row["median"].items():
            print(f"{key}: {value:,.0f}")
        out = args.out or RESULTS / "searches.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(row, indent=2))
        print(f"written {out}")
        return
    if args.kernels:
        row = kernel_targets(args.seconds, args.rounds)
        report_kernel_targets(row)
        RESULTS.mkdir(parents=True, exist_ok=True)
        out = RESULTS / "kernels.json"
        out.write_text(json.dumps(row, indent=2))
        print(f"written {out}")
        return
    rows = []
    compilation = compile_times()
    print(
        "kernels' first call in a fresh process (python -m engines.compiled.warm): "
        f"compile {compilation['cold_wall_s']:.1f} s wall / {compilation['cold_cpu_s']:.1f} s "
        f"CPU; from numba's cache {compilation['cached_wall_s']:.1f} s wall / "
        f"{compilation['cached_cpu_s']:.1f} s CPU"
    )
    for name in args.game or game_names():
        if name == "alhambra":
            row = bench_alhambra(args.seconds, args.rounds, args.profile_games, args.iterations)
            report_alhambra(row)
        else:
            row = bench_game(name, args.seconds, args.rounds, args.iterations)
            report(row)
        rows.append(row)
    abalone = next((r for r in rows if r["game"] == "abalone"), None)
    if abalone is not None:
        abalone["search"] = abalone_search(args.seconds)
        report_abalone(abalone)
        abalone["compiled_alphabeta"] = compiled_alphabeta(args.rounds)
        report_compiled_alphabeta(abalone["compiled_alphabeta"])
    alquerque = next((r for r in rows if r["game"] == "alquerque"), None)
    if alquerque is not None and "openspiel_python" in alquerque:
        ratio = alquerque["ratio_us_per_ply_vs_openspiel_python"]
        print(
            "\ntarget (Alquerque µs/ply <= OpenSpiel checkers Python loop, paired rounds): "
            + ("met" if ratio <= 1.0 else "NOT met")
            + f" (median ratio {ratio:.2f})"
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "engines.json"
    meta = {"python": platform.python_version(), "machine": platform.machine()}
    out.write_text(json.dumps({"meta": meta, "compilation": compilation, "games": rows}, indent=2))
    print(f"written {out}")


if __name__ == "__main__":
    main()
