"""Import keys: the batch an archive import sent with an ``Idempotency-Key`` brought in.

- ``import_key``: (scope, key) -> batch id and the digest of its definition, apart from the
  submissions' ``idempotency_key``, so an import never answers a later submission.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the import keys' table."""
    op.create_table(
        "import_key",
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("definition", sa.String(length=64), nullable=False),
        sa.Column("batch_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", "key"),
    )


def downgrade() -> None:
    """Drop it again."""
    op.drop_table("import_key")
