"""Rows for the storage tests: a small batch plan, its match records and the rows a batch holds."""

from __future__ import annotations

from sqlalchemy import func, select

from storage import crud
from storage.models import BatchPlan
from storage.records import MatchRecord, SeatRecord


def make_plan(matches: int = 10, chunk_size: int = 4, **overrides: object) -> BatchPlan:
    values: dict = {
        "game": "alquerque",
        "players": 2,
        "options": {},
        "agents": [{"name": "random"}, {"name": "random"}],
        "labels": ["random", "random#2"],
        "matches": matches,
        "seed": 7,
        "seat_policy": "rotate",
        "chunk_size": chunk_size,
        "max_plies": 200,
    }
    values.update(overrides)
    return BatchPlan(**values)


def record(i: int, ok: bool = True) -> MatchRecord:
    seats = [
        SeatRecord(0, "random", i % 2, 3.0, 1.0, 1),
        SeatRecord(1, "random#2", 1 - i % 2, 1.0, 0.0, 2),
    ]
    return MatchRecord(
        match_index=i,
        seed=1000 + i,
        ok=ok,
        plies=20 + i if ok else 0,
        ended_by="normal" if ok else "error",
        moves=("a1-b2", "c3xd4") if ok else (),
        stats={"per_seat": [{"captures": i}, {"captures": 0}]} if ok else {},
        duration=0.01,
        error=None if ok else "RuntimeError: boom",
        seats=seats if ok else [],
    )


def counts(engine, batch_id: str) -> tuple[int, int, int]:
    with engine.connect() as conn:
        return tuple(  # type: ignore[return-value]
            conn.execute(select(func.count()).where(t.c.batch_id == batch_id)).scalar_one()
            for t in (crud.CHUNK, crud.MATCH, crud.SEAT_RESULT)
        )


def wait_for_a_chunk(engine, proc, *, limit: float = 120.0) -> int:
    """Chunk rows stored once the first appears, while ``proc`` (the process writing them) runs;
    polled until then or until ``proc`` ends or ``limit`` seconds pass (0 rows then)."""
    import time

    deadline = time.monotonic() + limit
    written = 0
    while time.monotonic() < deadline and proc.poll() is None:
        with engine.connect() as conn:
            written = conn.execute(select(func.count()).select_from(crud.CHUNK)).scalar_one()
        if written >= 1:
            break
        time.sleep(0.02)
    return written
