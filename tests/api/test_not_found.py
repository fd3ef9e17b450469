"""Only storage's ``NotFound`` means "not found": a ``KeyError`` or ``IndexError`` from a bug
stays a bug at every catch site (API 500 logged, CLI traceback, Celery task failure)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from api_support import client_for, make_api
from service_fixtures import RedisServer, redis_server
from storage_rows import make_plan
from typer.testing import CliRunner

import api.routes_reports
import storage.crud.batches
import workers.delivery
import workers.dispatch
from api.cli import app as cli
from api.cli.common import describe_error
from storage.crud import NotFound
from storage.db import get_engine

__all__ = ["redis_server"]

BUGS = [KeyError("seat"), IndexError("list index out of range")]


@pytest.fixture
def client(migrated_sqlite_url: str):
    app, _ = make_api(migrated_sqlite_url)
    with client_for(app) as c:
        yield c


def test_not_found_is_a_lookup_error_with_its_message() -> None:
    assert issubclass(NotFound, LookupError)
    assert describe_error(NotFound("no batch 'abcd'")) == "no batch 'abcd'"


@pytest.mark.parametrize("bug", BUGS, ids=type)
def test_a_bug_in_a_report_route_is_a_logged_500(
    client,
    migrated_sqlite_url: str,
    bug: Exception,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise bug

    # The batch exists, so the id resolves and the route reaches the broken report.
    storage.crud.create_batch(get_engine(migrated_sqlite_url), plan=make_plan(id="abcdef000000"))
    monkeypatch.setattr(api.routes_reports, "build_report", broken)
    with caplog.at_level(logging.ERROR, logger="api.errors"):
        response = client.get("/batches/abcdef/report")
    assert response.status_code == 500, response.text
    assert response.json()["message"].startswith("internal error")
    logged = [r for r in caplog.records if r.exc_info and r.exc_info[1] is bug]
    assert logged, "the bug is not in the server log"


@pytest.mark.parametrize("bug", BUGS, ids=type)
def test_a_bug_while_resolving_a_batch_id_is_not_a_404(
    client, bug: Exception, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object, **_kwargs: object) -> str:
        raise bug

    monkeypatch.setattr(storage.crud.batches, "resolve_batch_id", broken)
    assert client.get("/batches/abcdef").status_code == 500


def test_unknown_batches_are_still_404(client) -> None:
    for path in ("/batches/feedbeef", "/batches/feedbeef/report", "/compare?a=feedbeef&b=beef1"):
        response = client.get(path)
        assert response.status_code == 404, (path, response.text)
        assert "no batch" in response.json()["message"]


@pytest.mark.parametrize("bug", BUGS, ids=type)
def test_a_bug_in_a_cli_command_is_not_an_input_error(
    migrated_sqlite_url: str, bug: Exception, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object, **_kwargs: object) -> str:
        raise bug

    assert describe_error(bug) is None
    monkeypatch.setattr(storage.crud.batches, "resolve_batch_id", broken)
    result = CliRunner().invoke(cli, ["show", "abcdef", "--db", migrated_sqlite_url])
    assert result.exit_code != 2
    assert result.exception is bug


def test_an_unknown_batch_in_the_cli_is_exit_2(migrated_sqlite_url: str) -> None:
    result = CliRunner().invoke(cli, ["show", "feedbeef", "--db", migrated_sqlite_url])
    assert result.exit_code == 2 and "no batch 'feedbeef'" in result.stderr


@pytest.fixture
def worker_settings(
    migrated_sqlite_url: str, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """A worker's settings: a fresh SQLite file and the private Redis (which holds the chunk
    leases a delivery takes before it plays)."""
    from storage.settings import get_settings

    monkeypatch.setenv("DATABASE_URL", migrated_sqlite_url)
    monkeypatch.setenv("BROKER_URL", redis_server.url)
    get_settings.cache_clear()
    workers.dispatch.broker(get_settings()).flushdb()
    yield
    get_settings.cache_clear()


@pytest.mark.parametrize("bug", BUGS, ids=type)
def test_a_bug_in_a_chunk_task_fails_the_task(
    bug: Exception, worker_settings: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workers.tasks import play_chunk_task

    def broken(*_args: object, **_kwargs: object) -> None:
        raise bug

    monkeypatch.setattr(workers.delivery, "run_chunk", broken)
    result = play_chunk_task.apply(args=["abcdef", 0, 1])
    assert result.failed()
    assert result.result is bug


def test_a_chunk_of_a_missing_batch_is_recorded_not_retried(
    worker_settings: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workers.tasks import play_chunk_task

    def missing(*_args: object, **_kwargs: object) -> None:
        raise NotFound("no batch 'abcdef'")

    monkeypatch.setattr(workers.delivery, "run_chunk", missing)
    result = play_chunk_task.apply(args=["abcdef", 0, 1])
    assert result.successful()
    error = "no batch 'abcdef'"
    assert result.result == {"batch_id": "abcdef", "start": 0, "stop": 1, "error": error}
