"""What ``bench.scaling`` is fed with, and the real service it stands for.

    .venv/bin/python -m bench.scaling_measure times [--matches 60] [--seconds 60]
    .venv/bin/python -m bench.scaling_measure service [--game alquerque] [--matches 3000]

``times`` plays small real batches of each game (one typical pairing per game, ``PAIRINGS``)
in this process and writes every match's CPU time to ``bench/scaling_times.json``, with the
spread (standard deviation, coefficient of variation, quantiles). CPU time, not wall time, so
other work on a shared machine does not stretch the figures.

``service`` runs one batch on the real service (private PostgreSQL and redis-server, the API,
``celery -A workers worker`` processes, as the service tests start them), first on 1 worker
then on 2, chunks sized by the dispatcher, and prints the wall times, their ratio and the
chunk counts. Writes bench/results/scaling_service.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TIMES = ROOT / "bench" / "scaling_times.json"
PAIRINGS: dict[str, dict[str, Any]] = {
    "abalone": {"agents": ["easy", "medium"], "players": 2},
    "alhambra": {"agents": ["greedy", "greedy", "greedy"], "players": 3},
    "alquerque": {"agents": ["medium", "hard"], "players": 2},
    "alveoles": {"agents": ["hunter", "white_pusher"], "players": 2},
}
"""One pairing a designer would run per game: its own levels, seats rotated."""


def plan(game: str, matches: int, seed: int = 1) -> Any:
    from storage.settings import Settings
    from workers.batches import plan_batch

    pairing = PAIRINGS[game]
    return plan_batch(
        settings=Settings(),
        game=game,
        players=pairing["players"],
        options={},
        agents=list(pairing["agents"]),
        matches=matches,
        seed=seed,
        seat_policy=None,
        chunk_size=None,
        max_plies=None,
    )


def match_times(game: str, matches: int, budget: float) -> list[float]:
    """CPU seconds of each of up to ``matches`` matches of the game's pairing, stopping once
    ``budget`` CPU seconds are spent."""
    from workers.play import build_game, play_one

    batch = plan(game, matches)
    board = build_game(batch)
    play_one(board, batch, 0)  # imports and tables loaded outside the figures
    out: list[float] = []
    for i in range(matches):
        began = time.process_time()
        record = play_one(board, batch, i)
        out.append(time.process_time() - began)
        if not record.ok:
            raise RuntimeError(f"{game} match {i} failed: {record.error}")
        if sum(out) > budget:
            break
    return out


def summary(seconds: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(seconds, n=10, method="inclusive")
    mean = statistics.fmean(seconds)
    sd = statistics.stdev(seconds)
    return {
        "mean": round(mean, 5),
        "sd": round(sd, 5),
        "cv": round(sd / mean, 3),
        "p10": round(cuts[0], 5),
        "p50": round(statistics.median(seconds), 5),
        "p90": round(cuts[8], 5),
        "max": round(max(seconds), 5),
    }


def measure_times(matches: int, budget: float) -> None:
    games: dict[str, Any] = {}
    for game, pairing in PAIRINGS.items():
        seconds = match_times(game, matches, budget)
        games[game] = {
            "agents": pairing["agents"],
            "players": pairing["players"],
            "matches": len(seconds),
            "summary": summary(seconds),
            "seconds": [round(s, 6) for s in seconds],
        }
        print(f"{game:10} {len(seconds):4} matches  {games[game]['summary']}")
    data = {
        "what": "CPU seconds per match of small real batches, one pairing per game "
        "(bench/scaling_measure.py times)",
        "measured": datetime.now().astimezone().isoformat(timespec="minutes"),
        "games": games,
    }
    TIMES.write_text(json.dumps(data, indent=1) + "\n")


def run_service(game: str, matches: int) -> None:
    from sqlalchemy import text

    from harness.servers import Api, PgCluster, RedisServer, Workers, service_env
    from storage.db import get_engine, upgrade

    pg, redis_server = PgCluster(), RedisServer()
    pg.start()
    redis_server.start()
    folder = Path(tempfile.mkdtemp(prefix="pt_scaling_"))
    api: Api | None = None
    figures: dict[str, Any] = {"game": game, "agents": PAIRINGS[game]["agents"]}
    figures["matches"] = matches
    try:
        url = pg.url(pg.create_database())
        upgrade(url)
        env = service_env(url, redis_server.url, STALL_SECONDS="60")
        api = Api(env, folder)
        for count in (1, 2):
            workers = Workers(env, count, folder, pool="prefork")
            try:
                body = {"game": game, "agents": PAIRINGS[game]["agents"], "seed": 7}
                body |= {"players": PAIRINGS[game]["players"], "matches": matches}
                batch_id = api.client.post("/batches", json=body).json()["id"]
                while True:
                    batch = api.client.get(f"/batches/{batch_id}").json()
                    if batch["status"] in {"done", "failed", "cancelled"}:
                        break
                    time.sleep(1.0)
            finally:
                workers.stop()
            assert batch["status"] == "done", batch
            started = datetime.fromisoformat(batch["started_at"])
            finished = datetime.fromisoformat(batch["finished_at"])
            with get_engine(url).connect() as conn:
                sizes = conn.execute(
                    text("SELECT stop - start FROM chunk WHERE batch_id = :b ORDER BY start"),
                    {"b": batch_id},
                ).scalars()
                sizes = list(sizes)
            figures[f"workers_{count}"] = {
                "wall_s": round((finished - started).total_seconds(), 2),
                "chunks": len(sizes),
                "chunks_per_worker": round(len(sizes) / count, 1),
                "largest_chunk": max(sizes),
                "last_chunks": sizes[-6:],
            }
            print(count, figures[f"workers_{count}"])
    finally:
        if api is not None:
            api.stop()
        redis_server.remove()
        pg.remove()
    one, two = figures["workers_1"]["wall_s"], figures["workers_2"]["wall_s"]
    figures["two_vs_one"] = round(one / two, 3)
    print("2 workers vs 1:", figures["two_vs_one"])
    out = ROOT / "bench" / "results" / "scaling_service.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    times = sub.add_parser("times", help="measure the match times of each game")
    times.add_argument("--matches", type=int, default=60)
    times.add_argument("--seconds", type=float, default=60.0, help="CPU budget per game")
    service = sub.add_parser("service", help="1 worker, then 2, on the real service")
    service.add_argument("--game", default="alquerque", choices=sorted(PAIRINGS))
    service.add_argument("--matches", type=int, default=3000)
    args = parser.parse_args()
    if args.what == "times":
        measure_times(args.matches, args.seconds)
    else:
        run_service(args.game, args.matches)


if __name__ == "__main__":
    main()
