"""Chunk sizing at scale: a discrete-event simulation of 1 to 1,000 workers playing one batch.

    .venv/bin/python -m bench.scaling                     # every game, 10,000 matches
    .venv/bin/python -m bench.scaling --matches 2000 --workers 1 2 10 100
    .venv/bin/python -m bench.scaling_measure times       # measure the match times again
    .venv/bin/python -m bench.scaling_measure service     # 2 workers vs 1, the real service

The workers are fed with match times measured from real batches of each game
(``bench/scaling_times.json``, written by ``bench.scaling_measure``): every simulated match
takes a time drawn from its game's measured ones, with their spread. The dispatcher is the
one of ``workers.dispatch``: the first chunk is one match, played alone; once it is written,
``in_flight`` chunks sized from it are queued; each chunk written adds its matches and seconds
to the batch's totals and queues one more, sized by ``workers.sizing.next_chunk_size`` (the
real function, told the workers that took or wrote a chunk within its active window), workers
taking chunks first come first served. Each chunk costs its matches'
times plus ``OVERHEAD`` (its transaction and messages). Two rules are compared on the same
draws: today's (about ``chunk_seconds`` of work a chunk) and the new one (the same, shrinking
toward the end with the matches left and the workers seen lately).

Figures: parallel efficiency, the matches' total time over workers × the batch's wall time
(1.0: no worker ever idle); the tail, from the moment the first worker runs out of work for
good to the end; the number of chunks. Writes bench/results/scaling.json.
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storage.chunking import cut
from storage.settings import Settings
from workers.sizing import active_window, next_chunk_size, smallest_chunk

ROOT = Path(__file__).resolve().parent.parent
TIMES = ROOT / "bench" / "scaling_times.json"
OVERHEAD = 0.005
"""Seconds a chunk costs beside its matches: about 5 ms of CPU a chunk (hand-off, the chunk's
transaction, the completion check), as ``bench.sprt`` measured (bench/README.md)."""
WORKERS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
RULES = ("today", "new")


@dataclass(frozen=True)
class SimBatch:
    """What sizing reads of a batch (``workers.sizing.Sized``)."""

    matches: int
    players: int = 2
    seat_policy: str = "rotate"
    chunk_size: int = 0
    stop_rule: dict[str, Any] | None = None
    time_control: str | None = None


@dataclass(frozen=True)
class Run:
    """One simulated batch."""

    workers: int
    matches: int
    rule: str
    makespan: float
    work: float
    tail: float
    chunks: int

    @property
    def efficiency(self) -> float:
        """The matches' total time over workers × wall time."""
        return self.work / (self.workers * self.makespan) if self.makespan > 0 else 1.0


def in_flight_for(workers: int, settings: Settings) -> int:
    """Chunks queued at a time: ``MAX_CHUNKS_IN_FLIGHT``, raised to twice the workers (fewer
    chunks in flight than workers would leave the rest idle whatever the sizing)."""
    return max(settings.max_chunks_in_flight, 2 * workers)


