"""Whatever order and however often chunks are delivered, each index is stored exactly once."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from storage_rows import make_plan, record

from storage import crud
from storage.db import get_engine

MATCHES, CHUNK = 10, 3
RANGES = crud.chunk_ranges(MATCHES, CHUNK)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(deliveries=st.lists(st.sampled_from(RANGES), min_size=1, max_size=12))
def test_any_delivery_order_stores_each_index_once(
    migrated_sqlite_url: str, deliveries: list[tuple[int, int]]
) -> None:
    engine = get_engine(migrated_sqlite_url)
    batch = crud.create_batch(engine, plan=make_plan(matches=MATCHES, chunk_size=CHUNK))
    written = [
        crud.write_chunk(
            engine,
            batch_id=batch.id,
            start=start,
            stop=stop,
            records=[record(i, ok=i % 4 != 1) for i in range(start, stop)],
            duration=0.0,
        )
        for start, stop in deliveries
    ]
    distinct = sorted(set(deliveries))
    assert sum(written) == len(distinct)  # only the first delivery of each chunk writes
    with engine.connect() as conn:
        indices = list(
            conn.execute(
                select(crud.MATCH.c.match_index).where(crud.MATCH.c.batch_id == batch.id)
            ).scalars()
        )
        seats = conn.execute(
            select(func.count()).where(crud.SEAT_RESULT.c.batch_id == batch.id)
        ).scalar_one()
    expected = sorted(i for start, stop in distinct for i in range(start, stop))
    assert sorted(indices) == expected
    assert seats == 2 * sum(1 for i in expected if i % 4 != 1)
    p = crud.progress(engine, batch.id)
    assert p.done + p.failed == len(expected)
    assert crud.missing_chunks(engine, batch) == [r for r in RANGES if r not in distinct]
