"""Distributed mode against local mode, on one workload and the same cores, in one run.

    .venv/bin/python -m bench.service [--matches 20000] [--game alveoles] [--rounds 3]

Starts a private PostgreSQL cluster and redis-server (as the service tests do), then measures:
- the local process pool (2 processes) playing the batch: the baseline;
- the API + Redis + PostgreSQL + 2 Celery worker processes playing the same batch;
- the same with 1 worker process;
- submission latency of a 10-match and a 10⁶-match batch (median of repeated POSTs);
- PostgreSQL bulk result writes (match rows per second through ``write_chunk``).
Prints ratios against the baselines and writes bench/results/service.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from service_fixtures import Api, PgCluster, RedisServer, Workers, service_env  # noqa: E402

from storage.db import get_engine, upgrade  # noqa: E402


def make_batch(url: str, game: str, matches: int, chunk_size: int | None) -> str:
    from storage.crud import create_batch
    from workers.batches import plan_batch

    plan = plan_batch(
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
    run_local(batch_id, workers=2, database_url=url)
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


def chunk_size_estimate(api: Api, game: str) -> int:
    """The chunk size the service picks for this workload (about 2 s of work)."""
    body = {"game": game, "agents": ["random", "random"], "matches": 10}
    batch = api.client.post("/batches", json=body).json()
    api.client.post(f"/batches/{batch['id']}/cancel")
    return int(batch["chunk_size"])


def submission_latency(api: Api, game: str, matches: int, repeats: int = 30) -> float:
    body = {"game": game, "agents": ["random", "random"], "matches": matches}
    samples = []
    for _ in range(repeats):
        began = time.perf_counter()
        response = api.client.post("/batches", json=body)
        samples.append(time.perf_counter() - began)
        assert response.status_code == 202, response.text
        api.client.post(f"/batches/{response.json()['id']}/cancel")
    return statistics.median(samples)


def write_rate(url: str, game: str, chunks: int = 20, size: int = 2000) -> float:
    from storage.crud import write_chunk
    from workers.play import MatchRecord, SeatRecord

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
        help="matches per chunk (default: the service's own estimate, about 2 s of work)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="repeats; medians are reported")
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
        chunk_size = args.chunk_size or chunk_size_estimate(api, args.game)
        # Rounds interleave the three set-ups so a slow spell of the machine hits all of them.
        for _ in range(args.rounds):
            runs["local"].append(time_local(url, args.game, args.matches, chunk_size))
            for count, name in ((2, "two"), (1, "one")):
                workers = Workers(env, count, folder)
                time_distributed(api, args.game, 200, 50)  # warm-up: workers up, imports done
                runs[name].append(time_distributed(api, args.game, args.matches, chunk_size))
                workers.stop()
                workers = None

        submission_latency(api, args.game, 10, repeats=3)  # warm the chunk-size estimate
        small = submission_latency(api, args.game, 10)
        large = submission_latency(api, args.game, 1_000_000)
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
        "chunk_size": chunk_size,
        "rounds": args.rounds,
        "local_pool_2_processes_s": round(local, 3),
        "distributed_2_workers_s": round(two, 3),
        "distributed_1_worker_s": round(one, 3),
        "distributed_vs_local_throughput": round(local / two, 3),
        "two_workers_vs_one": round(one / two, 3),
        "submit_10_matches_ms": round(small * 1000, 2),
        "submit_1e6_matches_ms": round(large * 1000, 2),
        "submit_latency_ratio_1e6_vs_10": round(large / small, 3),
        "postgres_match_rows_per_s": round(rows),
    }
    for key, value in figures.items():
        print(f"{key:36} {value}")
    out = ROOT / "bench" / "results" / "service.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
