"""Local mode of ``playtester serve``: one batch at a time, and a clean stop at shutdown."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from service_fixtures import wait_for
from sqlalchemy import func, select

from api.app import create_app
from storage import crud
from storage.db import get_engine
from storage.models import BatchStatus
from storage.settings import Settings
from workers.dispatchers import LocalDispatcher
from workers.local import run_local

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

SLOW = {
    "game": "alquerque",
    "agents": ["mcts:iterations=1000,backend=python", "random"],
    "seed": 3,
}
"""About 0.3 s a match on one core of the test machine (the Python search: the compiled one
is about fifteen times faster)."""


def aware(moment: datetime | None) -> datetime:
    assert moment is not None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def chunks_written(url: str, batch_id: str) -> int:
    with get_engine(url).connect() as conn:
        return int(
            conn.execute(select(func.count()).where(crud.CHUNK.c.batch_id == batch_id)).scalar_one()
        )


def status(url: str, batch_id: str) -> str:
    batch = crud.get_batch(get_engine(url), batch_id)
    assert batch is not None
    return batch.status


def test_two_submissions_run_one_after_the_other(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    app = create_app(Settings(database_url=url, broker_url=None))
    dispatcher = app.state.dispatcher
    assert isinstance(dispatcher, LocalDispatcher)
    with TestClient(app) as client:
        ids = []
        for _ in range(2):
            answer = client.post("/batches", json={**SLOW, "matches": 4, "chunk_size": 2})
            assert answer.status_code == 202, answer.text
            ids.append(answer.json()["id"])
        wait_for(lambda: len(dispatcher.exits) == 2, 120, "both runs to end")
    first, second = (crud.get_batch(get_engine(url), b) for b in ids)
    assert first is not None and second is not None
    assert first.status == second.status == BatchStatus.DONE
    # The second began only once the first had finished.
    assert aware(second.started_at) >= aware(first.finished_at)
    assert dispatcher.exits == [(ids[0], 0), (ids[1], 0)]


def test_shutdown_stops_the_running_batch_cleanly_and_it_resumes(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    matches = 24
    app = create_app(Settings(database_url=url, broker_url=None))
    dispatcher = app.state.dispatcher
    with TestClient(app) as client:
        running = client.post("/batches", json={**SLOW, "matches": matches, "chunk_size": 1})
        waiting = client.post("/batches", json={**SLOW, "matches": 2, "chunk_size": 1})
        running_id, waiting_id = running.json()["id"], waiting.json()["id"]
        wait_for(lambda: chunks_written(url, running_id) >= 1, 120, "a first chunk")
    # Leaving the client shut the app down: the running batch stopped as Ctrl-C stops it.
    assert dispatcher.exits == [(running_id, 130)]
    assert status(url, running_id) == BatchStatus.QUEUED
    assert 1 <= chunks_written(url, running_id) < matches
    assert status(url, waiting_id) == BatchStatus.QUEUED
    assert chunks_written(url, waiting_id) == 0
    final = run_local(running_id, workers=2, settings=Settings(database_url=url))
    assert (final.done + final.failed, final.status) == (matches, BatchStatus.DONE)
