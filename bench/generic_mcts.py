"""The generic ``mcts`` on an installed game against OpenSpiel's Python ``MCTSBot`` on it.

    .venv/bin/python -m bench.generic_mcts                    # Kalah 6 × 4, 7 rounds
    .venv/bin/python -m bench.generic_mcts --houses 4 --seeds 3 --rounds 11 --iterations 1000

The game is the worked example ``examples/kalah``, a package outside playtester: the bench
installs it for its own process the way pip would be seen (a ``*.dist-info`` declaring the
``playtester.games`` entry point, in a temporary folder on ``sys.path``, with the example's
folder), unless it is installed already. playtester's own code never imports it.

Both sides search the same positions (the opening and positions reached by seeded random play)
with the same number of iterations, one uniformly random playout to the end per iteration and
the same exploration constant:

- ours: :class:`engines.agents.mcts.MctsAgent` (the ``mcts`` agent's search on a game without a
  compiled kernel) with ``rollout`` ``random``, through the contract (``clone``, ``apply``);
- OpenSpiel: ``open_spiel.python.algorithms.mcts.MCTSBot`` with ``RandomRolloutEvaluator(1)``
  and ``solve=False``, on ``playtester_kalah``, the same rules through the bridge
  (:mod:`engines.openspiel.ours`, its generic path for an installed game).

To tell how much of the difference is the bridge rather than the search, each round also
plays random games through the contract and through the bridge's OpenSpiel state (the moves
``MCTSBot``'s playouts make, without its tree) and reports the ratio of their plies per second.

Rounds alternate which side goes first; times are CPU seconds of this process
(``time.process_time``), so the load of other work on the machine hits both sides alike. Each
rate is the median over the rounds and the ratio the median of the per-round ratios (above 1:
ours is faster). Results go to ``bench/results/generic_mcts.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
from open_spiel.python.algorithms import mcts

from engines import registry
from engines.agents.mcts import MctsAgent
from engines.core import Game, State
from engines.openspiel.ours import spiel_game_of

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "kalah"
RESULTS = Path(__file__).resolve().parent / "results"
EXPLORATION = 1.4
"""The generic ``mcts``'s default, given to ``MCTSBot`` too."""
PLAYOUT_GAMES = 100
"""Random games a round plays through each of the two loops (``contract_playouts``)."""


def install_example(root: Path) -> None:
    """Make ``examples/kalah`` an installed game of this process (a dist-info in ``root``)."""
    if "kalah" in registry.game_names():
        return
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = root / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n",
        encoding="utf-8",
    )
    entries = "".join(
        f"{k} = {v}\n" for k, v in project["entry-points"]["playtester.games"].items()
    )
    (info / "entry_points.txt").write_text(f"[playtester.games]\n{entries}", encoding="utf-8")
    sys.path[:0] = [str(root), str(EXAMPLE)]
    registry.forget_games()


def positions(game: Game, count: int, plies: int, seed: int) -> list[State]:
    """The opening and ``count - 1`` positions after ``plies``·i seeded random plies."""
    rng = random.Random(seed)
    found = [game.new_initial_state(0)]
    for i in range(1, count):
        state = game.new_initial_state(0)
        for _ in range(plies * i):
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            found.append(state)
    return found


def ours_rate(game: Game, starts: list[State], iterations: int, seed: int) -> float:
    """Generic ``mcts`` iterations per CPU second over ``starts``."""
    agent = MctsAgent(game, random.Random(seed), iterations=iterations, rollout="random")
    started = time.process_time()
    for state in starts:
        agent.search(state)
    return iterations * len(starts) / (time.process_time() - started)


def openspiel_rate(game: Game, starts: list[State], iterations: int, seed: int) -> float:
    """OpenSpiel's Python ``MCTSBot`` simulations per CPU second over ``starts``, through the
    bridge (each position wrapped as the bridge's OpenSpiel state)."""
    spiel = spiel_game_of(game)
    seeds = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(1, seeds)
    bot = mcts.MCTSBot(spiel, EXPLORATION, iterations, evaluator, solve=False, random_state=seeds)
    wrapped = [spiel.wrap(state) for state in starts]
    started = time.process_time()
    for state in wrapped:
        bot.mcts_search(state)
    return iterations * len(starts) / (time.process_time() - started)


