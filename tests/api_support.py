"""An in-process API on a fresh SQLite file, with a dispatcher that records what it is asked."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from storage.models import Batch
from storage.settings import Settings


class RecordingDispatcher:
    """Stands in for the workers: remembers the batches it was asked to start."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.swept: list[str] = []

    def start(self, batch: Batch) -> None:
        self.started.append(batch.id)

    def sweep(self, engine: Engine, batch: Batch) -> None:
        self.swept.append(batch.id)

    def broker_status(self) -> str:
        return "ok"


def make_api(database_url: str, **settings: Any) -> tuple[FastAPI, RecordingDispatcher]:
    from api.app import create_app

    app = create_app(Settings(database_url=database_url, **settings))
    dispatcher = RecordingDispatcher()
    app.state.dispatcher = dispatcher
    return app, dispatcher


def client_for(app: FastAPI) -> TestClient:
    return TestClient(app, raise_server_exceptions=False)
