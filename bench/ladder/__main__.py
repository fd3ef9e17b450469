"""The ladder's command line: ``run`` plays, ``plan`` probes and prices, ``table`` reports."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import numpy as np

import bench.ladder
from analysis.ladder.fit import ladder_table
from analysis.ladder.ladders import (
    LADDERS,
    Ladder,
    find_pairing,
    ladder_for,
    ladder_games,
    pairing_name,
)
from analysis.ladder.results import (
    FOLDER,
    append_result,
    done_indices,
    read_results,
    results_path,
)
from analysis.ladder.show import ladder_text, plot
from bench.ladder.play import pairing_batch, play_ladder_match, round_size

RESULTS = Path(__file__).resolve().parents[2] / "studies" / "results" / FOLDER
"""The committed results files, beside the studies' results whose pages quote them."""


def _pairings(ladder: Ladder, names: list[str] | None) -> list[tuple[str, str]]:
    return [find_pairing(ladder, n) for n in names] if names else ladder.pairings()


def _tasks(
    ladder: Ladder,
    pairings: list[tuple[str, str]],
    games: int,
    rounds: int | None,
    folder: Path,
    first_rounds: bool = False,
) -> Iterator[tuple[str, str, int]]:
    """Matches still to play, round by round across the pairings, so that a run stopped
    early leaves every pairing with about as many whole rounds as the others. ``rounds``
    limits them to the next that many unfinished rounds a pairing, or with ``first_rounds``
    to the pairing's first ``rounds`` rounds."""
    done = done_indices(read_results(ladder.game, folder))
    sizes = {(a, b): round_size(pairing_batch(ladder, a, b, games)) for a, b in pairings}
    todo: dict[tuple[str, str], list[int]] = {}
    for a, b in pairings:
        have = done.get(pairing_name(a, b), set())
        missing = [i for i in range(games) if i not in have]
        if rounds is not None:
            size = sizes[(a, b)]
            if first_rounds:
                allowed = set(range(rounds))
            else:
                allowed = set(sorted({i // size for i in missing})[: max(rounds, 0)])
            missing = [i for i in missing if i // size in allowed]
        todo[(a, b)] = missing
    last = max((len(v) for v in todo.values()), default=0)
    for k in range(last):
        for (a, b), missing in todo.items():
            if k < len(missing):
                yield a, b, missing[k]


def run(
    ladder: Ladder,
    pairings: list[tuple[str, str]],
    games: int,
    workers: int,
    rounds: int | None,
    folder: Path,
    first_rounds: bool = False,
) -> int:
    """Play what is missing, appending each match as it ends; the number played."""
    tasks = iter(_tasks(ladder, pairings, games, rounds, folder, first_rounds))
    played = 0
    with ProcessPoolExecutor(max_workers=workers) as pool:
        running: set[Future[dict[str, Any]]] = set()
        while True:
            while len(running) < 2 * workers:
                task = next(tasks, None)
                if task is None:
                    break
                a, b, index = task
                running.add(pool.submit(play_ladder_match, ladder.game, a, b, games, index))
            if not running:
                return played
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                row = future.result()
                append_result(ladder.game, row, folder)
                played += 1
                cpu = " ".join(
                    f"{s}={c:.3f}" for s, c in zip(row["seats"], row["cpu"], strict=True)
                )
                print(
                    f"{row['pairing']} #{row['index']}: returns {row['returns']} "
                    f"{row['plies']} plies, CPU s {cpu}",
                    flush=True,
                )


def print_plan(ladder: Ladder, pairings: list[tuple[str, str]], games: int, folder: Path) -> None:
    """Games to play per pairing and their CPU cost, priced from the games already stored."""
    rows = read_results(ladder.game, folder)
    done = done_indices(rows)
    total = 0.0
    print(f"{ladder.game}, {ladder.players} players: {games} games a pairing")
    print(f"{'pairing':28} {'stored':>6} {'to play':>7} {'CPU s/game':>10} {'CPU s to go':>11}")
    for a, b in pairings:
        name = pairing_name(a, b)
        cpu = [r["match_cpu"] for r in rows if r["pairing"] == name]
        have = len({i for i in done.get(name, set()) if i < games})
        each = float(np.mean(cpu)) if cpu else math.nan
        to_go = (games - have) * each
        total += 0.0 if math.isnan(to_go) else to_go
        print(f"{name:28} {have:6d} {games - have:7d} {each:10.3f} {to_go:11.0f}")
    print(f"total CPU to go: {total:.0f} s = {total / 3600:.2f} CPU hours (unpriced pairings: 0)")


def main(argv: list[str] | None = None) -> None:
    try:
        _main(argv)
    except ValueError as e:  # a bad --game or --pairing, or a results file that is not one
        sys.exit(str(e))


def _main(argv: list[str] | None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.ladder",
        description=(bench.ladder.__doc__ or "").splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=bench.ladder.__doc__,
    )
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder of the files")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("run", "play the matches missing from the results file"),
        ("plan", "play a few rounds of each pairing (kept), then price the rest"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("--game", required=True, choices=ladder_games())
        p.add_argument("--pairing", action="append", help="A-B, e.g. expert-greedy (repeatable)")
        p.add_argument("--games", type=int, help="games a pairing (default: the ladder's)")
        p.add_argument("--workers", type=int, default=1, help="processes (default 1)")
        if name == "run":
            p.add_argument("--rounds", type=int, help="at most this many more rounds a pairing")
        else:
            p.add_argument("--probe-rounds", type=int, default=1, help="rounds a pairing to time")
    t = sub.add_parser("table", help="the tables, from the results files alone")
    t.add_argument(
        "--game",
        action="append",
        choices=ladder_games(),
        help="default: the built-in games, then every other game with a results file",
    )
    t.add_argument("--markdown", action="store_true", help="Markdown tables")
    t.add_argument("--plot", type=Path, help="write the Elo-against-CPU plot (PNG) here")
    args = parser.parse_args(argv)
    if args.command == "table":
        games = args.game or [
            *LADDERS,
            *(
                g
                for g in ladder_games()
                if g not in LADDERS and results_path(g, args.results).exists()
            ),
        ]
        tables = [ladder_table(ladder_for(g), read_results(g, args.results)) for g in games]
        for table in tables:
            print(ladder_text(table, args.markdown))
        if args.plot:
            plot(tables, args.plot)
            print(f"written {args.plot}")
        return
    ladder = ladder_for(args.game)
    games = args.games or ladder.games
    if games < 1 or args.workers < 1:
        sys.exit("--games and --workers: at least 1")
    pairings = _pairings(ladder, args.pairing)
    if args.command == "run":
        played = run(ladder, pairings, games, args.workers, args.rounds, args.results)
        print(f"played {played} matches; results in {args.results}")
    else:
        run(ladder, pairings, games, args.workers, args.probe_rounds, args.results, True)
        print_plan(ladder, pairings, games, args.results)


if __name__ == "__main__":
    main()
