"""Atomic submissions and per-run progress; databases from the first 0001 converge.

- ``match`` and ``seat_result`` lose their foreign keys to ``batch`` where they still have
  them: the first release of 0001 created them, a later edit of 0001 removed them, so
  databases created before that edit kept keys that ``db upgrade`` called current.
- ``outbox``: start requests stored with their batch, deleted once delivered.
- ``idempotency_key``: the batch each client ``Idempotency-Key`` made, unique per scope.
- ``batch.run_started_at`` and ``batch.run_start_finished``: rate and ETA of the current run.

Revision ID: 0002
Revises: 0001_initial
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001_initial"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)
RESULT_TABLES = ("match", "seat_result")
SQLITE_FK_NAMES = {"fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s"}
"""Names for SQLite's unnamed keys, so batch mode can drop them (Alembic's documented way)."""


def _drop_legacy_foreign_keys() -> None:
    """Drop the result tables' foreign keys to ``batch``, if present, on either dialect."""
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    for table in RESULT_TABLES:
        keys = [k for k in inspector.get_foreign_keys(table) if k["referred_table"] == "batch"]
        if not keys:
            continue
        if bind.dialect.name == "sqlite":
            # SQLite cannot drop a constraint in place: batch mode copies the table without it.
            with op.batch_alter_table(table, naming_convention=SQLITE_FK_NAMES) as batch_op:
                for key in keys:
                    batch_op.drop_constraint(
                        f"fk_{table}_{key['constrained_columns'][0]}_batch", type_="foreignkey"
                    )
        else:
            for key in keys:
                name = key["name"]
                if name is None:  # pragma: no cover - PostgreSQL names every constraint
                    raise RuntimeError(f"cannot drop an unnamed foreign key of {table}")
                op.drop_constraint(name, table, type_="foreignkey")


def upgrade() -> None:
    """Converge the result tables, then add the outbox, idempotency keys and run columns."""
    _drop_legacy_foreign_keys()
    op.add_column("batch", sa.Column("run_started_at", TZ, nullable=True))
    op.add_column("batch", sa.Column("run_start_finished", sa.Integer(), nullable=True))
    op.create_table(
        "outbox",
        sa.Column("batch_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batch.id"]),
        sa.PrimaryKeyConstraint("batch_id"),
    )
    op.create_table(
        "idempotency_key",
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("batch_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batch.id"]),
        sa.PrimaryKeyConstraint("scope", "key"),
    )


def downgrade() -> None:
    """Drop what ``upgrade`` added; the legacy keys stay dropped, as 0001 now has none."""
    op.drop_table("idempotency_key")
    op.drop_table("outbox")
    op.drop_column("batch", "run_start_finished")
    op.drop_column("batch", "run_started_at")
