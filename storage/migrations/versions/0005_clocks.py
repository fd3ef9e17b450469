"""Blitz clocks: a batch's time control and the time each seat's moves took.

- ``batch.time_control``: the players' clocks (``"60+1"``), null for a batch without them.
- ``seat_result.move_ms``: in a clocked match, the milliseconds each of the seat's moves took,
  in order (JSON list); null otherwise.

Both nullable: every row stored before reads as "no clock".

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the batch's time control and the seats' move times."""
    with op.batch_alter_table("batch") as batch:
        batch.add_column(sa.Column("time_control", sa.String(length=32), nullable=True))
    with op.batch_alter_table("seat_result") as batch:
        batch.add_column(sa.Column("move_ms", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Drop them again."""
    with op.batch_alter_table("seat_result") as batch:
        batch.drop_column("move_ms")
    with op.batch_alter_table("batch") as batch:
        batch.drop_column("time_control")
