"""Dashboard page loads: the batch list over 1,000 batches, and the replay of a 400-ply match.

    .venv/bin/python -m bench.dashboard                  # SQLite file in a temporary folder
    .venv/bin/python -m bench.dashboard --db postgresql+psycopg://...  --loads 9

Stores ``--batches`` batches (default 1,000; 5 % of them running, each with ``--matches`` stored
matches of synthetic results through ``storage``'s bulk writer), and one batch holding a
400-ply Abalone match played by the runner between random players (random Abalone reaches the
rules' move limit of 400 plies). Then it starts ``uvicorn api.app:app``
(local mode, no broker: nothing plays) and measures, each the median of ``--loads`` loads:

- server time: the whole answer of ``GET /`` (first page of 50 of the batches) and of the replay
  page and its positions JSON, read with httpx;
- browser time, in headless Chromium (Debian's, through Playwright), each load in a fresh
  context (nothing cached): ``loadEventEnd`` of the navigation for the batch list; for the
  replay, ``loadEventEnd`` and the moment the page can step (its positions JSON fetched and
  parsed, ``data-ready``).

Prints the figures and writes ``bench/results/dashboard.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

from harness.servers import Api
from storage import crud
from storage.db import get_engine, upgrade
from storage.models import BatchPlan
from storage.records import MatchRecord, SeatRecord
from storage.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"

LONG_PLIES = 400


def _seats(rng: random.Random, labels: list[str]) -> list[SeatRecord]:
    first = rng.random() < 0.55
    win = (1.0, 0.0) if first else (0.0, 1.0)
    return [SeatRecord(s, labels[s], s, win[s] * 5, win[s], 1 if win[s] else 2) for s in (0, 1)]


def store_batches(url: str, count: int, matches: int) -> None:
    """``count`` batches with ``matches`` synthetic results each; one in 20 left running."""
    engine = get_engine(url)
    rng = random.Random(1)
    for i in range(count):
        game = ("alquerque", "alveoles")[i % 2]
        labels = ["random", "greedy" if game == "alveoles" else "easy"]
        plan = BatchPlan(
            game=game,
            players=2,
            options={},
            agents=[{"name": name} for name in labels],
            labels=labels,
            matches=matches * (2 if i % 20 == 0 else 1),
            seed=i,
            seat_policy="balanced",
            chunk_size=matches,
            max_plies=400,
        )
        batch = crud.create_batch(engine, plan=plan)
        records = [
            MatchRecord(j, j, True, 30, "normal", ("a1S",), {}, 0.01, None, _seats(rng, labels))
            for j in range(matches)
        ]
        crud.write_chunk(
            engine, batch_id=batch.id, start=0, stop=matches, records=records, duration=0.5
        )
        crud.set_status(engine, batch.id, "running" if i % 20 == 0 else "done")


def store_long_match(url: str) -> str:
    """A batch whose match 0 is a real 400-ply match: random Abalone players, whose games end
    at the rules' move limit of 400 plies (the first seed that does, played by the runner)."""
    from workers.batches import plan_batch
    from workers.play import play_chunk

    for seed in range(100):
        plan = plan_batch(
            settings=Settings(),
            game="abalone",
            players=2,
            options={},
            agents=["random"],
            matches=1,
            seed=seed,
            seat_policy="fixed",
            chunk_size=1,
            max_plies=None,
        )
        records = play_chunk(plan, 0, 1)
        if records[0].plies == LONG_PLIES:
            break
    else:
        raise RuntimeError(f"no random Abalone match of {LONG_PLIES} plies in 100 seeds")
    engine = get_engine(url)
    batch = crud.create_batch(engine, plan=plan)
    crud.write_chunk(engine, batch_id=batch.id, start=0, stop=1, records=records, duration=1.0)
    crud.set_status(engine, batch.id, "done")
    return batch.id


