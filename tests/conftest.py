"""Shared fixtures for the whole suite.

Databases
- ``sqlite_url``: URL of a fresh, empty SQLite file in the test's temporary folder (no
  schema yet: call ``storage.db.upgrade(url)`` or use ``migrated_sqlite_url``).
- ``migrated_sqlite_url``: the same with the schema already created.
- ``pg_url``: URL of a throwaway PostgreSQL database ``pt_<random>`` created for the test on
  the machine's server (127.0.0.1:5432, user postgres) and dropped afterwards; no schema yet.
  Never touches the shared ``test`` database beyond connecting to it to CREATE/DROP.
  When PostgreSQL does not answer the test is skipped, unless the environment variable
  ``PLAYTESTER_REQUIRE_SERVERS`` is set (CI sets it), in which case it fails
  (``server_missing`` makes that decision, for the service fixtures too).
  ``throwaway_pg_database()`` makes one more such database inside a test.
- ``db_url``: parametrised over both dialects (``sqlite`` and ``postgresql``), schema created;
  use it for tests that must hold on both.

Engines are cached per URL by ``storage.db.get_engine``; the fixtures dispose of them at the
end so no connection outlives its database.
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


@pytest.fixture
def sqlite_url(tmp_path: os.PathLike[str]) -> Iterator[str]:
    """A fresh SQLite file URL (empty database)."""
    from storage.db import dispose_engine

    url = f"sqlite:///{os.fspath(tmp_path)}/playtester-test.db"
    yield url
    dispose_engine(url)


@pytest.fixture
def migrated_sqlite_url(sqlite_url: str) -> str:
    """A fresh SQLite file URL with the schema created by the migrations."""
    from storage.db import upgrade

    upgrade(sqlite_url)
    return sqlite_url


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


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A throwaway PostgreSQL database, created empty and dropped after the test."""
    with throwaway_pg_database() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest) -> str:
    """A migrated database of each dialect in turn (the test runs once per dialect)."""
    from storage.db import upgrade

    fixture = "sqlite_url" if request.param == "sqlite" else "pg_url"
    url: str = request.getfixturevalue(fixture)
    upgrade(url)
    return url
