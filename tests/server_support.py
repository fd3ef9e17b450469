"""What a missing server means for a test, and throwaway PostgreSQL databases: shared by the
fixtures of ``conftest.py`` and the tests that make more than one database.

When PostgreSQL does not answer (or a server's tool is missing) the test is skipped, unless the
environment variable ``PLAYTESTER_REQUIRE_SERVERS`` is set (CI sets it), in which case it fails:
``server_missing`` makes that decision for every test.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from typing import NoReturn

import pytest

PG_SERVER = os.environ.get("PLAYTESTER_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432")
"""Server the throwaway databases are created on (its ``test`` database is the entry point)."""


def require_servers() -> bool:
    """True when missing servers must fail the tests that need them (CI sets the variable)."""
    return bool(os.environ.get("PLAYTESTER_REQUIRE_SERVERS"))


def server_missing(message: str) -> NoReturn:
    """End a test that cannot get a server or a server's tool: a failure when servers are
    required, a skip otherwise."""
    if require_servers():
        pytest.fail(f"{message} (PLAYTESTER_REQUIRE_SERVERS is set)", pytrace=False)
    pytest.skip(message)


@contextlib.contextmanager
def throwaway_pg_database() -> Iterator[str]:
    """URL of a new empty PostgreSQL database on ``PG_SERVER``, dropped on exit."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import OperationalError

    from storage.db import dispose_engine

    admin = create_engine(f"{PG_SERVER}/test", isolation_level="AUTOCOMMIT")
    name = f"pt_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except OperationalError as exc:
        admin.dispose()
        server_missing(f"PostgreSQL at {PG_SERVER} is not answering: {str(exc.orig).strip()}")
    url = f"{PG_SERVER}/{name}"
    try:
        yield url
    finally:
        dispose_engine(url)
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