def contract_playouts(game: Game, games: int, seed: int) -> float:
    """Uniformly random plies per CPU second through the contract (``clone`` of the start,
    ``legal_actions``, ``apply``): what one of ours' playouts costs."""
    rng = random.Random(seed)
    start = game.new_initial_state(0)
    plies = 0
    started = time.process_time()
    for _ in range(games):
        state = start.clone()
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
            plies += 1
    return plies / (time.process_time() - started)


def bridge_playouts(game: Game, games: int, seed: int) -> float:
    """The same through the bridge's OpenSpiel state (``clone``, ``legal_actions``,
    ``apply_action``): what one of ``MCTSBot``'s playouts costs before its own work."""
    rng = random.Random(seed)
    start = spiel_game_of(game).new_initial_state()
    plies = 0
    started = time.process_time()
    for _ in range(games):
        state = start.clone()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
            plies += 1
    return plies / (time.process_time() - started)


def measure(
    houses: int, seeds: int, rounds: int, iterations: int, count: int = 3, plies: int = 8
) -> dict[str, Any]:
    """The rates and their ratio, round by round, and the medians."""
    game = registry.load_game("kalah", houses=houses, seeds=seeds)
    starts = positions(game, count, plies, seed=1)
    rows = []
    for index in range(rounds):
        sides = {"ours": ours_rate, "openspiel": openspiel_rate}
        order = list(sides) if index % 2 == 0 else list(reversed(sides))
        rates = {name: sides[name](game, starts, iterations, index) for name in order}
        contract = contract_playouts(game, PLAYOUT_GAMES, index)
        bridge = bridge_playouts(game, PLAYOUT_GAMES, index)
        rows.append(
            {
                **rates,
                "ratio": rates["ours"] / rates["openspiel"],
                "contract_plies_per_s": contract,
                "bridge_plies_per_s": bridge,
                "playout_ratio": contract / bridge,
            }
        )
    return {
        "game": {"name": "kalah", "houses": houses, "seeds": seeds},
        "positions": len(starts),
        "iterations": iterations,
        "rounds": rows,
        "ours_per_s": statistics.median(r["ours"] for r in rows),
        "openspiel_per_s": statistics.median(r["openspiel"] for r in rows),
        "ratio": statistics.median(r["ratio"] for r in rows),
        "playout_ratio": statistics.median(r["playout_ratio"] for r in rows),
        "load_average": os.getloadavg(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--houses", type=int, default=6)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iterations", type=int, default=1000, help="per position searched")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as root:
        install_example(Path(root))
        result = measure(args.houses, args.seeds, args.rounds, args.iterations)
    if args.json:
        print(json.dumps(result))
        return
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "generic_mcts.json").write_text(json.dumps(result, indent=2))
    game = result["game"]
    print(
        f"kalah {game['houses']} × {game['seeds']}: {result['positions']} positions, "
        f"{result['iterations']} iterations each, {len(result['rounds'])} rounds"
    )
    print(f"{'round':>5} {'ours it/s':>10} {'OpenSpiel it/s':>15} {'ours/OpenSpiel':>15}")
    for i, row in enumerate(result["rounds"]):
        print(f"{i:>5} {row['ours']:>10.0f} {row['openspiel']:>15.0f} {row['ratio']:>15.2f}")
    print(
        f"{'median':>5} {result['ours_per_s']:>10.0f} {result['openspiel_per_s']:>15.0f} "
        f"{result['ratio']:>15.2f}"
    )
    print(f"random playouts, contract / bridge plies per CPU second: {result['playout_ratio']:.2f}")
    print("load average:", " ".join(f"{x:.1f}" for x in result["load_average"]))


if __name__ == "__main__":
    main()
