"""Initial schema: batch, chunk, match, seat_result.

Revision ID: 0001_initial
Revises:
Create Date: 2024-06-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create the four tables and their indexes, as declared in ``storage.models``."""
    op.create_table(
        "batch",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("started_at", TZ, nullable=True),
        sa.Column("finished_at", TZ, nullable=True),
        sa.Column("game", sa.String(length=40), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("agents", sa.JSON(), nullable=False),
        sa.Column("labels", sa.JSON(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("seat_policy", sa.String(length=16), nullable=False),
        sa.Column("chunk_size", sa.Integer(), nullable=False),
        sa.Column("max_plies", sa.Integer(), nullable=False),
        sa.Column("stop_rule", sa.JSON(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("stopped_early", sa.Boolean(), nullable=False),
        sa.Column("decision", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_batch_game", "batch", ["game"])
    op.create_index("ix_batch_status", "batch", ["status"])

    op.create_table(
        "chunk",
        sa.Column("batch_id", sa.String(length=32), nullable=False),
        sa.Column("start", sa.Integer(), nullable=False),
        sa.Column("stop", sa.Integer(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("duration", sa.Float(), nullable=False),
        sa.Column("finished_at", TZ, nullable=False),
        sa.Column("worker", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(["batch_id"], ["batch.id"]),
        sa.PrimaryKeyConstraint("batch_id", "start"),
    )

    op.create_table(
        "match",
        sa.Column("batch_id", sa.String(length=32), nullable=False),
        sa.Column("match_index", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("plies", sa.Integer(), nullable=False),
        sa.Column("ended_by", sa.String(length=32), nullable=False),
        sa.Column("duration", sa.Float(), nullable=False),
        sa.Column("moves", sa.Text(), nullable=False),
        sa.Column("stats", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["batch_id"], ["batch.id"]),
        sa.PrimaryKeyConstraint("batch_id", "match_index"),
    )

    op.create_table(
        "seat_result",
        sa.Column("batch_id", sa.String(length=32), nullable=False),
        sa.Column("match_index", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("agent", sa.String(length=200), nullable=False),
        sa.Column("agent_index", sa.Integer(), nullable=False),
        sa.Column("points", sa.Float(), nullable=False),
        sa.Column("win_share", sa.Float(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batch.id"]),
        sa.PrimaryKeyConstraint("batch_id", "match_index", "seat"),
    )
    op.create_index("ix_seat_result_batch_agent", "seat_result", ["batch_id", "agent"])


def downgrade() -> None:
    """Drop everything ``upgrade`` created, children first."""
    op.drop_index("ix_seat_result_batch_agent", table_name="seat_result")
    op.drop_table("seat_result")
    op.drop_table("match")
    op.drop_table("chunk")
    op.drop_index("ix_batch_status", table_name="batch")
    op.drop_index("ix_batch_game", table_name="batch")
    op.drop_table("batch")
