"""What checking a stop rule after every small chunk costs a batch, in local mode.

    .venv/bin/python -m bench.sprt                          # 5,000 matches, random vs random
    .venv/bin/python -m bench.sprt --matches 3000 --agents easy,easy --rounds 5

One batch between two copies of one agent (seat-swapped pairs, so the pentanomial model) is
played on a fresh SQLite file three ways, each in its own child process, interleaved round by
round:
- ``plain``: no stop rule, the automatic chunk size (what a batch without a rule gets);
- ``same_chunks``: no stop rule, at the chunk size a rule imposes (isolates the checks);
- ``rule``: a rule whose bounds are never crossed (``elo0=-1, elo1=1, alpha=beta=0.001``), so
  it is checked after every chunk and every match is played.
Each child reports its wall time and its CPU time (itself and its pool's workers). The figure
that matters, the checks' cost, is ``rule`` against ``same_chunks``: 1 − throughput ratio,
the median of the per-round ratios (target ≤ 5 %); ``rule`` against ``plain`` adds the cost of
smaller chunks (and ``plain`` may run fewer chunks than there are workers). Then, on the
``rule`` batch, one check is timed directly (``check_stop_rule`` summing the chunk rows) next to
the count the check made before chunks carried their counts (``frames.pair_outcomes`` over
every seat row), and both are multiplied out over the batch's chunks. Results go to
``bench/results/sprt.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
NEVER = {"elo0": -1.0, "elo1": 1.0, "alpha": 0.001, "beta": 0.001}

CHILD = """
import json, resource, time
from storage import crud
from storage.db import get_engine, upgrade
from workers.batches import plan_batch
from workers.local import run_local
from storage.settings import Settings

upgrade(URL)
engine = get_engine(URL)
settings = Settings(database_url=URL)
rule = {"agents": LABELS, **NEVER} if KIND == "rule" else None
chunk = CHUNK if KIND == "same_chunks" else None
plan = plan_batch(game=GAME, players=2, options={}, agents=AGENTS, matches=MATCHES, seed=SEED,
                  seat_policy="balanced", chunk_size=chunk, max_plies=None, stop_rule=rule,
                  settings=settings)
batch = crud.create_batch(engine, plan=plan)
t0, c0 = time.perf_counter(), time.process_time()
final = run_local(batch.id, workers=WORKERS, settings=settings)
wall = time.perf_counter() - t0
children = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = time.process_time() - c0 + children.ru_utime + children.ru_stime
out = {"wall": wall, "cpu": cpu, "played": final.finished_matches, "chunk": plan.chunk_size,
       "chunks": final.chunks_written, "decision": crud.get_batch(engine, batch.id).decision}
