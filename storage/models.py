"""SQL tables. A batch is one row; its matches and per-seat results arrive chunk by chunk.

Idempotency lives in the keys: ``chunk`` (batch_id, start), ``match`` (batch_id, match_index)
and ``seat_result`` (batch_id, match_index, seat) are primary keys, and every write is an
insert that ignores rows already there, so a chunk delivered twice changes nothing. A
submission is one transaction too: the batch, its start request (``outbox``) and, when the
client sent one, its ``idempotency_key`` row.

A batch's columns are declared once: ``BatchBase`` holds those a request decides and
``BatchState`` adds where the batch is. The plan ``BatchPlan`` (a validated request ready to
store), the table ``Batch`` and the API's public model derive from them; nothing inherits from
a table model.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime
from enum import StrEnum, nonmember
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, DateTime, Index, Table, Text
from sqlmodel import Field, SQLModel
from sqlmodel.main import SQLModelConfig

AUTO_CHUNK_SIZE = 0
"""``Batch.chunk_size`` of a batch whose chunks the runner sizes (about ``chunk_seconds`` each,
measured from the batch's own chunks); any other value is a fixed size asked for."""


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_batch_id() -> str:
    """A fresh 12-hex-digit batch id."""
    return uuid.uuid4().hex[:12]


class BatchStatus(StrEnum):
    """Where a batch is. Stored as its text value; a plain string compares equal to it."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"
    # Not members: the statuses a batch never leaves, and every status.
    FINISHED = nonmember(frozenset({DONE, CANCELLED, FAILED}))
    ALL = nonmember(frozenset({QUEUED, RUNNING, DONE, CANCELLED, FAILED}))


class BatchBase(SQLModel):
    """The columns of a batch a request decides: what the plan, the table and the API share."""

    id: str = Field(default_factory=new_batch_id, primary_key=True, max_length=32)
    game: str = Field(index=True, max_length=40)
    players: int
    options: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)
    agents: list[dict[str, Any]] = Field(sa_type=JSON)
    """Normalised agent specs in base seat order (every parameter filled in)."""
    labels: list[str] = Field(sa_type=JSON)
    """One label per agent spec, unique within the batch (``hard``, ``random#2``)."""
    matches: int
    seed: int = Field(sa_type=BigInteger)
    seat_policy: str = Field(default="rotate", max_length=16)
    chunk_size: int = Field(description="Matches per task as asked; 0 when the workers size them.")
    """Matches per chunk, or ``AUTO_CHUNK_SIZE`` (0) when the runner sizes chunks."""
    max_plies: int
    time_control: str | None = Field(default=None, max_length=32)
    """The players' clocks, ``"60+1"`` (``engines.clock.TimeControl``): seconds a player for the
    game plus seconds added after each move; None for a batch without clocks."""
    stop_rule: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    variation: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    """How the batch's matches are made to differ (random or book openings, or player noise
    near the root); None for a batch that declares none, as every batch stored before."""


class BatchPlan(BatchBase):
    """A validated batch request, ready to store (``storage.crud.create_batch``)."""

    model_config = SQLModelConfig(frozen=True)


def definition_key(plan: BatchPlan) -> str:
    """The digest a batch is found again by: what decides the matches it plays (its plan
    without the batch id and the chunk size, which change how the work is cut, not what is
    played). A study batch's idempotency key holds it; so does an imported archive's."""
    body = plan.model_dump(mode="json", exclude={"id", "chunk_size"})
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


class BatchState(BatchBase):
    """A stored batch as it can be shown: the request plus where the batch is."""

    status: str = Field(default=BatchStatus.QUEUED, index=True, max_length=16)
    stopped_early: bool = False
    decision: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    error: str | None = Field(default=None, sa_type=Text)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    started_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    finished_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))


class Batch(BatchState, table=True):
    """A request for ``matches`` matches of one game between one agent spec per seat."""

    __tablename__ = "batch"

    run_started_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    """When the current run began (the latest move from queued to running, e.g. a resume)."""
    run_start_finished: int | None = None
    """Matches already finished when the current run began: rate and ETA count from there."""


class Chunk(SQLModel, table=True):
    """A written range ``[start, stop)`` of match indices; its row is committed with the matches
    it holds. Ranges of one batch never overlap; the matches no row covers are the missing ones."""

    __tablename__ = "chunk"

    batch_id: str = Field(foreign_key="batch.id", primary_key=True, max_length=32)
    start: int = Field(primary_key=True)
    stop: int
    done: int
    failed: int
    duration: float
    finished_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    worker: str | None = Field(default=None, max_length=200)
    # The stop rule's outcome counts over this chunk's matches, worst first (three used by the
    # trinomial model, five by the pentanomial one); null when the batch has no rule.
    stop_0: int | None = None
    stop_1: int | None = None
    stop_2: int | None = None
    stop_3: int | None = None
    stop_4: int | None = None


