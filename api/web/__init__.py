"""The web dashboard: server-rendered pages (Jinja2) over the same app as the JSON API.

``install(app)`` adds the page routes and the static files (``/static``: CSS, JavaScript,
nothing fetched from elsewhere). Pages: the batch list ``/``, the new-batch form ``/ui/new``,
a batch ``/ui/batches/{id}``, a replay ``/ui/batches/{id}/matches/{index}`` and the
comparison ``/ui/compare``, the published studies ``/ui/studies`` (``api.web.studies``);
board renderers live in ``api.web.boards``.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from api.web import pages, replay, studies, submit
from api.web.templating import HERE


def install(app: FastAPI) -> None:
    """Add the dashboard's routes and static files to ``app``."""
    app.include_router(pages.router)
    app.include_router(submit.router)
    app.include_router(replay.router)
    app.include_router(studies.router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
