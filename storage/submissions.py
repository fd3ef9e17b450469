"""Storing a submitted batch atomically, and answering a retried submission with its batch.

``submit_batch`` writes in one transaction the batch, its start request (an ``outbox`` row)
and, when the client sent an ``Idempotency-Key``, the key with a digest of the request. So a
submission is either wholly stored (and will be started: the outbox row stays until the start
message is delivered) or not stored at all. The key's primary key (scope, key) is the unique
constraint that turns two concurrent submissions with one key into one batch: the second
insert fails, its transaction rolls back, and it answers with the first one's batch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, Table, delete, select
from sqlalchemy.exc import IntegrityError

from storage.crud import get_batch
from storage.db import session
from storage.models import (
    Batch,
    BatchPlan,
    BatchStatus,
    IdempotencyKey,
    ImportKey,
    Outbox,
    SQLModel,
    utcnow,
)
from storage.usertext import matches_nothing

OUTBOX: Table = SQLModel.metadata.tables[Outbox.__tablename__]
IDEMPOTENCY_KEY: Table = SQLModel.metadata.tables[IdempotencyKey.__tablename__]
IMPORT_KEY: Table = SQLModel.metadata.tables[ImportKey.__tablename__]


class IdempotencyConflictError(ValueError):
    """The key was used before with a different request body."""


@dataclass(frozen=True)
class Idempotency:
    """A client's key for one submission: ``scope`` (whose key), ``key``, request digest.

    ``definition``: a digest of the batch the request plans (the study content key's,
    ``storage.models.definition_key``). A key remembered for an imported batch
    (:func:`remember_submission`, which has no request body to digest) holds that digest
    instead, and takes any body that plans the same batch.
    """

    scope: str
    key: str
    fingerprint: str
    definition: str | None = None


@dataclass(frozen=True)
class Submission:
    """The stored batch; ``created`` False when an earlier submission with the key made it."""

    batch: Batch
    created: bool


def fingerprint(body: Mapping[str, Any]) -> str:
    """A digest of a request body that ignores key order and spacing."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def key_scope(api_key: str | None) -> str:
    """Whose keys these are: a digest of the API key presented, empty when there is none."""
    return hashlib.sha256(api_key.encode()).hexdigest() if api_key else ""


def earlier_submission(engine: Engine, idem: Idempotency) -> Submission | None:
    """The batch an earlier submission with this key made, if any (same body required)."""
    with engine.connect() as conn:
        row = conn.execute(
            select(IDEMPOTENCY_KEY.c.fingerprint, IDEMPOTENCY_KEY.c.batch_id).where(
                IDEMPOTENCY_KEY.c.scope == idem.scope, IDEMPOTENCY_KEY.c.key == idem.key
            )
        ).first()
    if row is None:
        return None
    if row.fingerprint not in {idem.fingerprint, idem.definition}:
        raise IdempotencyConflictError(
            f"Idempotency-Key {idem.key!r} was already used for batch {row.batch_id} with a "
            "different request body; send a new key for a new batch"
        )
    batch = get_batch(engine, row.batch_id)
    assert batch is not None  # the key's foreign key keeps its batch
    return Submission(batch, created=False)


def batch_for_key(engine: Engine, scope: str, key: str) -> Batch | None:
    """The batch a submission with this key made, whatever its body, else the batch an import
    with this key brought in (how a study finds its batches again); None if there is none."""
    if matches_nothing(key):
        return None
    with engine.connect() as conn:
        batch_id = conn.execute(
            select(IDEMPOTENCY_KEY.c.batch_id).where(
                IDEMPOTENCY_KEY.c.scope == scope, IDEMPOTENCY_KEY.c.key == key
            )
        ).scalar()
    if batch_id is None:
        batch_id = imported_for_key(engine, scope, key)
    return None if batch_id is None else get_batch(engine, batch_id)


def imported_for_key(engine: Engine, scope: str, key: str) -> str | None:
    """The id of the batch an import with this key brought in; None if there is none."""
    if matches_nothing(key):
        return None
    with engine.connect() as conn:
        found = conn.execute(
            select(IMPORT_KEY.c.batch_id).where(
                IMPORT_KEY.c.scope == scope, IMPORT_KEY.c.key == key
            )
        ).scalar()
    return None if found is None else str(found)


