"""Storing a submission: batch, start request and idempotency key in one transaction, one
batch per key even when submissions with that key race, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import func, select

from storage import submissions
from storage.crud import BATCH
from storage.db import get_engine
from storage.settings import Settings
from storage.submissions import (
    IDEMPOTENCY_KEY,
    OUTBOX,
    Idempotency,
    IdempotencyConflictError,
    fingerprint,
    key_scope,
)
from workers.batches import plan_batch

BODY = {"game": "alquerque", "agents": ["random"], "matches": 6}


def plan():  # type: ignore[no-untyped-def]
    return plan_batch(
        settings=Settings(),
        game="alquerque",
        players=None,
        options={},
        agents=["random"],
        matches=6,
        seed=None,
        seat_policy=None,
        chunk_size=3,
        max_plies=None,
    )


def count(url: str, table) -> int:  # type: ignore[no-untyped-def]
    with get_engine(url).connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def test_fingerprints_ignore_order_and_scopes_separate_api_keys() -> None:
    assert fingerprint({"a": 1, "b": [1, 2]}) == fingerprint({"b": [1, 2], "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
    assert key_scope(None) == "" and key_scope("k1") != key_scope("k2") != ""
    assert "k1" not in key_scope("k1")  # the key itself is never stored


def test_a_submission_stores_batch_start_request_and_key_together(db_url: str) -> None:
    idem = Idempotency(scope="", key="k", fingerprint=fingerprint(BODY))
    first = submissions.submit_batch(get_engine(db_url), plan=plan(), idempotency=idem)
    assert first.created
    assert submissions.pending_starts(get_engine(db_url)) == [first.batch.id]
    again = submissions.submit_batch(get_engine(db_url), plan=plan(), idempotency=idem)
    assert not again.created and again.batch.id == first.batch.id
    assert again.batch.seed == first.batch.seed
    with pytest.raises(IdempotencyConflictError, match=first.batch.id):
        submissions.submit_batch(
            get_engine(db_url),
            plan=plan(),
            idempotency=Idempotency(scope="", key="k", fingerprint=fingerprint({"other": 1})),
        )
    other_scope = Idempotency(scope=key_scope("someone"), key="k", fingerprint=idem.fingerprint)
    elsewhere = submissions.submit_batch(get_engine(db_url), plan=plan(), idempotency=other_scope)
    assert elsewhere.created
    assert count(db_url, BATCH) == 2 and count(db_url, IDEMPOTENCY_KEY) == 2
    submissions.start_delivered(get_engine(db_url), first.batch.id)
    assert count(db_url, OUTBOX) == 1


def test_concurrent_submissions_with_one_key_make_one_batch(db_url: str) -> None:
    engine = get_engine(db_url)
    idem = Idempotency(scope="", key="race", fingerprint=fingerprint(BODY))
    racers = 8
    barrier = threading.Barrier(racers)

    def submit(_: int) -> submissions.Submission:
        each = plan()  # validated before the race, as the route does
        barrier.wait()
        return submissions.submit_batch(engine, plan=each, idempotency=idem)

    with ThreadPoolExecutor(racers) as pool:
        results = list(pool.map(submit, range(racers)))
    assert len({r.batch.id for r in results}) == 1
    assert sum(r.created for r in results) == 1
    assert count(db_url, BATCH) == 1 and count(db_url, OUTBOX) == 1
    assert count(db_url, IDEMPOTENCY_KEY) == 1
