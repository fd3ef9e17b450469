"""Batches and chunk writes: idempotency, progress, status transitions, on both dialects."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from storage_rows import counts, make_plan, record

from storage import crud
from storage.db import get_engine
from storage.models import BatchStatus


def test_rewriting_a_chunk_changes_nothing(db_url: str) -> None:
    engine = get_engine(db_url)
    batch = crud.create_batch(engine, plan=make_plan())
    records = [record(i, ok=i != 2) for i in range(4)]
    args = {"batch_id": batch.id, "start": 0, "stop": 4, "duration": 0.5, "worker": "w1"}
    assert crud.write_chunk(engine, records=records, **args) is True
    assert counts(engine, batch.id) == (1, 4, 6)
    # The same chunk again, even with different contents, is ignored as a whole.
    changed = [record(i) for i in range(4)]
    assert crud.write_chunk(engine, records=changed, **args) is False
    assert counts(engine, batch.id) == (1, 4, 6)
    p = crud.progress(engine, batch.id)
    assert (p.done, p.failed, p.chunks_written, p.chunks_total) == (3, 1, 1, 3)
    assert crud.first_error(engine, batch.id) == "RuntimeError: boom"
    with engine.connect() as conn:
        stored = conn.execute(
            select(crud.MATCH.c.moves, crud.MATCH.c.stats, crud.MATCH.c.seed).where(
                crud.MATCH.c.batch_id == batch.id, crud.MATCH.c.match_index == 3
            )
        ).one()
    assert stored.moves == "a1-b2\nc3xd4\n"  # each move newline-ended (moves may hold spaces)
    assert stored.stats == {"per_seat": [{"captures": 3}, {"captures": 0}]}
    assert stored.seed == 1003


def test_overlapping_ranges_are_refused_whole(db_url: str) -> None:
    engine = get_engine(db_url)
    batch = crud.create_batch(engine, plan=make_plan(matches=12, chunk_size=0))

    def write(start: int, stop: int) -> bool:
        records = [record(i) for i in range(start, stop)]
        return crud.write_chunk(
            engine, batch_id=batch.id, start=start, stop=stop, records=records, duration=0.1
        )

    assert write(2, 6)
    # Ranges that reach into [2, 6) from either side, contain it, or lie inside it.
    for start, stop in [(0, 3), (5, 8), (0, 12), (3, 4), (2, 5)]:
        assert not write(start, stop), (start, stop)
    assert write(0, 2) and write(6, 9)  # neighbours touching it are fine
    with engine.connect() as conn:
        indices = conn.execute(
            select(crud.MATCH.c.match_index).where(crud.MATCH.c.batch_id == batch.id)
        ).scalars()
        assert sorted(indices) == list(range(9))
    assert counts(engine, batch.id) == (3, 9, 18)
    assert crud.progress(engine, batch.id).finished_matches == 9
    assert crud.gaps(engine, batch) == [(9, 12)]
    assert crud.range_written(engine, batch.id, 8, 10)
    assert not crud.range_written(engine, batch.id, 9, 12)


def test_concurrent_overlapping_writes_store_one_range(db_url: str) -> None:
    """Eight threads write eight different ranges that all cover match 8: exactly one wins."""
    import threading

    engine = get_engine(db_url)
    batch = crud.create_batch(engine, plan=make_plan(matches=20, chunk_size=0))
    ranges = [(8 - k, 9 + k) for k in range(8)]
    barrier = threading.Barrier(len(ranges))
    results: dict[tuple[int, int], bool] = {}

    def write(start: int, stop: int) -> None:
        records = [record(i) for i in range(start, stop)]
        barrier.wait()
        results[(start, stop)] = crud.write_chunk(
            engine, batch_id=batch.id, start=start, stop=stop, records=records, duration=0.1
        )

    threads = [threading.Thread(target=write, args=r) for r in ranges]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [r for r, won in results.items() if won]
    assert len(winners) == 1
    start, stop = winners[0]
    assert counts(engine, batch.id) == (1, stop - start, 2 * (stop - start))
    assert crud.written_ranges(engine, batch.id) == [winners[0]]


def test_write_chunk_rejects_records_outside_the_range(migrated_sqlite_url: str) -> None:
    engine = get_engine(migrated_sqlite_url)
    batch = crud.create_batch(engine, plan=make_plan())
    with pytest.raises(ValueError, match="outside chunk"):
        crud.write_chunk(
            engine, batch_id=batch.id, start=0, stop=4, records=[record(5)], duration=0.0
        )
    assert counts(engine, batch.id) == (0, 0, 0)


def test_missing_chunks_follow_the_fixed_chunking(migrated_sqlite_url: str) -> None:
    engine = get_engine(migrated_sqlite_url)
    batch = crud.create_batch(engine, plan=make_plan(matches=10, chunk_size=4))
    assert crud.missing_chunks(engine, batch) == [(0, 4), (4, 8), (8, 10)]
    crud.write_chunk(
        engine,
        batch_id=batch.id,
        start=4,
        stop=8,
        records=[record(i) for i in range(4, 8)],
        duration=0.1,
    )
    assert crud.missing_chunks(engine, batch) == [(0, 4), (8, 10)]
    assert crud.chunk_exists(engine, batch.id, 4)
    assert not crud.chunk_exists(engine, batch.id, 0)


def test_missing_ranges_of_a_measured_batch_are_its_gaps(migrated_sqlite_url: str) -> None:
    engine = get_engine(migrated_sqlite_url)
    batch = crud.create_batch(engine, plan=make_plan(matches=30, chunk_size=0))
    assert crud.missing_chunks(engine, batch) == [(0, 30)]
    for start, stop in [(0, 1), (1, 9), (20, 27)]:
        records = [record(i) for i in range(start, stop)]
        crud.write_chunk(
            engine, batch_id=batch.id, start=start, stop=stop, records=records, duration=0.1
        )
    assert crud.missing_chunks(engine, batch) == [(9, 20), (27, 30)]
    progress = crud.progress(engine, batch.id)
    assert (progress.chunks_written, progress.finished_matches) == (3, 16)
    # 14 matches left at the 16 / 3 matches per chunk seen so far: 3 more chunks.
    assert progress.chunks_total == 3 + 3


def test_status_changes_are_conditional(db_url: str) -> None:
    engine = get_engine(db_url)
    batch = crud.create_batch(engine, plan=make_plan())
    active = {BatchStatus.QUEUED, BatchStatus.RUNNING}
    assert crud.set_status(engine, batch.id, BatchStatus.RUNNING, only_from={"queued"})
    assert not crud.set_status(engine, batch.id, BatchStatus.RUNNING, only_from={"queued"})
    assert crud.set_status(engine, batch.id, BatchStatus.DONE, only_from=active)
    assert not crud.set_status(engine, batch.id, BatchStatus.DONE, only_from=active)
    stored = crud.get_batch(engine, batch.id)
    assert stored is not None
    assert stored.status == "done"
    assert stored.started_at is not None and stored.finished_at is not None
    assert crud.cancel_batch(engine, batch.id).status == "done"  # finished stays finished
    with pytest.raises(ValueError, match="unknown batch status"):
        crud.set_status(engine, batch.id, "paused")


def test_cancel_and_list(migrated_sqlite_url: str) -> None:
    engine = get_engine(migrated_sqlite_url)
    first = crud.create_batch(engine, plan=make_plan())
    second = crud.create_batch(engine, plan=make_plan(game="alveoles"))
    assert crud.cancel_batch(engine, first.id).status == BatchStatus.CANCELLED
    assert [b.id for b in crud.list_batches(engine, status="cancelled")] == [first.id]
    assert [b.id for b in crud.list_batches(engine, game="alveoles")] == [second.id]
    assert {b.id for b in crud.list_batches(engine)} == {first.id, second.id}
    assert len(crud.list_batches(engine, limit=1)) == 1


def test_batch_ids_resolve_from_unique_prefixes(migrated_sqlite_url: str) -> None:
    engine = get_engine(migrated_sqlite_url)
    a = crud.create_batch(engine, plan=make_plan(id="abcd1111aaaa"))
    crud.create_batch(engine, plan=make_plan(id="abcd2222bbbb"))
    assert crud.resolve_batch_id(engine, "abcd1") == a.id
    assert crud.resolve_batch_id(engine, a.id) == a.id
    with pytest.raises(LookupError, match="ambiguous"):
        crud.resolve_batch_id(engine, "abcd")
    with pytest.raises(LookupError, match="at least 4"):
        crud.resolve_batch_id(engine, "ab")
    with pytest.raises(LookupError, match="no batch"):
        crud.resolve_batch_id(engine, "ffff")
    assert crud.get_batch(engine, "ffff") is None


def test_find_batch_and_find_match_raise_not_found_saying_why(migrated_sqlite_url: str) -> None:
    """What the faces call on a typed id: the batch, or ``NotFound`` with the reason."""
    from storage.queries import find_match

    engine = get_engine(migrated_sqlite_url)
    batch = crud.create_batch(engine, plan=make_plan(id="cafe1111aaaa", matches=2, chunk_size=2))
    crud.create_batch(engine, plan=make_plan(id="cafe2222bbbb"))
    assert crud.find_batch(engine, "cafe1").id == batch.id
    assert crud.find_batch(engine, batch.id).id == batch.id
    for typed, why in (("cafe", "ambiguous"), ("ca", "at least 4"), ("ffff", "no batch 'ffff'")):
        with pytest.raises(crud.NotFound, match=why):
            crud.find_batch(engine, typed)
    assert crud.write_chunk(
        engine, batch_id=batch.id, start=0, stop=1, records=[record(0)], duration=0.1
    )
    assert find_match(engine, batch.id, 0).match["match_index"] == 0
    with pytest.raises(crud.NotFound, match="match 1 of batch cafe1111aaaa is not stored"):
        find_match(engine, batch.id, 1)


def test_get_batch_takes_full_ids_only(migrated_sqlite_url: str) -> None:
    engine = get_engine(migrated_sqlite_url)
    batch = crud.create_batch(engine, plan=make_plan(id="beef0000cafe"))
    found = crud.get_batch(engine, "beef0000cafe")
    assert found is not None and found.id == batch.id
    for prefix in ("beef", "beef0", "beef0000caf"):
        assert crud.resolve_batch_id(engine, prefix) == batch.id  # what the edges call
        assert crud.get_batch(engine, prefix) is None
        with pytest.raises(crud.NotFound):
            crud.cancel_batch(engine, prefix)
    stored = crud.get_batch(engine, batch.id)
    assert stored is not None and stored.status == BatchStatus.QUEUED


def test_progress_of_an_unknown_batch_is_a_lookup_error(migrated_sqlite_url: str) -> None:
    with pytest.raises(LookupError):
        crud.progress(get_engine(migrated_sqlite_url), "nope")
