"""Report speed and memory over a million stored matches, against pandas reading the seat table.

    .venv/bin/python -m bench.reports                     # 10^6 matches, 2 players, 3 rounds
    .venv/bin/python -m bench.reports --matches 200000 --rounds 2

Synthetic rows (two agents, seat-swapped pairs, some draws, plies 20–120, four endings) are
inserted in bulk into a fresh SQLite file. Then, in separate child processes so that each one's
peak memory is its own, interleaved round by round:
- baseline: ``pandas.read_sql`` of the batch's seat_result rows (every column) — the time pandas
  needs just to read the seat-results table;
- report: ``analysis.report.build_report`` (everything: seats, agents and pairings with the
  pentanomial, shape, SQL aggregates of the match table, SPRT state);
- import: a child that only imports the report modules (its peak is the floor both start from).
It prints the median wall times, the ratio report/baseline (the target is ≤ 2) and each child's
peak resident memory (``ru_maxrss``). Results go to ``bench/results/reports.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from engines.core import Ending

RESULTS = Path(__file__).resolve().parent / "results"
ENDINGS = (Ending.NORMAL, Ending.REPETITION, Ending.NO_CAPTURE, Ending.MAX_PLIES)

CHILD = {
    "baseline": """
import pandas as pd
from sqlalchemy import text
from storage.db import get_engine
engine = get_engine(URL)
t0 = time.perf_counter()
frame = pd.read_sql(text("SELECT * FROM seat_result WHERE batch_id = :b"), engine,
                    params={"b": BATCH})
elapsed = time.perf_counter() - t0
rows = len(frame)
""",
    "report": """
from analysis.report import build_report
from storage.db import get_engine
engine = get_engine(URL)
t0 = time.perf_counter()
report = build_report(engine, BATCH)
elapsed = time.perf_counter() - t0
rows = report["batch"]["matches_done"]
""",
    "import": """
import analysis.report, pandas
from storage.db import get_engine
engine = get_engine(URL)
elapsed = 0.0
rows = 0
""",
}


def make_batch(path: Path, matches: int, seed: int = 1) -> tuple[str, str]:
    """A migrated SQLite file holding one batch of ``matches`` synthetic two-player matches."""
    from storage import crud
    from storage.db import dispose_engine, get_engine, upgrade
    from storage.models import BatchPlan

    url = f"sqlite:///{path}"
    upgrade(url)
    plan = BatchPlan(
        game="alquerque",
        players=2,
        options={},
        agents=[{"name": "hard"}, {"name": "easy"}],
        labels=["hard", "easy"],
        matches=matches,
        seed=seed,
        seat_policy="rotate",
        chunk_size=5000,
        max_plies=200,
        stop_rule={
            "type": "sprt",
            "agents": ["hard", "easy"],
            "elo0": 0.0,
            "elo1": 5.0,
            "alpha": 0.05,
            "beta": 0.05,
        },
    )
    batch = crud.create_batch(get_engine(url), plan=plan)
    dispose_engine(url)

    rng = np.random.default_rng(seed)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA journal_mode=WAL")
    step = 100_000
    for start in range(0, matches, step):
        idx = np.arange(start, min(start + step, matches))
        u = rng.random(idx.size)
        # Seat 0 wins 52 %, draws 15 %; "hard" (agent 0) gains a little on top.
        hard_seat = idx % 2
        seat0 = np.where(u < 0.15, 0.5, np.where(u < 0.15 + 0.85 * 0.54, 1.0, 0.0))
        plies = rng.integers(20, 121, idx.size)
        ends = rng.integers(0, 4, idx.size)
        match_rows = [
            (
                batch.id,
                int(i),
                int(i) * 7919,
                1,
                int(p),
                ENDINGS[int(e)] if w == 0.5 else Ending.NORMAL,
                0.01,
                "",
                "{}",
                None,
            )
            for i, p, e, w in zip(idx, plies, ends, seat0, strict=True)
        ]
        conn.executemany(
            "INSERT INTO match (batch_id, match_index, seed, ok, plies, ended_by, duration, "
            "moves, stats, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            match_rows,
        )
        seat_rows = []
        for i, w0, hs in zip(idx, seat0, hard_seat, strict=True):
            shares = (float(w0), 1.0 - float(w0))
            ranks = (1, 1) if w0 == 0.5 else ((1, 2) if w0 == 1 else (2, 1))
            for s in (0, 1):
                agent = 0 if s == hs else 1
                seat_rows.append(
                    (
                        batch.id,
                        int(i),
                        s,
                        ("hard", "easy")[agent],
                        agent,
                        shares[s],
                        shares[s],
                        ranks[s],
                    )
                )
        conn.executemany(
            "INSERT INTO seat_result (batch_id, match_index, seat, agent, agent_index, points, "
            "win_share, rank) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            seat_rows,
        )
        conn.commit()
    conn.execute("UPDATE batch SET status = 'done' WHERE id = ?", (batch.id,))
    conn.commit()
    conn.close()
    return url, batch.id


def run_child(kind: str, url: str, batch_id: str) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter; its wall time, rows and peak RSS (MiB)."""
    code = (
        "import json, resource, time\n"
        f"URL = {url!r}\nBATCH = {batch_id!r}\n"
        + CHILD[kind]
        + "print(json.dumps({'elapsed': elapsed, 'rows': rows, "
        "'peak_mib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Build the data, measure, print and save the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        url, batch_id = make_batch(Path(tmp) / "bench.db", args.matches)
        insert_s = time.perf_counter() - t0
        print(
            f"inserted {args.matches:,} matches ({2 * args.matches:,} seat rows) "
            f"in {insert_s:.1f} s"
        )
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in CHILD}
        for r in range(args.rounds):
            for kind in CHILD:
                runs[kind].append(run_child(kind, url, batch_id))
            print(
                f"round {r + 1}: baseline {runs['baseline'][-1]['elapsed']:.2f} s, "
                f"report {runs['report'][-1]['elapsed']:.2f} s"
            )

    base = statistics.median(x["elapsed"] for x in runs["baseline"])
    rep = statistics.median(x["elapsed"] for x in runs["report"])
    peaks = {k: max(x["peak_mib"] for x in v) for k, v in runs.items()}
    result = {
        "matches": args.matches,
        "seat_rows": runs["baseline"][0]["rows"],
        "rounds": args.rounds,
        "insert_seconds": insert_s,
        "baseline_read_seconds": base,
        "report_seconds": rep,
        "ratio_report_to_read": rep / base,
        "peak_mib": peaks,
        "machine": platform.platform(),
        "python": platform.python_version(),
    }
    print(f"pandas read of the seat table: {base:.2f} s (median of {args.rounds})")
    print(f"full report:                   {rep:.2f} s")
    print(f"ratio report / read:           {rep / base:.2f}  (target ≤ 2)")
    print("peak memory (MiB): " + ", ".join(f"{k} {v:.0f}" for k, v in peaks.items()))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "reports.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
