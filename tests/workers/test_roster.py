"""The workers' roster in Redis: what each live worker advertises, lapsing when it falls
silent, and the note a batch's status shows when no live worker has its game."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
import redis
from service_fixtures import RedisServer, redis_server

from storage.models import BatchStatus
from workers import roster

__all__ = ["redis_server"]


@pytest.fixture
def client(redis_server: RedisServer) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    yield client
    client.flushdb()


def test_live_workers_are_the_advertised_ones_and_a_silent_one_lapses(
    client: redis.Redis,
) -> None:
    roster.advertise(client, "a@host", {"alquerque": "playtester"})
    roster.advertise(client, "b@host", {"kalah": "playtester-kalah"})
    seconds, _micros = client.time()
    # Written as a worker last did ADVERTISED_FOR + 1 seconds ago, and never since.
    stale = {"games": {"kalah": "playtester-kalah"}, "until": seconds - 1}
    client.hset(roster.ROSTER_KEY, "gone@host", json.dumps(stale))
    live = roster.live_workers(client)
    assert [(w.node, dict(w.games)) for w in live] == [
        ("a@host", {"alquerque": "playtester"}),
        ("b@host", {"kalah": "playtester-kalah"}),
    ]
    assert client.hexists(roster.ROSTER_KEY, "gone@host") == 0
    roster.withdraw(client, "b@host")
    assert [w.node for w in roster.live_workers(client)] == ["a@host"]


def test_an_advertiser_advertises_until_stopped_then_withdraws(client: redis.Redis) -> None:
    advertiser = roster.Advertiser(client, "w@host", {"alquerque": "playtester"})
    advertiser.start()
    try:
        # The first advertisement is written before the first wait.
        for _ in range(1000):
            if roster.live_workers(client):
                break
            time.sleep(0.01)
        assert [w.node for w in roster.live_workers(client)] == ["w@host"]
    finally:
        advertiser.stop()
    assert roster.live_workers(client) == []


def test_the_note_names_the_game_no_worker_has_and_the_package_to_install() -> None:
    plays = [roster.Advertised("a@host", {"alquerque": "playtester"})]
    assert roster.missing_game_note("alquerque", plays) is None
    assert roster.missing_game_note("abalone", plays) == (
        "waiting: no worker has the game abalone (install playtester on a worker)"
    )
    assert roster.missing_game_note("abalone", []) == "waiting: no worker is running"
    # Any chunk worker takes an OpenSpiel game's chunks: the shared queue.
    assert roster.missing_game_note("openspiel:tic_tac_toe", plays) is None


def test_a_finished_batch_or_local_mode_has_no_note(client: redis.Redis) -> None:
    running = BatchStatus.RUNNING
    assert roster.waiting_note("alquerque", running, client) == "waiting: no worker is running"
    assert roster.waiting_note("alquerque", running, None) is None
    assert roster.waiting_note("alquerque", BatchStatus.DONE, client) is None
    roster.advertise(client, "a@host", {"alquerque": "playtester"})
    assert roster.waiting_note("alquerque", BatchStatus.QUEUED, client) is None
