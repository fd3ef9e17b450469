"""Chunk rows carry the stop rule's outcome counts of their matches.

With a stop rule the SPRT is checked after every chunk, so its counts are summed over the chunk
rows instead of being recomputed from every seat result of the batch. Null on chunks written
without a rule (or before this revision): the check then counts from the seat results.

Revision ID: 0003
Revises: 0002
Create Date: 2024-06-20
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

COLUMNS = tuple(f"stop_{k}" for k in range(5))


def upgrade() -> None:
    """Add the five nullable count columns to ``chunk``."""
    with op.batch_alter_table("chunk") as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=True))


def downgrade() -> None:
    """Drop them again."""
    with op.batch_alter_table("chunk") as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
