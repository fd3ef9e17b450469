"""Dashboard page loads: the batch list over 1,000 batches, and the replay of a 400-ply match.

    .venv/bin/python -m bench.dashboard                  # SQLite file in a temporary folder
    .venv/bin/python -m bench.dashboard --db postgresql+psycopg://...  --loads 9

Stores ``--batches`` batches (default 1,000; 5 % of them running, each with ``--matches`` stored
matches of synthetic results through ``storage``'s bulk writer), and one batch holding a legal
400-ply Alquerque match (found by a fixed, seeded walk that prefers sideways moves and avoids a
third repetition; every move checked by the engine). Then it starts ``uvicorn api.app:app``
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
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
sys.path.insert(0, str(ROOT / "tests"))

from service_fixtures import Api  # noqa: E402

from storage import crud  # noqa: E402
from storage.db import get_engine, upgrade  # noqa: E402
from storage.models import BatchPlan  # noqa: E402
from storage.records import MatchRecord, SeatRecord  # noqa: E402

LONG_PLIES = 400


def long_alquerque_match(plies: int = LONG_PLIES) -> list[str]:
    """A legal Alquerque move list of exactly ``plies`` plies without a capture limit.

    Random play ends Alquerque within about 100 plies (no backward moves); this walk prefers
    moves that neither end the game nor repeat a position a third time, and among them sideways
    moves (which can be undone), so the game lasts.
    """
    from engines.registry import load_game

    game = load_game("alquerque", no_capture_limit=1000)
    for seed in range(1000):
        rng = random.Random(seed)
        state = game.new_initial_state()
        seen: Counter[Any] = Counter()
        moves: list[str] = []
        while not state.is_terminal() and len(moves) < plies:
            options = []
            for action in state.legal_actions():
                after = state.clone()
                after.apply(action)
                text = state.action_to_string(action)
                sideways = "-" in text and text[1] == text[-1]
                key = after.key()
                rank = (after.is_terminal(), seen[key] >= 2, not sideways, seen[key], rng.random())
                options.append((rank, text, after))
            _, text, state = min(options, key=lambda o: o[0])
            moves.append(text)
            seen[state.key()] += 1
        if len(moves) == plies:
            return moves
    raise RuntimeError(f"no {plies}-ply Alquerque walk found")


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
    """A batch whose match 0 is the 400-ply Alquerque walk, replayed to store its result."""
    from engines.registry import load_game

    moves = long_alquerque_match()
    game = load_game("alquerque", no_capture_limit=1000)
    state = game.new_initial_state(0)
    for move in moves:
        state.apply_string(move)
    engine = get_engine(url)
    plan = BatchPlan(
        game="alquerque",
        players=2,
        options={"no_capture_limit": 1000},
        agents=[{"name": "random"}, {"name": "random"}],
        labels=["random", "random#2"],
        matches=1,
        seed=0,
        seat_policy="fixed",
        chunk_size=1,
        max_plies=LONG_PLIES,
    )
    batch = crud.create_batch(engine, plan=plan)
    scores = state.scores()
    seats = [SeatRecord(s, plan.labels[s], s, scores[s], 0.5, 1) for s in (0, 1)]
    record = MatchRecord(0, 0, True, len(moves), "move_limit", tuple(moves), {}, 1.0, None, seats)
    crud.write_chunk(engine, batch_id=batch.id, start=0, stop=1, records=[record], duration=1.0)
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
