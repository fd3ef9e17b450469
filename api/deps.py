"""Dependencies of the routes: settings, the database engine, and who runs the batches.

A ``Dispatcher`` hands a stored batch to whatever plays it: Celery workers when ``BROKER_URL``
is set, otherwise a local process pool started in a child process (``playtester resume``), so
``playtester serve`` works on a laptop with no servers at all.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from typing import Annotated, Protocol

from fastapi import Depends, Request
from sqlalchemy import Engine

from storage.models import Batch
from storage.settings import Settings

log = logging.getLogger(__name__)


class Dispatcher(Protocol):
    """Starts batches, rescues stalled ones, and says whether its broker answers."""

    def start(self, batch: Batch) -> None: ...

    def sweep(self, engine: Engine, batch: Batch) -> None: ...

    def broker_status(self) -> str: ...


class CeleryDispatcher:
    """Distributed mode: one control message per batch, workers do the rest."""

    def __init__(self, broker_url: str) -> None:
        self.broker_url = broker_url

    def start(self, batch: Batch) -> None:
        from workers import dispatch

        dispatch.start(batch.id)

    def sweep(self, engine: Engine, batch: Batch) -> None:
        from workers import dispatch

        queued = dispatch.sweep(engine, batch)
        if queued:
            log.warning("batch %s stalled; queued chunks %s again", batch.id, queued)

    def broker_status(self) -> str:
        from workers.dispatch import redis_client

        redis_client(self.broker_url).ping()
        return "ok"


class LocalDispatcher:
    """Local mode: each batch runs in a child ``playtester resume`` with its process pool."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.children: list[subprocess.Popen[bytes]] = []

    def start(self, batch: Batch) -> None:
        # Reap finished children so a long-running server does not collect zombies.
        self.children = [c for c in self.children if c.poll() is None]
        command = [sys.executable, "-c", "from api.cli import main; main()", "resume", batch.id]
        # The child must use this server's database even when the app was built with
        # settings other than the environment's.
        env = {**os.environ, "DATABASE_URL": self.database_url}
        self.children.append(
            subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )

    def sweep(self, engine: Engine, batch: Batch) -> None:
        # A local run that died leaves its batch resumable with `playtester resume`.
        return None

    def broker_status(self) -> str:
        return "not configured (local mode)"


def make_dispatcher(settings: Settings) -> Dispatcher:
    """The dispatcher the settings call for."""
    if settings.broker_url:
        return CeleryDispatcher(settings.broker_url)
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
