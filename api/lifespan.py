"""What the API does while it is up: take part in the one sweeper (distributed mode), and stop
what the dispatcher runs at shutdown."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI

from storage.settings import Settings
from workers import sweeper


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Take part in the one sweeper while the server is up (distributed mode), and stop what
    the dispatcher runs at shutdown."""
    settings: Settings = app.state.settings
    task = asyncio.create_task(sweeper.run_forever(settings)) if settings.broker_url else None
    try:
        yield
    finally:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await asyncio.to_thread(app.state.dispatcher.close)
