"""How much of an Alquerque strength pairing the random opening decides, by opening length.

    nice -n 5 .venv/bin/python -m bench.alquerque_openings play --plies 4 6 5 \\
        --matches 100 --log /tmp/alq/openings.jsonl
    .venv/bin/python -m bench.alquerque_openings summary --log /tmp/alq/openings.jsonl

``play`` plays the batch of two agents (``expert`` and ``hard`` unless told) the service plans
with random openings of each length asked: each opening twice, seats swapped, so the pair of
games is the unit. Matches go to ``--log`` (JSON lines) as they end, one process, in the
order ``--plies`` gives, so a stopped run keeps whole lengths.

``summary`` reads them back (or, with ``--ladder-plies``, a pairing of a ladder results file
played with that opening length), per opening length: pairs, distinct openings among them, the
share of pairs the opening decided (one seat won both games, whoever sat there), the first
agent's score with its 95 % interval over pairs (each round draws its opening anew, as the
ladder's fit counts them) and over openings (the pairs of one opening one cluster: the width
for a reader who takes the few openings as the sample), its Elo, and the cap the decided
pairs put on a measurement: a player who won every pair the opening left open would score at
most ``1 - decided / 2``. ``count`` gives how many distinct move sequences and positions a random
opening of each length can reach (the tree from the start, enumerated) and how many equally
likely openings their uneven chances amount to.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

SEED = 46_046
"""The batches' seed: one for every length, so each length's openings are its own draw."""


def plan(agents: list[str], plies: int, matches: int, seed: int) -> Any:
    from storage.settings import get_settings
    from workers.batches import plan_batch

    return plan_batch(
        game="alquerque",
        agents=agents,
        matches=matches,
        seed=seed,
        seat_policy=None,
        chunk_size=None,
        max_plies=None,
        variation={"kind": "openings", "plies": plies},
        settings=get_settings(),
    )


def play(args: argparse.Namespace) -> None:
    from bench.ladder.play import play_timed
    from workers.play import build_game

    args.log.parent.mkdir(parents=True, exist_ok=True)
    done = {(r["plies"], r["index"]) for r in _read(args.log)}
    with args.log.open("a") as log:
        for plies in args.plies:
            batch = plan(args.agents, plies, args.matches, args.seed)
            game = build_game(batch)
            for index in range(args.matches):
                if (plies, index) in done:
                    continue
                played = play_timed(game, batch, index)
                result = played.result
                line = {
                    "plies": plies,
                    "index": index,
                    "seats": list(played.seated.labels),
                    "returns": [float(r) for r in result.returns],
                    "cpu": [round(t, 4) for t in played.cpu],
                    "moves": list(result.moves),
                    "length": result.plies,
                    "ended_by": str(result.ended_by),
                }
                log.write(json.dumps(line) + "\n")
                log.flush()


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def elo(score: float) -> float:
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def _opening(line: dict[str, Any], plies: int) -> Any:
    """The opening a match started from: its first moves, or a ladder line's opening key."""
    return line["opening"] if "opening" in line else tuple(line["moves"][:plies])


def from_ladder(path: Path, pairing: str, plies: int) -> list[dict[str, Any]]:
    """A ladder results file's matches of ``pairing`` as lines of ``play`` (``plies``: the
    opening length the ladder played them with)."""
    lines = []
    for row in _read(path):
        if row["pairing"] == pairing:
            lines.append({**row, "plies": plies, "length": row["plies"]})
    return lines


def _shown(value: float) -> int | str:
    return round(value) if math.isfinite(value) else f"{value:+}"


