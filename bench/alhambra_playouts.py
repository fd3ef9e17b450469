"""Alhambra's ``expert`` with each playout move: the rules' one (``playout`` ``rules``, the
default) and the greedy-weighted one (``playout`` ``greedy``, each legal move weighted by
``exp(quick_score)``), at equal CPU.

    .venv/bin/python -m bench.alhambra_playouts speed [--rounds 5]
    .venv/bin/python -m bench.alhambra_playouts strength --greedy-iterations N [M ...] [--games 90]
    .venv/bin/python -m bench.alhambra_playouts table

``speed`` times, in CPU seconds of this process with the kinds alternating round by round
(each ratio the median of the per-round ratios, the default the baseline): playout plies per
second (whole playouts from re-drawn 3-player openings), ``expert`` iterations per second at
the opening, and ``expert``'s CPU per decision over positions of real play (greedy self-play,
every ``SAMPLE_EVERY`` plies), from which it prints the iterations that give the greedy
playout the default's CPU per decision.

``strength`` plays one ``expert`` against two ``greedy`` in 3-player games, for each variant
the same batch seed, so the same deals and seatings (rounds of the service's seating design),
the default ``expert`` and one with greedy playouts for each of ``--greedy-iterations``;
each match's CPU time per seat is measured as the ladder measures it and appended to
``bench/results/alhambra_playouts.jsonl`` (a stopped run goes on where it stopped). ``table``
prints each variant's CPU per game and win share against greedy with its 95 % interval (deal
rounds as units, ``analysis.clustered``), and the paired difference over the shared rounds.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from analysis.clustered import clustered_difference, share_estimate
from analysis.ladder.results import append_result
from bench.ladder.play import play_timed, round_size
from engines.compiled.levels_alhambra import EXPERT_ITERATIONS
from engines.core import derive_seed
from engines.registry import load_game, make_agent

RESULTS = Path(__file__).resolve().parent / "results"
NAME = "alhambra_playouts"
PLAYERS = 3
PLAYOUTS = ("rules", "greedy")
"""``expert``'s playout values, the default first: the baseline of every ratio."""
SAMPLE_EVERY = 12
"""Plies between two positions of the CPU-per-decision sample."""


# --------------------------------------------------------------------------- speed
def _playout_plies(kind: str, games: int, seed: int) -> tuple[int, float]:
    """Plies and CPU seconds of ``games`` whole playouts from re-drawn 3-player openings."""
    from engines.alhambra import kernel
    from engines.compiled import dispatch, search_ismcts
    from engines.compiled.agent_ismcts import HIDDEN_ROLLOUTS
    from engines.compiled.levels_alhambra import EXPERT_PLAYOUTS
    from engines.kernel_rng import seed_rng

    rollout = HIDDEN_ROLLOUTS[EXPERT_PLAYOUTS[kind]]
    rng = np.zeros(1, dtype=np.uint64)
    seed_rng(rng, seed)
    openings = [kernel.new_state(PLAYERS, seed + g) for g in range(games)]
    plies = 0
    began = time.process_time()
    for sim in openings:
        kernel.redraw(sim, rng)
        plies += search_ismcts.hidden_playout(dispatch.ALHAMBRA, sim, rollout, 100_000, rng)
    return plies, time.process_time() - began


def _expert(kind: str, iterations: int, seed: int) -> Any:
    game = load_game("alhambra", players=PLAYERS)
    spec = {"name": "expert", "playout": kind, "iterations": iterations}
    return make_agent(game, spec, random.Random(seed))


def _iterations_rate(kind: str, decisions: int, seed: int) -> float:
    """``expert``'s iterations per CPU second over ``decisions`` searches at an opening."""
    agent = _expert(kind, EXPERT_ITERATIONS, seed)
    agent.preload()
    state = load_game("alhambra", players=PLAYERS).new_initial_state(seed)
    began = time.process_time()
    for _ in range(decisions):
        agent.step(state)
    return decisions * EXPERT_ITERATIONS / (time.process_time() - began)


