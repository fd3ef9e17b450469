"""Matches keep who moved first and which opening they share; batches declare their variation.

- ``match.first_seat``: the seat that moved first. Figures by turn position read it, since in
  Alhambra the starting seat is drawn rather than seat 0.
- ``match.opening``: a key of the match's first plies. Matches sharing it are dependent when
  the players are deterministic, and the report's intervals are clustered on it.
- ``batch.variation``: how the batch makes its matches differ (openings or player noise).

All nullable: rows stored before read as "not recorded".

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the two match columns and the batch's variation."""
    with op.batch_alter_table("match") as batch:
        batch.add_column(sa.Column("first_seat", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("opening", sa.BigInteger(), nullable=True))
    with op.batch_alter_table("batch") as batch:
        batch.add_column(sa.Column("variation", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Drop them again."""
    with op.batch_alter_table("batch") as batch:
        batch.drop_column("variation")
    with op.batch_alter_table("match") as batch:
        batch.drop_column("opening")
        batch.drop_column("first_seat")
