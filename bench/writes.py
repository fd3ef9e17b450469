"""Write-path benchmark: how many match rows a second ``storage.crud.write_chunk`` stores.

Synthetic match records (two seats each, a 30-move list, a small stats dict) are written in
chunks through the runner's write path, on a fresh SQLite file and on a throwaway PostgreSQL
database. Two baselines are measured in the same run on the same rows:

- raw: the DB-API driver's ``executemany`` of the identical rows (sqlite3 / psycopg), the
  floor of what any layer above it can reach;
- orm: one SQLModel object per row, added to a session and committed.

Usage: python -m bench.writes [--matches 50000] [--chunk 2000] [--no-pg] [--pg SERVER_URL]
Results are printed and written to bench/results/writes.json.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

from storage import crud
from storage.db import dispose_engine, get_engine, session, upgrade
from storage.models import BatchPlan, Match, SeatResult
from storage.records import MatchRecord, SeatRecord

MOVES = tuple(f"{c}{r}-{c}{r + 1}" for c in "abcde" for r in range(1, 7))


def synthetic_records(count: int) -> list[MatchRecord]:
    """Match records shaped like real two-player results."""
    out = []
    for i in range(count):
        first = i % 2
        out.append(
            MatchRecord(
                match_index=i,
                seed=(i * 2654435761) % (2**62),
                ok=i % 97 != 0,
                plies=len(MOVES),
                ended_by="normal",
                moves=MOVES,
                stats={"per_seat": [{"captures": i % 7}, {"captures": i % 5}], "longest": 3},
                duration=0.0123,
                error=None if i % 97 else "RuntimeError: synthetic",
                seats=[
                    SeatRecord(0, "hard", first, 5.0, 1.0 - first, 1 + first),
                    SeatRecord(1, "easy", 1 - first, 3.0, float(first), 2 - first),
                ],
            )
        )
    return out


def new_batch(url: str, matches: int, chunk: int) -> str:
    plan = BatchPlan(
        game="alquerque",
        players=2,
        options={},
        agents=[{"name": "hard"}, {"name": "easy"}],
        labels=["hard", "easy"],
        matches=matches,
        seed=1,
        seat_policy="rotate",
        chunk_size=chunk,
        max_plies=200,
    )
    return crud.create_batch(get_engine(url), plan=plan).id


def timed(fn: Callable[[], None]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def write_path(url: str, records: list[MatchRecord], chunk: int) -> float:
    """Seconds for write_chunk over all records, chunk by chunk."""
    engine = get_engine(url)
    batch_id = new_batch(url, len(records), chunk)

    def run() -> None:
        for start in range(0, len(records), chunk):
            part = records[start : start + chunk]
            crud.write_chunk(
                engine,
                batch_id=batch_id,
                start=start,
                stop=start + len(part),
                records=part,
                duration=0.0,
                worker="bench",
            )

    return timed(run)


def orm_path(url: str, records: list[MatchRecord], chunk: int) -> float:
    """Seconds for one ORM object per row, one commit per chunk."""
    engine = get_engine(url)
    batch_id = new_batch(url, len(records), chunk)

    def run() -> None:
        for start in range(0, len(records), chunk):
            with session(engine) as s:
                for r in records[start : start + chunk]:
                    s.add(
                        Match(
                            batch_id=batch_id,
                            match_index=r.match_index,
                            seed=r.seed,
                            ok=r.ok,
                            plies=r.plies,
                            ended_by=r.ended_by,
                            duration=r.duration,
                            moves=" ".join(r.moves),
                            stats=r.stats,
                            error=r.error,
                        )
                    )
                    for seat in r.seats:
                        s.add(
                            SeatResult(
                                batch_id=batch_id,
                                match_index=r.match_index,
                                seat=seat.seat,
                                agent=seat.agent_label,
                                agent_index=seat.agent_index,
                                points=seat.points,
                                win_share=seat.win_share,
                                rank=seat.rank,
                            )
                        )
                s.commit()

    return timed(run)


MATCH_SQL = (
    "INSERT INTO match (batch_id, match_index, seed, ok, plies, ended_by, duration, moves, "
    "stats, error) VALUES ({p})"
)
SEAT_SQL = (
    "INSERT INTO seat_result (batch_id, match_index, seat, agent, agent_index, points, "
    "win_share, rank) VALUES ({p})"
)


def raw_sqlite(url: str, records: list[MatchRecord], chunk: int) -> float:
    """Seconds for sqlite3 executemany of the same rows, one transaction per chunk."""
    batch_id = new_batch(url, len(records), chunk)
    dispose_engine(url)
    path = url.removeprefix("sqlite:///")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    m_sql, s_sql = MATCH_SQL.format(p=",".join("?" * 10)), SEAT_SQL.format(p=",".join("?" * 8))

    def run() -> None:
        for start in range(0, len(records), chunk):
            m, s = crud.match_rows(batch_id, records[start : start + chunk])
            with conn:
                conn.executemany(m_sql, m)
                conn.executemany(s_sql, s)

    try:
        return timed(run)
    finally:
        conn.close()


def raw_postgres(url: str, records: list[MatchRecord], chunk: int) -> float:
    """Seconds for psycopg executemany of the same rows, one transaction per chunk."""
    import psycopg

    batch_id = new_batch(url, len(records), chunk)
    conninfo = url.replace("postgresql+psycopg://", "postgresql://")
    m_sql, s_sql = (
        MATCH_SQL.format(p=",".join(["%s"] * 10)),
        SEAT_SQL.format(p=",".join(["%s"] * 8)),
    )
    with psycopg.connect(conninfo) as conn:

        def run() -> None:
            for start in range(0, len(records), chunk):
                m, s = crud.match_rows(batch_id, records[start : start + chunk])
                with conn.transaction(), conn.cursor() as cur:
                    cur.executemany(m_sql, m)
                    cur.executemany(s_sql, s)

        return timed(run)


def measure(
    urls: tuple[str, str, str], records: list[MatchRecord], chunk: int, raw: Callable[..., float]
) -> dict:
    """Rates of the three paths, each on its own database URL (they may be the same one)."""
    path_url, raw_url, orm_url = urls
    for url in set(urls):
        upgrade(url)
    orm_count = min(len(records), 10_000)  # the ORM path is slow; a sample suffices
    seconds = {
        "write_chunk": write_path(path_url, records, chunk),
        "raw": raw(raw_url, records, chunk),
        "orm": orm_path(orm_url, records[:orm_count], chunk),
    }
    rates = {
        "write_chunk": len(records) / seconds["write_chunk"],
        "raw": len(records) / seconds["raw"],
        "orm": orm_count / seconds["orm"],
    }
    return {
        "match_rows_per_s": {k: round(v) for k, v in rates.items()},
        "seat_rows_per_match": 2,
        "write_chunk_vs_raw": round(rates["write_chunk"] / rates["raw"], 3),
        "write_chunk_vs_orm": round(rates["write_chunk"] / rates["orm"], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=50_000)
    parser.add_argument("--chunk", type=int, default=2_000)
    parser.add_argument("--no-pg", action="store_true", help="skip PostgreSQL")
    parser.add_argument("--pg", default="postgresql+psycopg://postgres@127.0.0.1:5432")
    args = parser.parse_args()
    records = synthetic_records(args.matches)
    results: dict[str, Any] = {"matches": args.matches, "chunk": args.chunk}

    with tempfile.TemporaryDirectory() as folder:
        # Each path gets its own file so no path pays for another's rows.
        path, raw, orm = (f"sqlite:///{folder}/{name}.db" for name in ("path", "raw", "orm"))
        results["sqlite"] = measure((path, raw, orm), records, args.chunk, raw_sqlite)

    if not args.no_pg:
        admin = create_engine(f"{args.pg}/test", isolation_level="AUTOCOMMIT")
        name = f"pt_bench_{uuid.uuid4().hex[:8]}"
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        url = f"{args.pg}/{name}"
        try:
            results["postgresql"] = measure((url, url, url), records, args.chunk, raw_postgres)
        finally:
            dispose_engine(url)
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()

    for dialect in ("sqlite", "postgresql"):
        if dialect in results:
            r = results[dialect]
            rates = r["match_rows_per_s"]
            print(
                f"{dialect:10s} write_chunk {rates['write_chunk']:>8,} match rows/s "
                f"(+2 seat rows each) | raw driver {rates['raw']:>8,}/s | "
                f"ORM objects {rates['orm']:>7,}/s | "
                f"write_chunk/raw {r['write_chunk_vs_raw']:.2f}x, "
                f"write_chunk/ORM {r['write_chunk_vs_orm']:.1f}x"
            )
    out = Path(__file__).resolve().parent / "results" / "writes.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