def sample_positions(games: int, seed: int) -> list[Any]:
    """Every ``SAMPLE_EVERY``-th position with a choice in ``games`` greedy self-play games."""
    game = load_game("alhambra", players=PLAYERS)
    found = []
    for g in range(games):
        state = game.new_initial_state(seed + g)
        agents = [make_agent(game, "greedy", random.Random(seed + g + s)) for s in range(3)]
        ply = 0
        while not state.is_terminal():
            if ply % SAMPLE_EVERY == 0 and len(state.legal_actions()) > 1:
                found.append(state.clone())
            state.apply(agents[state.current_player()].step(state))
            ply += 1
    return found


def _decision_cpu(kind: str, positions: list[Any], seed: int) -> float:
    """``expert``'s mean CPU seconds per decision (default iterations) over ``positions``."""
    agent = _expert(kind, EXPERT_ITERATIONS, seed)
    agent.preload()
    began = time.process_time()
    for state in positions:
        agent.step(state)
    return (time.process_time() - began) / len(positions)


def speed(rounds: int) -> dict[str, Any]:
    """The three figures per round for each kind, alternating; medians and ratios."""
    positions = sample_positions(3, 500)
    figures: dict[str, dict[str, list[float]]] = {k: {} for k in PLAYOUTS}
    for kind in PLAYOUTS:  # compile or load each entry point before any clock runs
        _playout_plies(kind, 1, 0)
    for r in range(rounds):
        kinds = PLAYOUTS if r % 2 == 0 else PLAYOUTS[::-1]
        for kind in kinds:
            plies, cpu = _playout_plies(kind, 200, 1000 + r)
            row = figures[kind]
            row.setdefault("plies_per_s", []).append(plies / cpu)
            row.setdefault("iterations_per_s", []).append(_iterations_rate(kind, 3, 1000 + r))
            row.setdefault("decision_cpu", []).append(_decision_cpu(kind, positions, 7 + r))
        base, other = (figures[k] for k in PLAYOUTS)
        print(
            f"round {r + 1}: plies/s {base['plies_per_s'][-1]:.0f} / "
            f"{other['plies_per_s'][-1]:.0f}, iterations/s {base['iterations_per_s'][-1]:.0f} / "
            f"{other['iterations_per_s'][-1]:.0f}, CPU s a decision "
            f"{base['decision_cpu'][-1]:.3f} / {other['decision_cpu'][-1]:.3f}",
            flush=True,
        )
    out: dict[str, Any] = {"rounds": rounds, "positions": len(positions)}
    for name in ("plies_per_s", "iterations_per_s", "decision_cpu"):
        base, other = (figures[k][name] for k in PLAYOUTS)
        out[name] = {k: statistics.median(figures[k][name]) for k in PLAYOUTS}
        out[name]["ratio"] = statistics.median(o / b for o, b in zip(other, base, strict=True))
    out["equal_cpu_iterations"] = round(EXPERT_ITERATIONS / out["decision_cpu"]["ratio"])
    return out


# --------------------------------------------------------------------------- strength
def variants(greedy_iterations: list[int]) -> dict[str, dict[str, Any]]:
    """The ``expert`` spec of each variant, by name: the default, and greedy playouts with
    each of ``greedy_iterations``."""
    out: dict[str, dict[str, Any]] = {"rules": {"name": "expert"}}
    for n in greedy_iterations:
        out[f"greedy@{n}"] = {"name": "expert", "playout": "greedy", "iterations": n}
    return out


def _batch(spec: dict[str, Any], games: int) -> Any:
    from storage.settings import get_settings
    from workers.batches import plan_batch

    return plan_batch(
        game="alhambra",
        players=PLAYERS,
        options={},
        agents=[spec, "greedy", "greedy"],
        matches=games,
        seed=derive_seed(NAME, PLAYERS),  # one seed: every variant plays the same deals
        seat_policy=None,
        chunk_size=None,
        max_plies=None,
        settings=get_settings(),
    )


def play_one(variant: str, spec: dict[str, Any], games: int, index: int) -> dict[str, Any]:
    """Match ``index`` of ``variant``'s batch, timed per seat in CPU seconds."""
    from workers.play import build_game

    batch = _batch(spec, games)
    played = play_timed(build_game(batch), batch, index)
    expert = played.seated.order.index(0)
    return {
        "variant": variant,
        "pairing": variant,  # the ladder's results-file fields
        "index": index,
        "round": index // round_size(batch),
        "expert_seat": expert,
        "returns": [round(float(r), 6) for r in played.result.returns],
        "seats": ["expert" if s == expert else "greedy" for s in range(PLAYERS)],
        "cpu": [round(t, 4) for t in played.cpu],
        "match_cpu": round(played.match_cpu, 4),
        "plies": played.result.plies,
    }


