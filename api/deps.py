"""Dependencies of the routes: settings, the database engine, and who runs the batches.

A ``Dispatcher`` hands a stored batch to whatever plays it: Celery workers when ``BROKER_URL``
is set, otherwise a local process pool started in a child process (``playtester resume``), so
``playtester serve`` works on a laptop with no servers at all. Once handed over, the batch's
start request is removed from the outbox.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from typing import Annotated, Protocol

import kombu.exceptions
import redis.exceptions
import sqlalchemy.exc
from fastapi import Depends, Request
from sqlalchemy import Engine

from storage.models import Batch
from storage.settings import Settings
from storage.submissions import start_delivered

log = logging.getLogger(__name__)


class Dispatcher(Protocol):
    """Hands stored batches to whatever plays them and says whether its broker answers."""

    def start(self, batch: Batch) -> None: ...

    def broker_status(self) -> str: ...


BROKER_DOWN: tuple[type[BaseException], ...] = (
    kombu.exceptions.OperationalError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    OSError,
)
"""Failures after which a start request simply stays in the outbox for the sweeper."""


class CeleryDispatcher:
    """Distributed mode: one control message per batch, workers do the rest.

    The message is sent once, without waiting for a broker that is down: the batch and its
    start request are already stored, and the sweeper delivers the request when the broker is
    back. The answer to the client is the same either way.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def start(self, batch: Batch) -> None:
        from storage.db import get_engine
        from workers import dispatch

        try:
            dispatch.start(batch.id, self.settings, retry=False)
            start_delivered(get_engine(self.settings.database_url), batch.id)
        except BROKER_DOWN as exc:
            log.warning("batch %s stored; its start waits for the sweeper: %s", batch.id, exc)

    def broker_status(self) -> str:
        from workers.dispatch import redis_client

        assert self.settings.broker_url is not None
        redis_client(self.settings.broker_url).ping()
        return "ok"


class LocalDispatcher:
    """Local mode: each batch runs in a child ``playtester resume`` with its process pool."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.children: list[subprocess.Popen[bytes]] = []

    def start(self, batch: Batch) -> None:
        from storage.db import get_engine

        # Reap finished children so a long-running server does not collect zombies.
        self.children = [c for c in self.children if c.poll() is None]
        command = [sys.executable, "-c", "from api.cli import main; main()", "resume", batch.id]
        # The child must use this server's database even when the app was built with
        # settings other than the environment's.
        env = {**os.environ, "DATABASE_URL": self.database_url}
        self.children.append(
            subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
        start_delivered(get_engine(self.database_url), batch.id)

    def broker_status(self) -> str:
        return "not configured (local mode)"


def make_dispatcher(settings: Settings) -> Dispatcher:
    """The dispatcher the settings call for."""
    if settings.broker_url:
        return CeleryDispatcher(settings)
    return LocalDispatcher(settings.database_url)


def get_settings_dep(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_engine_dep(request: Request) -> Engine:
    from storage.db import get_engine

    return get_engine(request.app.state.settings.database_url)


def get_dispatcher(request: Request) -> Dispatcher:
    dispatcher: Dispatcher = request.app.state.dispatcher
    return dispatcher


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
EngineDep = Annotated[Engine, Depends(get_engine_dep)]
DispatcherDep = Annotated[Dispatcher, Depends(get_dispatcher)]
