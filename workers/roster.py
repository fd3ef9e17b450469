"""Which games the running workers have: each worker advertises its own in Redis.

A worker that consumes chunk queues (``workers.game_queues``) writes, every
``ADVERTISE_EVERY`` seconds, one field of the hash ``playtester:workers``: its node name ->
``{"games": {name: package}, "until": t}``, ``t`` being the broker's clock plus
``ADVERTISED_FOR``. A worker that stops removes its field; one killed is dropped once ``t``
has passed. Times are the broker's, so the hosts' clocks need not agree.

A batch's status reads it (``waiting_note``): an unfinished batch whose game no live worker
has says so, and names the package to install on a worker.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import redis
import redis.exceptions

from engines import registry
from engines.errors import GameError
from storage.models import BatchStatus
from storage.settings import Settings
from workers.broker import broker
from workers.game_queues import CHUNK_QUEUE, chunk_queue
from workers.outages import TRANSIENT_ERRORS

log = logging.getLogger(__name__)

ROSTER_KEY = "playtester:workers"
ADVERTISE_EVERY = 5.0
"""Seconds between a worker's advertisements."""
ADVERTISED_FOR = 20.0
"""Seconds an advertisement stays true: a worker silent for longer is taken for gone."""


@dataclass(frozen=True)
class Advertised:
    """One live worker and the games it plays, each with the package it comes from."""

    node: str
    games: Mapping[str, str]


def _now(client: redis.Redis) -> float:
    seconds, micros = client.time()
    return float(seconds) + float(micros) / 1e6


def advertise(client: redis.Redis, node: str, games: Mapping[str, str]) -> None:
    """Say that worker ``node`` is up and plays ``games`` (name -> package)."""
    until = _now(client) + ADVERTISED_FOR
    client.hset(ROSTER_KEY, node, json.dumps({"games": dict(games), "until": until}))


def withdraw(client: redis.Redis, node: str) -> None:
    """Worker ``node`` stops: it plays nothing any more."""
    client.hdel(ROSTER_KEY, node)


def live_workers(client: redis.Redis) -> list[Advertised]:
    """The workers whose advertisement still holds, by node name; the lapsed ones are
    removed."""
    now = _now(client)
    live, lapsed = [], []
    for raw_node, raw in client.hgetall(ROSTER_KEY).items():
        node = raw_node.decode() if isinstance(raw_node, bytes) else str(raw_node)
        try:
            record = json.loads(raw)
            games = {str(k): str(v) for k, v in dict(record["games"]).items()}
            until = float(record["until"])
        except (ValueError, KeyError, TypeError):
            lapsed.append(node)  # not written by this code: it says nothing true
            continue
        if until < now:
            lapsed.append(node)
        else:
            live.append(Advertised(node=node, games=games))
    if lapsed:
        client.hdel(ROSTER_KEY, *lapsed)
    return sorted(live, key=lambda w: w.node)


def games_here(names: list[str]) -> dict[str, str]:
    """``names`` (games loaded in this process) with the package each comes from."""
    return {name: registry.game_origin(name).package for name in names}


class Advertiser:
    """A worker's advertisement, renewed by a thread from ``start`` until ``stop``."""

    def __init__(self, client: redis.Redis, node: str, games: Mapping[str, str]) -> None:
        self.client = client
        self.node = node
        self.games = dict(games)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="roster", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        failing = False
        while True:
            try:
                advertise(self.client, self.node, self.games)
                failing = False
            except redis.exceptions.RedisError:
                if not failing:  # the broker is away: said once, tried again each period
                    log.warning("worker %s could not advertise its games", self.node)
                failing = True
            if self._stop.wait(ADVERTISE_EVERY):
                return

    def stop(self) -> None:
        """Stop renewing and withdraw (a broker away lets the advertisement lapse instead)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        try:
            withdraw(self.client, self.node)
        except redis.exceptions.RedisError:
            log.warning("worker %s could not withdraw its games; they lapse", self.node)


def install_hint(game: str) -> str:
    """What to install on a worker to give it ``game``."""
    try:
        package = registry.game_origin(game).package
    except GameError:
        return "install the package that declares it on a worker"
    return f"install {package} on a worker"


def missing_game_note(game: str, workers: list[Advertised]) -> str | None:
    """Why a chunk of ``game`` waits, given the live ``workers``; None when one plays it."""
    if not workers:
        return "waiting: no worker is running"
    if chunk_queue(game) == CHUNK_QUEUE:
        return None  # the shared queue: any chunk worker takes it
    if any(game in w.games for w in workers):
        return None
    return f"waiting: no worker has the game {game} ({install_hint(game)})"


def waiting_note(game: str, status: str, client: redis.Redis | None) -> str | None:
    """Why an unfinished batch of ``game`` waits when no live worker can play it; None when
    one can, when it is finished, without a broker (``client`` None: local mode), or when the
    broker does not answer (the status is read all the same)."""
    if client is None or status in BatchStatus.FINISHED:
        return None
    try:
        workers = live_workers(client)
    except TRANSIENT_ERRORS:
        return None
    return missing_game_note(game, workers)


def package_on_workers(game: str, client: redis.Redis | None) -> str | None:
    """The package a live worker has ``game`` from; None when none has it, without a broker,
    or when the broker does not answer."""
    if client is None:
        return None
    try:
        workers = live_workers(client)
    except TRANSIENT_ERRORS:
        return None
    key = game.strip().lower()
    return next((w.games[key] for w in workers if key in w.games), None)


def roster_client(settings: Settings) -> redis.Redis | None:
    """The broker the roster lives in; None in local mode."""
    if not settings.broker_url:
        return None
    return broker(settings)
