"""Distributed mode against local mode, on one workload and the same cores, in one run.

    .venv/bin/python -m bench.service [--matches 20000] [--game alveoles] [--rounds 3]

Starts a private PostgreSQL cluster and redis-server (as the service tests do), then measures:
- the local process pool (2 processes) playing the batch: the baseline;
- the API + Redis + PostgreSQL + 2 Celery worker processes playing the same batch;
- the same with 1 worker process;
- POST /batches latency, p50 and p99 of repeated submissions, for a cheap request (10
  random-vs-random matches) and a very expensive one (10⁶ matches between the strongest MCTS
  and alpha-beta the default settings allow, no chunk size): a request only validates and
  stores, so both must stay under 50 ms at p99;
- PostgreSQL bulk result writes (match rows per second through ``write_chunk``).
Chunks are sized by the runners themselves (measured from the batch's own chunks) unless
``--chunk-size`` is given. Prints ratios against the baselines and writes
bench/results/service.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.servers import Api, PgCluster, RedisServer, Workers, service_env
from storage.db import get_engine, upgrade
from storage.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def make_batch(url: str, game: str, matches: int, chunk_size: int | None) -> str:
    from storage.crud import create_batch
    from workers.batches import plan_batch

    plan = plan_batch(
        settings=Settings(),
        game=game,
        players=None,
        options={},
        agents=["random", "random"],
        matches=matches,
        seed=1,
        seat_policy=None,
        chunk_size=chunk_size,
        max_plies=None,
        stop_rule=None,
    )
    return create_batch(get_engine(url), plan=plan).id


def time_local(url: str, game: str, matches: int, chunk_size: int | None) -> float:
    from workers.local import run_local

    batch_id = make_batch(url, game, matches, chunk_size)
    began = time.perf_counter()
    run_local(batch_id, workers=2, settings=Settings(database_url=url))
    return time.perf_counter() - began


def time_distributed(api: Api, game: str, matches: int, chunk_size: int | None) -> float:
    body: dict[str, Any] = {"game": game, "agents": ["random", "random"], "matches": matches}
    body |= {"seed": 1} if chunk_size is None else {"chunk_size": chunk_size, "seed": 1}
    began = datetime.now(UTC)
    batch_id = api.client.post("/batches", json=body).json()["id"]
    while True:
        # Poll as a user would; the batch's own finish time makes the figure exact anyway,
        # and fast polling would take CPU from the workers being measured.
        batch = api.client.get(f"/batches/{batch_id}").json()
        if batch["status"] in {"done", "failed", "cancelled"}:
            break
        time.sleep(0.5)
    assert batch["progress"]["done"] == matches, batch
    return (datetime.fromisoformat(batch["finished_at"]) - began).total_seconds()


CHEAP = {"agents": ["random", "random"], "matches": 10}
EXPENSIVE = {
    "agents": [
        {"name": "mcts", "iterations": 100_000},
        {"name": "alphabeta", "depth": 16, "nodes": 1_000_000},
    ],
    "matches": 1_000_000,
}
"""The largest budgets the default settings accept (MAX_AGENT_ITERATIONS, _NODES, _DEPTH)."""


def post_latency(api: Api, game: str, spec: dict[str, Any], repeats: int) -> tuple[float, float]:
    """p50 and p99 in seconds of ``repeats`` POST /batches of ``spec`` (each cancelled after,
    untimed)."""
    body = {"game": game, **spec}
    samples = []
    for _ in range(repeats):
        began = time.perf_counter()
        response = api.client.post("/batches", json=body)
        samples.append(time.perf_counter() - began)
        assert response.status_code == 202, response.text
        api.client.post(f"/batches/{response.json()['id']}/cancel")
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return statistics.median(samples), cuts[98]


def write_rate(url: str, game: str, chunks: int = 20, size: int = 2000) -> float:
    from storage.crud import write_chunk
    from storage.records import MatchRecord, SeatRecord

    batch_id = make_batch(url, game, chunks * size, size)
    engine = get_engine(url)
    moves = tuple(["a1-b2"] * 30)
    total = 0.0
    for k in range(chunks):
        records = [
            MatchRecord(
                match_index=i,
                seed=i,
                ok=True,
                plies=30,
                ended_by="normal",
                moves=moves,
                stats={"captures": [3, 4]},
                duration=0.001,
                seats=[
                    SeatRecord(0, "random", 0, 1.0, 1.0, 1),
                    SeatRecord(1, "random#2", 1, 0.0, 0.0, 2),
                ],
            )
            for i in range(k * size, (k + 1) * size)
        ]
        began = time.perf_counter()
        write_chunk(
            engine,
            batch_id=batch_id,
            start=k * size,
            stop=(k + 1) * size,
            records=records,
            duration=0.0,
        )
        total += time.perf_counter() - began
    return chunks * size / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20_000)
    parser.add_argument("--game", default="alveoles")
    parser.add_argument(
        "--chunk-size",
        type=int,
        default=None,
        help="matches per chunk (default: sized by the runners, about CHUNK_SECONDS of work)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="repeats; medians are reported")
    parser.add_argument("--posts", type=int, default=300, help="POSTs per latency figure")
    args = parser.parse_args()

    pg, redis_server = PgCluster(), RedisServer()
    pg.start()
    redis_server.start()
    folder = Path(tempfile.mkdtemp(prefix="pt_bench_"))
    api: Api | None = None
    workers: Workers | None = None
    runs: dict[str, list[float]] = {"local": [], "two": [], "one": []}
    try:
        url = pg.url(pg.create_database())
        upgrade(url)
        env = service_env(url, redis_server.url, STALL_SECONDS="60", MAX_CHUNKS_IN_FLIGHT="16")
        api = Api(env, folder)
        chunk_size = args.chunk_size
        # Rounds interleave the three set-ups so a slow spell of the machine hits all of them.
        for _ in range(args.rounds):
            runs["local"].append(time_local(url, args.game, args.matches, chunk_size))
            for count, name in ((2, "two"), (1, "one")):
                workers = Workers(env, count, folder)
                time_distributed(api, args.game, 200, 50)  # warm-up: workers up, imports done
                runs[name].append(time_distributed(api, args.game, args.matches, chunk_size))
                workers.stop()
                workers = None

        post_latency(api, args.game, CHEAP, repeats=10)  # warm-up: imports, connections
        cheap = post_latency(api, args.game, CHEAP, args.posts)
        expensive = post_latency(api, args.game, EXPENSIVE, args.posts)
        rows = write_rate(url, args.game)
    finally:
        if workers is not None:
            workers.stop()
        if api is not None:
            api.stop()
        redis_server.remove()
        pg.remove()

    local, two, one = (statistics.median(runs[k]) for k in ("local", "two", "one"))
    figures: dict[str, Any] = {
        "matches": args.matches,
        "game": args.game,
        "chunk_size": chunk_size or "measured",
        "rounds": args.rounds,
        "local_pool_2_processes_s": round(local, 3),
        "distributed_2_workers_s": round(two, 3),
        "distributed_1_worker_s": round(one, 3),
        "distributed_vs_local_throughput": round(local / two, 3),
        "two_workers_vs_one": round(one / two, 3),
        "post_cheap_p50_ms": round(cheap[0] * 1000, 2),
        "post_cheap_p99_ms": round(cheap[1] * 1000, 2),
        "post_expensive_p50_ms": round(expensive[0] * 1000, 2),
        "post_expensive_p99_ms": round(expensive[1] * 1000, 2),
        "postgres_match_rows_per_s": round(rows),
    }
    for key, value in figures.items():
        print(f"{key:36} {value}")
    out = ROOT / "bench" / "results" / "service.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
