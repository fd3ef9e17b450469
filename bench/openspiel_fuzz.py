"""OpenSpiel's registered games with generated parameters, sent to a real API server.

    .venv/bin/python -m bench.openspiel_fuzz --cases 3000 --seed 1

Starts ``uvicorn api.app:app`` (local mode on a SQLite file in a temporary folder) and
sends ``--cases`` different ``POST /batches`` bodies, two at a time: a game drawn from the
playable OpenSpiel games, zero to two of its parameters set to values drawn from edges (0,
negatives, 10⁷, 2⁴⁰, long and odd text) and from around the default. Counts the answers by
status, the requests with no answer within ``--timeout`` seconds (hung), and the times the
server process died (crashes); ``/healthz`` is asked after every request. No case is sent
after ``--max-minutes``; the cases counted are those sent. Prints the counts and writes
``bench/results/openspiel_fuzz.json``. Expect 0 crashes, 0 5xx and 0 hung.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from harness.servers import ROOT, Api

RESULTS = Path(__file__).resolve().parent / "results"

EDGES = [-(2**40), -1000, -1, 0, 1, 2, 3, 7, 100, 1000, 99_999, 10_000_000, 2**40]
TEXTS = ["", " ", "0", "-1", "999999999", "1;10000000", "100 100", "a;b", "é\u0000", "1 2 3"]


def playable() -> dict[str, dict[str, Any]]:
    import pyspiel

    from engines.openspiel.spiel import refusal

    return {
        t.short_name: {
            k: v
            for k, v in dict(t.parameter_specification).items()
            if "file" not in k and k != "players"
        }
        for t in pyspiel.registered_games()
        if refusal(t) is None
    }


def value_for(default: Any, rng: random.Random) -> Any:
    if isinstance(default, bool):
        return rng.choice([True, False, 0, "yes"])
    if isinstance(default, int):
        return rng.choice([rng.choice(EDGES), rng.randint(-50, 200), default * 10, default + 1])
    if isinstance(default, float):
        return rng.choice([0.0, -1.0, 1e308, rng.uniform(-1e9, 1e9), default * 10])
    if rng.random() < 0.5:
        return rng.choice(TEXTS)
    return "".join(rng.choice("0123456789 ;,-abc") for _ in range(rng.randint(1, 12)))


def body(games: dict[str, dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    name = rng.choice(sorted(games))
    spec = games[name]
    chosen = rng.sample(sorted(spec), min(len(spec), rng.randint(0, 2)))
    return {
        "game": f"openspiel:{name}",
        "options": {k: value_for(spec[k], rng) for k in chosen},
        "agents": ["random"],
        "matches": 1,
    }


def distinct_bodies(
    games: dict[str, dict[str, Any]], rng: random.Random, cases: int
) -> list[dict[str, Any]]:
    """``cases`` different bodies (a body met again would be answered from the check the API
    remembers, and test nothing new)."""
    seen: dict[str, dict[str, Any]] = {}
    for _ in range(cases * 100):
        if len(seen) == cases:
            break
        drawn = body(games, rng)
        seen.setdefault(json.dumps(drawn, sort_keys=True), drawn)
    return list(seen.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument(
        "--max-minutes", type=float, default=30.0, help="send no new case after this long"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    games = playable()
    bodies = distinct_bodies(games, rng, args.cases)
    folder = Path(tempfile.mkdtemp(prefix="pt_fuzz_"))
    url = f"sqlite:///{folder / 'fuzz.db'}"
    from storage.db import upgrade

    upgrade(url)
    import os

    env = {k: v for k, v in os.environ.items() if k not in {"API_KEY", "BROKER_URL"}}
    env.update(DATABASE_URL=url, PYTHONPATH=str(ROOT))
    api = Api(env, folder)
    statuses: Counter[str] = Counter()
    crashes = hung = unhealthy = 0
    examples: dict[str, dict[str, Any]] = {}
    began = time.perf_counter()

    stop_at = began + args.max_minutes * 60

    def send(payload: dict[str, Any]) -> str:
        if time.perf_counter() > stop_at:
            return "not sent"
        try:
            with httpx.Client(base_url=api.url, timeout=args.timeout) as client:
                return str(client.post("/batches", json=payload).status_code)
        except httpx.TimeoutException:
            return "hung"
        except httpx.TransportError:
            return "no answer"

    with ThreadPoolExecutor(2) as pool:
        for payload, status in zip(bodies, pool.map(send, bodies), strict=True):
            if status == "not sent":
                continue
            statuses[status] += 1
            if status == "hung":
                hung += 1
            if status.startswith("5") or status in {"hung", "no answer"}:
                examples.setdefault(status, payload)
            if api.process.poll() is not None:
                crashes += 1
                examples.setdefault("crash", payload)
                api = Api(env, folder)
            elif api.client.get("/healthz").status_code != 200:
                unhealthy += 1
    seconds = time.perf_counter() - began
    api.stop()
    server_errors = sum(n for s, n in statuses.items() if s.startswith("5"))
    sent = sum(statuses.values())
    result = {
        "cases": sent,
        "distinct_cases": len({json.dumps(b, sort_keys=True) for b in bodies[:sent]}),
        "seed": args.seed,
        "games": len(games),
        "statuses": dict(sorted(statuses.items())),
        "server_errors": server_errors,
        "hung": hung,
        "crashes": crashes,
        "unhealthy_after": unhealthy,
        "seconds": round(seconds, 1),
        "examples": examples,
    }
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "openspiel_fuzz.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
