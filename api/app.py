"""The HTTP API: ``uvicorn api.app:app`` (or ``playtester serve``).

Routes only validate, call, and shape answers. The error policy is in ``api.errors``, the body
limit in ``api.middleware``, what runs while the server is up in ``api.lifespan``, and who
plays the batches in ``workers.dispatchers``.
"""

from __future__ import annotations

import sys

from fastapi import FastAPI

from api import routes_archives, routes_batches, routes_games, routes_reports, web
from api.errors import install_error_handlers
from api.lifespan import lifespan
from api.middleware import BodyLimit, SameOrigin
from api.redirects import relative_slash_redirects
from api.web.errors import as_pages
from storage.settings import Settings, get_settings
from workers.dispatchers import make_dispatcher

PLAYTESTER_COMMAND = (sys.executable, "-c", "from api.cli import main; main()")
"""The ``playtester`` command line, run as a child process in local mode (``resume``)."""


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the API for ``settings`` (default: the environment's)."""
    settings = settings or get_settings()
    app = FastAPI(
        title="playtester",
        summary="Board-game balance questions answered by batches of computer matches.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.dispatcher = make_dispatcher(settings, local_command=PLAYTESTER_COMMAND)
    install_error_handlers(app, wrap=as_pages)
    app.include_router(routes_archives.router)
    app.include_router(routes_batches.router)
    app.include_router(routes_games.router)
    app.include_router(routes_reports.router)
    web.install(app)
    relative_slash_redirects(app)
    app.add_middleware(SameOrigin, public_url=settings.public_url)
    app.add_middleware(BodyLimit)
    return app


app = create_app()