class Match(SQLModel, table=True):
    """One played (or failed) match; ``moves`` is its canonical move list, space-separated."""

    __tablename__ = "match"

    # No foreign key here or on seat_result: each of these rows is written in the same
    # transaction as its chunk row, whose foreign key already proves the batch exists, and the
    # per-row key check halved bulk-write throughput on PostgreSQL.
    batch_id: str = Field(primary_key=True, max_length=32)
    match_index: int = Field(primary_key=True)
    seed: int = Field(sa_column=Column(BigInteger, nullable=False))
    ok: bool = True
    plies: int = 0
    ended_by: str = Field(default="normal", max_length=32)
    duration: float = 0.0
    moves: str = Field(default="", sa_column=Column(Text, nullable=False))
    stats: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    first_seat: int | None = None
    """The seat that moved first (turn position 0); null for failed matches and for rows
    stored before turn positions were kept."""
    opening: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    """``storage.records.opening_key`` of the match's opening; null for failed matches and for
    rows stored before it was kept."""


class SeatResult(SQLModel, table=True):
    """One seat of one match: who sat there and how they did."""

    __tablename__ = "seat_result"
    __table_args__ = (Index("ix_seat_result_batch_agent", "batch_id", "agent"),)

    batch_id: str = Field(primary_key=True, max_length=32)
    match_index: int = Field(primary_key=True)
    seat: int = Field(primary_key=True)
    agent: str = Field(max_length=200)
    """The agent's batch label."""
    agent_index: int
    """Position of the agent's spec in ``Batch.agents``."""
    points: float
    """Game points (``State.scores()``): a margin, never a tie-break for the result."""
    win_share: float
    """The game result (``State.returns()``): winners split 1.0, a draw shares it."""
    rank: int
    """Placing for display, 1 = best: by result, then by points. It breaks a drawn game on
    points, so it is not the result: every head-to-head figure reads ``win_share``."""
    move_ms: list[float] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    """In a batch with clocks (``time_control``), the milliseconds each of this seat's moves
    took, in order (a seat that lost on time ends with the move that ran out); null otherwise."""


class Outbox(SQLModel, table=True):
    """A batch's start request not yet handed to whoever plays it.

    Written in the transaction that stores the batch and deleted once the start message is
    with the broker (or the local runner): a submission accepted while the broker is down is
    delivered by the sweeper when it is back, never lost and never half-stored.
    """

    __tablename__ = "outbox"

    batch_id: str = Field(foreign_key="batch.id", primary_key=True, max_length=32)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class IdempotencyKey(SQLModel, table=True):
    """The batch a client's ``Idempotency-Key`` made, so a retried submission returns it.

    The primary key (scope, key) is the unique constraint that makes two concurrent
    submissions with one key store one batch. ``scope`` separates API keys (a digest of the
    key, empty when the server has none); ``fingerprint`` is a digest of the request body, so
    the same key with a different body can be refused.
    """

    __tablename__ = "idempotency_key"

    scope: str = Field(primary_key=True, max_length=64)
    key: str = Field(primary_key=True, max_length=255)
    fingerprint: str = Field(max_length=64)
    batch_id: str = Field(foreign_key="batch.id", max_length=32)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class ImportKey(SQLModel, table=True):
    """The batch an import sent with an ``Idempotency-Key`` brought in, kept apart from the
    submissions' keys (``IdempotencyKey``): a later ``POST /batches`` with the same key plays
    its own batch, never the imported one, while ``GET /batches?key=`` finds either.

    ``definition``: the digest of the batch's definition as this server planned it. No foreign
    key: a deleted batch leaves a key that names nothing, which reads as no key.
    """

    __tablename__ = "import_key"

    scope: str = Field(primary_key=True, max_length=64)
    key: str = Field(primary_key=True, max_length=255)
    definition: str = Field(max_length=64)
    batch_id: str = Field(max_length=32)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


# Core handles of the tables: the write path and the aggregates build statements on these,
# without ORM objects.
BATCH: Table = SQLModel.metadata.tables[Batch.__tablename__]
CHUNK: Table = SQLModel.metadata.tables[Chunk.__tablename__]
MATCH: Table = SQLModel.metadata.tables[Match.__tablename__]
SEAT_RESULT: Table = SQLModel.metadata.tables[SeatResult.__tablename__]

MATCH_COLUMNS = (
    "batch_id",
    "match_index",
    "seed",
    "ok",
    "plies",
    "ended_by",
    "duration",
    "moves",
    "stats",
    "error",
    "first_seat",
    "opening",
)
"""The columns of the ``match`` table, in the order the writer fills them."""
SEAT_COLUMNS = (
    "batch_id",
    "match_index",
    "seat",
    "agent",
    "agent_index",
    "points",
    "win_share",
    "rank",
    "move_ms",
)
"""The columns of the ``seat_result`` table, in the order the writer fills them (after
``batch_id`` and ``match_index``, the fields of a ``storage.records.SeatRecord``)."""
STOP_COLUMNS = ("stop_0", "stop_1", "stop_2", "stop_3", "stop_4")
"""The stop-rule count columns of the ``chunk`` table, worst outcome first."""
