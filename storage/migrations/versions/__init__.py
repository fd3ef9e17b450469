"""Migration scripts, oldest first (Alembic orders them by ``down_revision``)."""
