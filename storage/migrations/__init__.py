"""Alembic migrations of the playtester schema, run by ``storage.db.upgrade``."""
