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
  (``server_support.server_missing`` makes that decision, for the service fixtures too).
  ``server_support.throwaway_pg_database()`` makes one more such database inside a test.
- ``db_url``: parametrised over both dialects (``sqlite`` and ``postgresql``), schema created;
  use it for tests that must hold on both.

Engines are cached per URL by ``storage.db.get_engine``; the fixtures dispose of them at the
end so no connection outlives its database.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from server_support import throwaway_pg_database


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first: started last, a minute-long end-to-end test would hold the whole run
    open while the other workers sit idle. The sort is stable, so every xdist worker collects
    the same order."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
