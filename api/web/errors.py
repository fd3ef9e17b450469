"""Errors on the dashboard's pages answer with a page, not with JSON: the same status, message
and field as the API's own answer (``api.errors``), inside the dashboard's frame.

A page is a route of the dashboard (``/`` or under ``/ui/``) that answers HTML
(``response_class=HTMLResponse``), or any path under ``/ui/`` that no route serves. The JSON
the pages poll (``/ui/live``, a replay's positions) keeps the API's JSON errors.
"""

from __future__ import annotations

import json
from http import HTTPStatus

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from fastapi.routing import APIRoute

from api.errors import Handler
from api.web.templating import page

PAGES_PREFIX = "/ui/"
KEPT_HEADERS = ("www-authenticate", "allow", "retry-after")
"""Headers of the API's error answer that a page answer keeps (they tell the client what to do)."""


def _dashboard_path(path: str) -> bool:
    return path == "/" or path.startswith(PAGES_PREFIX)


def is_page(request: Request) -> bool:
    """Whether the request is for one of the dashboard's pages (not the API's own HTML, such
    as a report's ``.html``)."""
    route = request.scope.get("route")
    if isinstance(route, APIRoute):
        return route.response_class is HTMLResponse and _dashboard_path(route.path)
    path = str(request.scope.get("path", ""))
    return path.removeprefix(request.scope.get("root_path", "")).startswith(PAGES_PREFIX)


def error_page(request: Request, status: int, message: str, field: str | None) -> HTMLResponse:
    """The dashboard's error page: what went wrong, and the field at fault when there is one."""
    title = HTTPStatus(status).phrase.capitalize()
    return page(request, "error.html", {"title": title, "message": message, "field": field}, status)


def as_pages(handler: Handler) -> Handler:
    """``handler`` (one of the API's error handlers), answering with a page on pages."""

    async def answer(request: Request, exc: Exception) -> Response:
        response = await handler(request, exc)
        if not is_page(request):
            return response
        body = json.loads(bytes(response.body))
        shown = error_page(request, response.status_code, body["message"], body.get("field"))
        for name in KEPT_HEADERS:
            if name in response.headers:
                shown.headers[name] = response.headers[name]
        return shown

    return answer