def summarise(lines: list[dict[str, Any]], first: str) -> list[dict[str, Any]]:
    """Per opening length: the figures the module's doc names, over whole pairs only."""
    by_plies: dict[int, dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for line in lines:
        by_plies[line["plies"]][line["index"] // 2].append(line)
    rows = []
    for plies, pairs in sorted(by_plies.items()):
        whole = [p for p in pairs.values() if len(p) == 2]
        units = []
        keys = []
        decided = 0
        for pair in whole:
            keys.append(_opening(pair[0], plies))
            seat0 = [g["returns"][0] for g in pair]
            if seat0[0] == seat0[1] and seat0[0] != 0.5:
                decided += 1
            units.append(np.mean([g["returns"][g["seats"].index(first)] for g in pair]))
        n = len(units)
        score = float(np.mean(units))
        half = 1.96 * float(np.std(units, ddof=1)) / math.sqrt(n) if n > 1 else math.nan
        # Pairs of one opening are not independent: the cluster-robust interval sums each
        # opening's deviations before squaring them.
        sums: dict[Any, float] = defaultdict(float)
        for key, unit in zip(keys, units, strict=True):
            sums[key] += unit - score
        clusters = len(sums)
        spread = math.sqrt(sum(v * v for v in sums.values()) * clusters / max(clusters - 1, 1))
        clustered = 1.96 * spread / n if clusters > 1 else math.nan
        share = decided / n
        cap = 1.0 - share / 2.0
        cpu = [g["cpu"][g["seats"].index(first)] for pair in whole for g in pair]
        rows.append(
            {
                "plies": plies,
                "pairs": n,
                "distinct_openings": clusters,
                "decided": decided,
                "decided_share": round(share, 3),
                "score": round(score, 3),
                "interval": [round(score - half, 3), round(score + half, 3)],
                "interval_by_opening": [round(score - clustered, 3), round(score + clustered, 3)],
                "elo": _shown(elo(score)),
                "cap_score": round(cap, 3),
                "cap_elo": _shown(elo(cap)),
                "first_cpu_s_per_game": round(float(np.mean(cpu)), 3),
                "plies_mean": round(float(np.mean([g["length"] for p in whole for g in p])), 1),
            }
        )
    return rows


def count(max_plies: int) -> list[tuple[int, int, int, float]]:
    """Per length up to ``max_plies``: distinct move sequences a random opening can play,
    distinct positions they reach, and the effective number of openings, ``1 / sum(p^2)``
    over the sequences' chances when each ply is a uniformly random legal move (what the
    service draws): how many equally likely openings would repeat as often."""
    from engines.registry import load_game

    # Each layer lists the sequences: (the state after them, their chance).
    layer = [(load_game("alquerque").new_initial_state(), 1.0)]
    out = []
    for plies in range(max_plies + 1):
        positions = {(s.white, s.black, s.to_move) for s, _ in layer}
        effective = 1.0 / sum(p * p for _, p in layer)
        out.append((plies, len(layer), len(positions), effective))
        if plies == max_plies:
            break
        grown = []
        for state, chance in layer:
            if state.is_terminal():
                grown.append((state, chance))
                continue
            actions = state.legal_actions()
            for action in actions:
                child = state.clone()
                child.apply(action)
                grown.append((child, chance / len(actions)))
        layer = grown
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.alquerque_openings")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("play", help="play the pairing at each opening length")
    p.add_argument("--plies", type=int, nargs="+", default=[0, 2, 4, 6, 8])
    p.add_argument("--matches", type=int, default=100)
    p.add_argument("--agents", nargs=2, default=["expert", "hard"])
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--log", type=Path, required=True)
    s = sub.add_parser("summary", help="the figures per opening length")
    s.add_argument("--log", type=Path, required=True)
    s.add_argument("--first", default="expert")
    s.add_argument(
        "--ladder-plies",
        type=int,
        default=None,
        help="read --log as a ladder results file played with this opening length",
    )
    s.add_argument("--pairing", default="expert-hard", help="the ladder pairing to read")
    c = sub.add_parser("count", help="distinct openings per length, from the start")
    c.add_argument("--plies", type=int, default=8)
    args = parser.parse_args(argv)
    if args.command == "play":
        started = time.process_time()
        play(args)
        print(f"{time.process_time() - started:.0f} CPU s", file=sys.stderr)
    elif args.command == "summary":
        if args.ladder_plies is None:
            lines = _read(args.log)
        else:
            lines = from_ladder(args.log, args.pairing, args.ladder_plies)
        for row in summarise(lines, args.first):
            print(json.dumps(row))
    else:
        for plies, sequences, positions, effective in count(args.plies):
            print(
                f"{plies} plies: {sequences:,} sequences, {positions:,} positions, "
                f"{effective:.1f} effective openings"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