def remember_import(
    conn: Connection, *, scope: str, key: str, definition: str, batch_id: str
) -> None:
    """Make the import key (``scope``, ``key``) name ``batch_id``, in the caller's transaction
    (the import's own), unless it names it already; two concurrent imports with one key
    meet at its primary key."""
    known = conn.execute(
        select(IMPORT_KEY.c.batch_id).where(IMPORT_KEY.c.scope == scope, IMPORT_KEY.c.key == key)
    ).scalar()
    if known is None:
        conn.execute(
            IMPORT_KEY.insert().values(
                scope=scope, key=key, definition=definition, batch_id=batch_id, created_at=utcnow()
            )
        )


def key_holders(engine: Engine, batch_id: str) -> set[str]:
    """The scopes (whose API keys) of every key, submitted or imported, naming the batch."""
    with engine.connect() as conn:
        found = set(
            conn.execute(
                select(IDEMPOTENCY_KEY.c.scope).where(IDEMPOTENCY_KEY.c.batch_id == batch_id)
            ).scalars()
        )
        found.update(
            conn.execute(
                select(IMPORT_KEY.c.scope).where(IMPORT_KEY.c.batch_id == batch_id)
            ).scalars()
        )
    return found


def remember_submission(engine: Engine, idem: Idempotency, batch_id: str) -> str:
    """Make ``idem`` name the stored batch ``batch_id`` (one brought in from elsewhere, as an
    imported archive), unless the key names a batch already: the batch id it names."""
    with engine.begin() as conn:
        known = conn.execute(
            select(IDEMPOTENCY_KEY.c.batch_id).where(
                IDEMPOTENCY_KEY.c.scope == idem.scope, IDEMPOTENCY_KEY.c.key == idem.key
            )
        ).scalar()
        if known is not None:
            return str(known)
        conn.execute(
            IDEMPOTENCY_KEY.insert().values(
                scope=idem.scope,
                key=idem.key,
                fingerprint=idem.fingerprint,
                batch_id=batch_id,
                created_at=utcnow(),
            )
        )
    return batch_id


def submit_batch(
    engine: Engine,
    *,
    plan: BatchPlan,
    idempotency: Idempotency | None = None,
    start_request: bool = True,
) -> Submission:
    """Store a plan as a queued batch with its start request, in one transaction.

    With ``idempotency``, a key seen before returns that key's batch (``created`` False), and
    ``IdempotencyConflictError`` is raised when the body differs from the first one. Without
    ``start_request`` no outbox row is written: the caller plays the batch itself (a study
    run on this machine), so no service may start it too.
    """
    if idempotency is not None:
        earlier = earlier_submission(engine, idempotency)
        if earlier is not None:
            return earlier
    batch = Batch(**plan.model_dump(), status=BatchStatus.QUEUED)
    now = utcnow()
    try:
        with session(engine) as s:
            s.add(batch)
            if start_request:
                s.add(Outbox(batch_id=batch.id, created_at=now))
            if idempotency is not None:
                s.add(
                    IdempotencyKey(
                        scope=idempotency.scope,
                        key=idempotency.key,
                        fingerprint=idempotency.fingerprint,
                        batch_id=batch.id,
                        created_at=now,
                    )
                )
            s.commit()
            s.refresh(batch)
    except IntegrityError:
        # A concurrent submission with the same key committed first: answer with its batch.
        if idempotency is None:
            raise
        earlier = earlier_submission(engine, idempotency)
        if earlier is None:
            raise
        return earlier
    return Submission(batch, created=True)


def request_start(engine: Engine, batch_id: str) -> None:
    """Store a start request for a batch stored without one (an imported batch to finish
    here), unless it has one already."""
    with engine.begin() as conn:
        waiting = conn.execute(
            select(OUTBOX.c.batch_id).where(OUTBOX.c.batch_id == batch_id)
        ).first()
        if waiting is None:
            conn.execute(OUTBOX.insert().values(batch_id=batch_id, created_at=utcnow()))


def pending_starts(engine: Engine, *, limit: int = 100) -> list[str]:
    """Ids of batches whose start request is still waiting for delivery, oldest first."""
    with engine.connect() as conn:
        return list(
            conn.execute(
                select(OUTBOX.c.batch_id)
                .order_by(OUTBOX.c.created_at, OUTBOX.c.batch_id)
                .limit(limit)
            ).scalars()
        )


def start_delivered(engine: Engine, batch_id: str) -> None:
    """Forget a batch's start request: its start message is with whoever plays it."""
    with engine.begin() as conn:
        conn.execute(delete(OUTBOX).where(OUTBOX.c.batch_id == batch_id))
