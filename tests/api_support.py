"""An in-process API on a fresh SQLite file, with a dispatcher that records what it is asked."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from storage.models import Batch
from storage.settings import Settings


class RecordingDispatcher:
    """Stands in for the workers: remembers the batches it was asked to start."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.closed = False

    def start(self, batch: Batch) -> None:
        self.started.append(batch.id)

    def broker_status(self) -> str:
        return "ok"

    def close(self) -> None:
        self.closed = True


def point_settings_at(monkeypatch: pytest.MonkeyPatch, database_url: str) -> None:
    """Make the environment's settings name this database too, for code that reads them
    directly (``storage.db.get_engine()`` without a URL) rather than through the app."""
    from storage.settings import get_settings

    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.delenv("BROKER_URL", raising=False)
    get_settings.cache_clear()


def forget_settings() -> None:
    """Drop the cached settings so later tests read the restored environment."""
    from storage.settings import get_settings

    get_settings.cache_clear()


def make_api(database_url: str, **settings: Any) -> tuple[FastAPI, RecordingDispatcher]:
    from api.app import create_app

    app = create_app(Settings(database_url=database_url, **settings))
    dispatcher = RecordingDispatcher()
    app.state.dispatcher = dispatcher
    return app, dispatcher


def client_for(app: FastAPI) -> TestClient:
    return TestClient(app, raise_server_exceptions=False)


def route_cli_to(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``playtester submit`` / ``status`` talk to ``app`` in process, whatever server
    they are given."""
    import api.cli.service as cli_service
    from api.client import ServiceClient

    monkeypatch.setattr(
        cli_service,
        "client_for",
        lambda server, key: ServiceClient(server, api_key=key, http=client_for(app)),
    )