def server_times(
    base: str, paths: list[str], loads: int
) -> tuple[dict[str, float], dict[str, int]]:
    """Median seconds for the whole answer of each path, and each answer's size in bytes."""
    import httpx

    out, sizes = {}, {}
    with httpx.Client(base_url=base, timeout=120) as client:
        for path in paths:
            first = client.get(path)  # warm: imports, first queries
            first.raise_for_status()
            sizes[path] = len(first.content)
            times = []
            for _ in range(loads):
                began = time.perf_counter()
                client.get(path).raise_for_status()
                times.append(time.perf_counter() - began)
            out[path] = statistics.median(times)
    return out, sizes


NAVIGATION = "performance.getEntriesByType('navigation')[0].loadEventEnd"


def browser_times(base: str, list_path: str, replay_path: str, loads: int) -> dict[str, float]:
    import shutil

    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    list_loads, list_cached, replay_loads, replay_ready = [], [], [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for _ in range(loads + 1):  # the first load of each warms the server
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.goto(base + list_path, wait_until="load")
            list_loads.append(page.evaluate(NAVIGATION) / 1000)
            page.goto(base + list_path, wait_until="load")  # again: CSS and script cached
            list_cached.append(page.evaluate(NAVIGATION) / 1000)
            page.goto(base + replay_path, wait_until="load")
            replay_loads.append(page.evaluate(NAVIGATION) / 1000)
            page.wait_for_selector("#replay[data-ready='1']", timeout=120_000)
            replay_ready.append(page.evaluate("performance.now()") / 1000)
            context.close()
        browser.close()
    return {
        "list_load": statistics.median(list_loads[1:]),
        "list_load_cached": statistics.median(list_cached[1:]),
        "replay_load": statistics.median(replay_loads[1:]),
        "replay_ready_at_most": statistics.median(replay_ready[1:]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", help="database URL (default: a SQLite file in a temp folder)")
    parser.add_argument("--batches", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=40, help="stored matches per batch")
    parser.add_argument("--loads", type=int, default=7)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="pt_bench_dashboard_"))
    url = args.db or f"sqlite:///{folder}/dashboard.db"
    upgrade(url)
    began = time.perf_counter()
    store_batches(url, args.batches, args.matches)
    long_id = store_long_match(url)
    print(f"stored {args.batches} batches + the long match in {time.perf_counter() - began:.1f} s")

    env = {k: v for k, v in os.environ.items() if k not in {"BROKER_URL", "API_KEY_READS"}}
    env.update(DATABASE_URL=url, PYTHONPATH=str(ROOT))
    api = Api(env, folder, "bench-api")
    replay = f"/ui/batches/{long_id}/matches/0"
    try:
        paths = ["/", "/?page=20", replay, replay + "/positions"]
        server, sizes = server_times(api.url, paths, args.loads)
        browser = browser_times(api.url, "/", replay, args.loads)
    finally:
        api.stop()

    result = {
        "database": url.split(":")[0],
        "batches": args.batches,
        "matches_per_batch": args.matches,
        "replay_plies": LONG_PLIES,
        "loads": args.loads,
        "server_seconds": server,
        "browser_seconds": browser,
        "bytes": sizes,
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
    }
    print(f"database: {result['database']}; {args.batches} batches; median of {args.loads} loads")
    cold, cached = browser["list_load"] * 1000, browser["list_load_cached"] * 1000
    lines = [
        ("batch list, page 1", "/", f"load {cold:.0f} ms cold, {cached:.0f} ms CSS/JS cached"),
        ("batch list, page 20", "/?page=20", ""),
        ("replay page at ply 0", replay, f"load {browser['replay_load'] * 1000:.0f} ms"),
        (
            "replay JSON, 401 positions",
            replay + "/positions",
            f"steppable {browser['replay_ready_at_most'] * 1000:.0f} ms after navigation",
        ),
    ]
    for label, path, extra in lines:
        ms = server[path] * 1000
        print(f"  {label:27} server {ms:6.1f} ms {sizes[path]:>10,} bytes  {extra}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dashboard.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
