"""The test fixtures' own decision: a missing server skips a test, unless servers are required
(``PLAYTESTER_REQUIRE_SERVERS``, set by CI), in which case the test fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import server_support
from server_support import server_missing, throwaway_pg_database
from service_fixtures import missing_is_decided

from harness import servers

REQUIRE = "PLAYTESTER_REQUIRE_SERVERS"


@pytest.fixture
def no_tools(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A machine where neither PostgreSQL's tools nor redis-server can be found."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(servers, "PG_BIN_DIRS", (str(tmp_path),))


def test_missing_servers_skip_when_they_are_optional(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE, raising=False)
    with pytest.raises(pytest.skip.Exception, match="gone"):
        server_missing("gone")


def test_missing_servers_fail_when_they_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE, "1")
    with pytest.raises(pytest.fail.Exception, match="gone"):
        server_missing("gone")


@pytest.mark.parametrize(("required", "outcome"), [("1", pytest.fail), (None, pytest.skip)])
def test_missing_initdb_and_redis_server_follow_the_decision(
    no_tools: None, monkeypatch: pytest.MonkeyPatch, required: str | None, outcome: object
) -> None:
    if required is None:
        monkeypatch.delenv(REQUIRE, raising=False)
    else:
        monkeypatch.setenv(REQUIRE, required)
    expected = outcome.Exception  # type: ignore[attr-defined]
    with pytest.raises(expected, match="initdb"), missing_is_decided():
        servers.PgCluster()
    server = servers.RedisServer()
    try:
        with pytest.raises(expected, match="redis-server"), missing_is_decided():
            server.start()
    finally:
        shutil.rmtree(server.folder, ignore_errors=True)


def test_an_unreachable_postgresql_fails_when_servers_are_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(REQUIRE, "1")
    port = servers.free_port()  # nothing listens there
    monkeypatch.setattr(
        server_support, "PG_SERVER", f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    )
    with pytest.raises(pytest.fail.Exception, match="not answering"), throwaway_pg_database():
        pass