if KIND == "rule":
    from analysis import frames, stop_rule
    stored = crud.get_batch(engine, batch.id)
    stop_rule.check_stop_rule(engine, stored)  # warm
    times = []
    for _ in range(50):
        t = time.perf_counter(); stop_rule.check_stop_rule(engine, stored)
        times.append(time.perf_counter() - t)
    full = []
    for _ in range(5):
        t = time.perf_counter(); frames.pair_outcomes(engine, batch.id, *LABELS, pairs=True)
        full.append(time.perf_counter() - t)
    out["check_seconds"] = sorted(times)[len(times) // 2]
    out["full_count_seconds"] = sorted(full)[len(full) // 2]
print(json.dumps(out))
"""


def run_child(kind: str, url: str, args: argparse.Namespace, chunk: int) -> dict[str, Any]:
    """Play one batch in a fresh interpreter; its wall and CPU seconds and what it played."""
    agents = args.agents.split(",")
    labels = [agents[0], f"{agents[0]}#2"] if agents[0] == agents[1] else agents
    head = (
        f"KIND = {kind!r}\nURL = {url!r}\nGAME = {args.game!r}\nAGENTS = {agents!r}\n"
        f"LABELS = {labels!r}\nMATCHES = {args.matches}\nSEED = {args.seed}\n"
        f"WORKERS = {args.workers}\nCHUNK = {chunk}\nNEVER = {NEVER!r}\n"
    )
    done = subprocess.run([sys.executable, "-c", head + CHILD], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Measure, print and save the figures."""
    from workers.batches import stop_rule_chunk_size

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="alquerque")
    parser.add_argument("--agents", default="random,random")
    parser.add_argument("--matches", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    chunk = stop_rule_chunk_size(10**9, args.matches, pairs=True)
    kinds = ("plain", "same_chunks", "rule")
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for kind in kinds:
                url = f"sqlite:///{tmp}/{kind}-{r}.db"
                runs[kind].append(run_child(kind, url, args, chunk))
            print(
                f"round {r + 1}: "
                + ", ".join(
                    f"{k} {runs[k][-1]['wall']:.2f} s wall / {runs[k][-1]['cpu']:.2f} s cpu "
                    f"(chunks of {runs[k][-1]['chunk']})"
                    for k in kinds
                )
            )
    for kind in kinds:
        for run in runs[kind]:
            if run["played"] != args.matches or run["decision"] is not None:
                raise SystemExit(f"{kind} did not play the whole batch: {run}")

    def median(kind: str, key: str) -> float:
        return statistics.median(x[key] for x in runs[kind])

    def paired(base: str, key: str) -> float:
        """Median over rounds of 1 − base / rule: the share of the rule batch's time that the
        base batch did not need (rounds pair runs made close together in time)."""
        return statistics.median(
            1 - b[key] / r[key] for b, r in zip(runs[base], runs["rule"], strict=True)
        )

    rule_runs = runs["rule"]
    checks = rule_runs[0]["chunks"]
    check_s = statistics.median(x["check_seconds"] for x in rule_runs)
    full_s = statistics.median(x["full_count_seconds"] for x in rule_runs)
    cpu_plain, cpu_same, cpu_rule = (median(k, "cpu") for k in kinds)
    wall_plain, wall_same, wall_rule = (median(k, "wall") for k in kinds)
    result = {
        "game": args.game,
        "agents": args.agents,
        "matches": args.matches,
        "workers": args.workers,
        "rounds": args.rounds,
        "chunk_with_rule": chunk,
        "chunk_plain": runs["plain"][0]["chunk"],
        "checks": checks,
        "wall_seconds": {"plain": wall_plain, "same_chunks": wall_same, "rule": wall_rule},
        "cpu_seconds": {"plain": cpu_plain, "same_chunks": cpu_same, "rule": cpu_rule},
        "check_cost_wall": paired("same_chunks", "wall"),
        "check_cost_cpu": paired("same_chunks", "cpu"),
        "rule_vs_plain_wall": paired("plain", "wall"),
        "rule_vs_plain_cpu": paired("plain", "cpu"),
        "one_check_seconds": check_s,
        "checks_share_of_cpu": checks * check_s / cpu_rule,
        "one_full_count_seconds": full_s,
        "full_counts_share_of_cpu": checks * full_s / 2 / cpu_rule,
        "machine": platform.platform(),
        "python": platform.python_version(),
    }
    print(
        f"{args.matches:,} matches of {args.game} {args.agents}, {args.workers} workers, "
        f"median of {args.rounds} rounds; chunks of {chunk} with the rule "
        f"({checks} checks), {result['chunk_plain']} without"
    )
    for kind in kinds:
        print(
            f"  {kind:12s} {median(kind, 'wall'):7.2f} s wall "
            f"({args.matches / median(kind, 'wall'):7.0f} matches/s), "
            f"{median(kind, 'cpu'):7.2f} s cpu"
        )
    print(
        f"cost of the checks (rule vs same chunks without): "
        f"{100 * result['check_cost_wall']:.1f} % of wall throughput, "
        f"{100 * result['check_cost_cpu']:.1f} % of cpu  (target ≤ 5 %)"
    )
    print(
        f"rule vs no rule at the automatic chunk size: {100 * result['rule_vs_plain_wall']:.1f} %"
        f" wall, {100 * result['rule_vs_plain_cpu']:.1f} % cpu"
    )
    print(
        f"one check summing chunk rows: {1000 * check_s:.2f} ms; × {checks} = "
        f"{100 * result['checks_share_of_cpu']:.2f} % of the rule batch's cpu"
    )
    print(
        f"one count over every seat row (the check before chunk counts): {1000 * full_s:.2f} ms "
        f"at {args.matches:,} matches; growing over {checks} checks ≈ "
        f"{100 * result['full_counts_share_of_cpu']:.1f} % of the rule batch's cpu"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "sprt.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
