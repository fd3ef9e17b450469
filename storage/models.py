"""SQL tables. A batch is one row; its matches and per-seat results arrive chunk by chunk.

Idempotency lives in the keys: ``chunk`` (batch_id, start), ``match`` (batch_id, match_index)
and ``seat_result`` (batch_id, match_index, seat) are primary keys, and every write is an
insert that ignores rows already there, so a chunk delivered twice changes nothing. A
submission is one transaction too: the batch, its start request (``outbox``) and, when the
client sent one, its ``idempotency_key`` row.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, DateTime, Index, Text
from sqlmodel import Field, SQLModel

AUTO_CHUNK_SIZE = 0
"""``Batch.chunk_size`` of a batch whose chunks the runner sizes (about ``chunk_seconds`` each,
measured from the batch's own chunks); any other value is a fixed size asked for."""


def utcnow() -> datetime:
    return datetime.now(UTC)


class BatchStatus:
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"
    FINISHED = frozenset({DONE, CANCELLED, FAILED})
    ALL = (QUEUED, RUNNING, DONE, CANCELLED, FAILED)


class Batch(SQLModel, table=True):
    """A request for ``matches`` matches of one game between one agent spec per seat."""

    __tablename__ = "batch"

    id: str = Field(primary_key=True, max_length=32)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    started_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    run_started_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    """When the current run began (the latest move from queued to running, e.g. a resume)."""
    run_start_finished: int | None = None
    """Matches already finished when the current run began: rate and ETA count from there."""
    finished_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    game: str = Field(index=True, max_length=40)
    players: int
    options: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    agents: list[dict[str, Any]] = Field(sa_column=Column(JSON, nullable=False))
    """Normalised agent specs in base seat order (every parameter filled in)."""
    labels: list[str] = Field(sa_column=Column(JSON, nullable=False))
    """One label per agent spec, unique within the batch (``hard``, ``random#2``)."""
    matches: int
    seed: int = Field(sa_column=Column(BigInteger, nullable=False))
    seat_policy: str = Field(default="rotate", max_length=16)
    chunk_size: int
    """Matches per chunk, or ``AUTO_CHUNK_SIZE`` (0) when the runner sizes chunks."""
    max_plies: int
    stop_rule: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    status: str = Field(default=BatchStatus.QUEUED, index=True, max_length=16)
    stopped_early: bool = False
    decision: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


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
