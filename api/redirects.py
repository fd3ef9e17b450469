"""The trailing-slash redirect, relative: ``/batches/`` answers 307 to ``/batches``.

Starlette's own redirect writes an absolute URL built from the request's ``Host`` header, which
any client sets (``Host: evil.example`` would send a browser to another site). Here the
``Location`` is the path alone, with the query, so the client stays on the host it asked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI
from starlette.responses import RedirectResponse
from starlette.routing import Match

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]


def _other_slash(path: str) -> str:
    return path.rstrip("/") if path.endswith("/") else path + "/"


def slash_location(app: FastAPI, scope: Scope) -> str | None:
    """Where a request no route matches is redirected: the same path with its trailing slash
    removed (or added) when a route matches that, as a relative reference; else None."""
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    if scope.get("type") != "http" or path.removeprefix(root) in ("", "/"):
        return None
    other = _other_slash(path)
    # A reference starting with two slashes (or a slash and a backslash, for browsers) would
    # name another host.
    if not other.startswith("/") or other[1:2] in ("/", "\\"):
        return None
    candidate = {**scope, "path": other}
    if not any(route.matches(candidate)[0] is not Match.NONE for route in app.router.routes):
        return None
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    return other + (f"?{query}" if query else "")


def relative_slash_redirects(app: FastAPI) -> None:
    """Replace the router's trailing-slash redirect by one with a relative ``Location``."""
    app.router.redirect_slashes = False
    fallback: ASGIApp = app.router.default

    async def default(scope: Scope, receive: Any, send: Any) -> None:
        location = slash_location(app, scope)
        if location is None:
            await fallback(scope, receive, send)
            return
        await RedirectResponse(location, status_code=307)(scope, receive, send)

    app.router.default = default