def _stored(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = {}
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a stopped run: that match is played again
        rows.setdefault((row["variant"], row["index"]), row)
    return list(rows.values())


def strength(greedy_iterations: list[int], games: int, workers: int) -> None:
    path = RESULTS / f"{NAME}.jsonl"
    done = {(r["variant"], r["index"]) for r in _stored(path)}
    todo = [
        (name, spec, i)
        for i in range(games)
        for name, spec in variants(greedy_iterations).items()
        if (name, i) not in done
    ]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(play_one, name, spec, games, i) for name, spec, i in todo]
        for future in futures:
            row = future.result()
            append_result(NAME, row, RESULTS)
            seat = row["expert_seat"]
            print(
                f"{row['variant']} #{row['index']}: expert {row['returns'][seat]:.2f}, "
                f"CPU s {row['cpu'][seat]:.2f}, {row['plies']} plies",
                flush=True,
            )


def table(path: Path) -> str:
    """Each variant's CPU per game and share against greedy over its whole rounds (every
    seating of a deal played, so each variant is seat-balanced); each variant's difference
    from the default over the rounds both finished (the same deals and seatings)."""
    size = round_size(_batch({"name": "expert"}, 1))
    by: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for row in _stored(path):
        by.setdefault(row["variant"], {}).setdefault(row["round"], []).append(row)
    lines = [
        "| variant | games | deals | expert CPU s/game | win share (95 % CI) |",
        "|---|---|---|---|---|",
    ]
    shares: dict[str, dict[int, list[float]]] = {}
    for name, rounds in by.items():
        whole = {u: got for u, got in rounds.items() if len(got) == size}
        shares[name] = {
            u: [r["returns"][r["expert_seat"]] for r in got] for u, got in whole.items()
        }
        units = sorted(whole)
        est = share_estimate(
            np.array([sum(shares[name][u]) for u in units]), np.array([size] * len(units))
        )
        games = [r for got in whole.values() for r in got]
        cpu = statistics.mean(r["cpu"][r["expert_seat"]] for r in games)
        lines.append(
            f"| {name} | {len(games)} | {len(units)} | {cpu:.2f} | {est.mean:.3f} "
            f"({est.ci_low:.3f}–{est.ci_high:.3f}) |"
        )
    base = shares.get("rules", {})
    for name in sorted(n for n in shares if n != "rules"):
        other = shares[name]
        shared = sorted(set(base) & set(other))
        values = [np.array([v for u in shared for v in side[u]]) for side in (other, base)]
        units = [np.repeat(shared, size)] * 2
        diff = clustered_difference(values[0], units[0], values[1], units[1])
        lines.append(
            f"\n{name} − rules over {diff.units} shared deals: {diff.estimate:+.3f} "
            f"(95 % CI {diff.ci_low:+.3f} to {diff.ci_high:+.3f}, p = {diff.p_value:.3f})"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.alhambra_playouts")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("speed", help="playout and search speed, and CPU per decision")
    s.add_argument("--rounds", type=int, default=5)
    p = sub.add_parser("strength", help="expert against two greedy, each playout")
    p.add_argument("--greedy-iterations", type=int, nargs="+", required=True)
    p.add_argument("--games", type=int, default=90)
    p.add_argument("--workers", type=int, default=1)
    sub.add_parser("table", help="the strength table from the results file")
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.command == "speed":
        out = speed(args.rounds)
        (RESULTS / f"{NAME}_speed.json").write_text(json.dumps(out, indent=1))
        print(json.dumps(out, indent=1))
    elif args.command == "strength":
        strength(args.greedy_iterations, args.games, args.workers)
        print(table(RESULTS / f"{NAME}.jsonl"))
    else:
        print(table(RESULTS / f"{NAME}.jsonl"))


if __name__ == "__main__":
    main()
