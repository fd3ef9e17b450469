"""FastAPI dependencies of the routes: the settings, the database engine, and the dispatcher
(``workers.dispatchers``) that runs the batches, all taken from the app's state."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy import Engine

from storage.settings import Settings
from workers.dispatchers import Dispatcher


def get_settings_dep(request: Request) -> Settings:
    """The settings the app was built with."""
    settings: Settings = request.app.state.settings
    return settings


def get_engine_dep(request: Request) -> Engine:
    """The engine of the app's database (one per URL and process)."""
    from storage.db import get_engine

    return get_engine(request.app.state.settings.database_url)


def get_dispatcher(request: Request) -> Dispatcher:
    """The app's dispatcher (``workers.dispatchers.make_dispatcher``)."""
    dispatcher: Dispatcher = request.app.state.dispatcher
    return dispatcher


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
EngineDep = Annotated[Engine, Depends(get_engine_dep)]
DispatcherDep = Annotated[Dispatcher, Depends(get_dispatcher)]
