"""One chunk queue per game: which queues a worker consumes, and where a batch's chunks go.

The queue names are the ones docs/across-machines.md tells an operator to expect
(``playtester.game.<name>``, the shared ``playtester`` and ``playtester.control``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from service_fixtures import RedisServer, redis_server

from storage import crud
from storage.db import get_engine
from storage.settings import Settings
from workers import dispatch
from workers.batches import plan_batch
from workers.game_queues import chunk_queue, consumed, queue_game

__all__ = ["redis_server"]

EVERY = ["playtester", "playtester.control"]


def test_a_game_of_the_entry_points_has_its_own_queue_and_openspiel_the_shared_one() -> None:
    assert chunk_queue("kalah") == "playtester.game.kalah"
    assert chunk_queue(" Alquerque ") == "playtester.game.alquerque"
    assert chunk_queue("openspiel:tic_tac_toe") == "playtester"
    assert queue_game("playtester.game.kalah") == "kalah"
    assert queue_game("playtester") is None and queue_game("playtester.control") is None


def test_the_shared_queue_brings_the_queues_of_the_games_loaded_and_no_other() -> None:
    selected = [*EVERY, "playtester.game.alquerque", "playtester.game.kalah"]
    assert consumed(selected, ["alquerque", "abalone"]) == [
        *EVERY,
        "playtester.game.abalone",
        "playtester.game.alquerque",
    ]


def test_a_game_queue_named_alone_is_kept_only_when_its_game_loads() -> None:
    assert consumed(["playtester.game.kalah"], ["alquerque"]) == []
    assert consumed(["playtester.game.kalah", "playtester.control"], ["kalah", "alquerque"]) == [
        "playtester.control",
        "playtester.game.kalah",
    ]
    assert consumed(["playtester.control"], ["kalah"]) == ["playtester.control"]


@pytest.fixture
def settings(migrated_sqlite_url: str, redis_server: RedisServer) -> Iterator[Settings]:
    settings = Settings(
        database_url=migrated_sqlite_url, broker_url=redis_server.url, max_chunks_in_flight=4
    )
    dispatch.broker(settings).flushdb()
    yield settings
    dispatch.broker(settings).flushdb()


def test_a_batch_s_chunks_wait_in_its_game_s_queue(settings: Settings) -> None:
    plan = plan_batch(
        settings=Settings(),
        game="alquerque",
        players=None,
        options={},
        agents=["random", "random"],
        matches=20,
        seed=9,
        seat_policy=None,
        chunk_size=10,
        max_plies=None,
    )
    engine = get_engine(settings.database_url)
    batch = crud.create_batch(engine, plan=plan)
    assert dispatch.open_batch(engine, batch, settings) == [(0, 10), (10, 20)]
    client = dispatch.broker(settings)
    # Celery's Redis transport keeps a queue as a list named after it.
    assert client.llen("playtester.game.alquerque") == 2
    assert client.llen("playtester") == 0
    assert dispatch.chunks_waiting(settings, "alquerque") == 2
    assert dispatch.chunks_waiting(settings, "abalone") == 0
    assert dispatch.chunks_waiting(settings) == 2