def simulate(
    times: Sequence[float],
    workers: int,
    *,
    rule: str = "new",
    settings: Settings | None = None,
    chunk_size: int = 0,
    overhead: float = OVERHEAD,
    in_flight: int | None = None,
) -> Run:
    """Play a batch of ``len(times)`` matches (match ``i`` takes ``times[i]`` seconds) on
    ``workers`` workers with the dispatcher of ``workers.dispatch`` and the sizing ``rule``
    (``today`` or ``new``); ``chunk_size`` > 0 fixes the size as a batch may."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, not {rule!r}")
    settings = settings or Settings()
    batch = SimBatch(matches=len(times), chunk_size=chunk_size)
    flight = in_flight if in_flight is not None else in_flight_for(workers, settings)
    prefix = [0.0]
    for t in times:
        prefix.append(prefix[-1] + t)
    queue: deque[tuple[int, int]] = deque()
    idle = list(range(workers))
    busy: list[tuple[float, int, int, int]] = []  # (finish, worker, start, stop)
    last_finish = [0.0] * workers
    seen: dict[int, float] = {}
    state = {"cursor": 0, "matches": 0, "seconds": 0.0, "measured": False, "chunks": 0}

    def fill(count: int, size: int) -> None:
        begin = state["cursor"]
        state["cursor"] = begin + count * size
        queue.extend(cut(begin, min(state["cursor"], batch.matches), size))

    def dispatch(now: float) -> None:
        while idle and queue:
            worker = idle.pop()
            a, b = queue.popleft()
            seen[worker] = now  # a delivery notes its worker when it takes the chunk
            state["chunks"] += 1
            duration = overhead + prefix[b] - prefix[a]
            heapq.heappush(busy, (now + duration, worker, a, b))

    if chunk_size > 0:
        fill(flight, chunk_size)
    else:
        fill(1, smallest_chunk(batch))
    dispatch(0.0)
    now = 0.0
    while busy:
        now, worker, a, b = heapq.heappop(busy)
        last_finish[worker] = now
        idle.append(worker)
        if chunk_size > 0:
            fill(1, chunk_size)
        else:
            state["matches"] += b - a
            state["seconds"] += prefix[b] - prefix[a]
            seen[worker] = now
            remaining: int | None = None
            active = 0
            if rule == "new":
                window = active_window(settings)
                active = sum(1 for t in seen.values() if t >= now - window)
                remaining = batch.matches - state["cursor"]
            first = not state["measured"]
            state["measured"] = True
            count = flight if first else 1
            size = next_chunk_size(
                batch,
                matches=state["matches"],
                seconds=state["seconds"],
                settings=settings,
                remaining=remaining,
                workers=active,
                count=count,
            )
            fill(count, size)
        dispatch(now)
    makespan = now
    tail = makespan - min(last_finish)
    return Run(workers, batch.matches, rule, makespan, prefix[-1], tail, state["chunks"])


def load_times(path: Path = TIMES) -> dict[str, dict[str, Any]]:
    """The measured match times per game (``bench.scaling_measure times`` writes them)."""
    data: dict[str, dict[str, Any]] = json.loads(path.read_text())["games"]
    return data


def draw(seconds: Sequence[float], matches: int, seed: int) -> list[float]:
    """``matches`` match times drawn with replacement from the measured ``seconds``."""
    rng = random.Random(seed)
    return [rng.choice(seconds) for _ in range(matches)]


def compare(
    seconds: Sequence[float], matches: int, workers: Sequence[int], repeats: int, seed: int
) -> list[dict[str, Any]]:
    """Both rules on the same draws: median efficiency, lowest efficiency, median tail and
    chunks over ``repeats`` draws, per worker count."""
    rows = []
    draws = [draw(seconds, matches, seed + k) for k in range(repeats)]
    for count in workers:
        row: dict[str, Any] = {"workers": count}
        for rule in RULES:
            runs = [simulate(times, count, rule=rule) for times in draws]
            effs = [r.efficiency for r in runs]
            row[rule] = {
                "efficiency": round(statistics.median(effs), 3),
                "efficiency_min": round(min(effs), 3),
                "tail_s": round(statistics.median(r.tail for r in runs), 3),
                "wall_s": round(statistics.median(r.makespan for r in runs), 3),
                "chunks": round(statistics.median(r.chunks for r in runs)),
            }
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--workers", type=int, nargs="+", default=list(WORKERS))
    parser.add_argument("--games", nargs="+", default=None, help="default: every measured game")
    parser.add_argument("--repeats", type=int, default=5, help="draws of the match times")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    measured = load_times()
    games = args.games or sorted(measured)
    results: dict[str, Any] = {"matches": args.matches, "overhead_s": OVERHEAD, "games": {}}
    for game in games:
        entry = measured[game]
        seconds = entry["seconds"]
        rows = compare(seconds, args.matches, args.workers, args.repeats, args.seed)
        results["games"][game] = {"agents": entry["agents"], "rows": rows}
        mean = statistics.fmean(seconds)
        spread = statistics.stdev(seconds) / mean if len(seconds) > 1 else 0.0
        print(
            f"\n{game} ({', '.join(entry['agents'])}): {len(seconds)} matches measured, "
            f"mean {mean * 1000:.1f} ms, cv {spread:.2f}; {args.matches} matches"
        )
        print(
            f"{'workers':>7} | {'eff today':>9} {'(min)':>6} {'tail s':>7} {'chunks':>6} |"
            f" {'eff new':>7} {'(min)':>6} {'tail s':>7} {'chunks':>6}"
        )
        for row in rows:
            t, n = row["today"], row["new"]
            print(
                f"{row['workers']:>7} | {t['efficiency']:>9.3f} {t['efficiency_min']:>6.3f} "
                f"{t['tail_s']:>7.2f} {t['chunks']:>6} | {n['efficiency']:>7.3f} "
                f"{n['efficiency_min']:>6.3f} {n['tail_s']:>7.2f} {n['chunks']:>6}"
            )
    out = ROOT / "bench" / "results" / "scaling.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
