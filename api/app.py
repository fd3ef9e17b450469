"""The HTTP API: ``uvicorn api.app:app`` (or ``playtester serve``).

Routes only validate, call, and shape answers. Every error answer is JSON
``{"message": ..., "field": ...}`` with a message a person can act on; stack traces stay in
the server log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from http import HTTPStatus
from typing import Any

import kombu.exceptions
import redis.exceptions
import sqlalchemy.exc
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from api import routes_batches, routes_games, routes_reports
from api.deps import make_dispatcher
from engines.core import GameError, OptionError
from storage.crud import NotFound
from storage.settings import Settings, get_settings
from workers import sweeper

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024
"""Largest request body accepted; a batch request is a few hundred bytes."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _error(status: int, message: str, field: str | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse({"message": message, "field": field}, status_code=status, **extra)


class BodyLimit:
    """Reject request bodies over ``limit`` bytes with a 413 naming ``body``, before parsing."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._reject(scope, receive, send)
            return
        # Bodies sent without a length (chunked) are read up to the limit first.
        messages: list[Message] = []
        size = 0
        if declared is None and scope.get("method") in {"POST", "PUT", "PATCH"}:
            while True:
                message = await receive()
                messages.append(message)
                size += len(message.get("body", b""))
                if size > self.limit:
                    await self._reject(scope, receive, send)
                    return
                if message["type"] != "http.request" or not message.get("more_body"):
                    break

        async def replay() -> Message:
            if messages:
                return messages.pop(0)
            return await receive()

        await self.app(scope, replay, send)

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = _error(
            413, f"request body is larger than {self.limit} bytes; send a smaller one", "body"
        )
        await response(scope, receive, send)


def _field_of(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [p for p in loc if p not in {"body", "query", "path", "header"}]
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "body"


def _unreadable_body(cause: BaseException | None) -> str:
    """Why a request body could not be parsed as JSON, in words."""
    if isinstance(cause, UnicodeDecodeError):
        return "the request body is not UTF-8 text"
    if isinstance(cause, RecursionError):
        return "the request body nests arrays or objects too deeply"
    if isinstance(cause, ValueError) and "digits" in str(cause):
        return "the request body holds a number with too many digits"
    return "the request body could not be read as JSON"


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def install_error_handlers(app: FastAPI) -> None:
    """Turn every known error into a JSON answer with a message and the field at fault."""

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = []
        for e in exc.errors():
            if e.get("type") == "json_invalid":  # its loc is the character offset
                error = {"field": "body", "message": "the request body is not valid JSON"}
            else:
                error = {"field": _field_of(e.get("loc", ())), "message": str(e.get("msg"))}
            errors.append(error)
        first = errors[0] if errors else {"field": "body", "message": "invalid request"}
        message = f"{first['field']}: {first['message']}"
        return JSONResponse(
            {"message": message, "field": first["field"], "errors": errors}, status_code=422
        )

    @app.exception_handler(OptionError)
    async def _option(_: Request, exc: OptionError) -> JSONResponse:
        return _error(422, str(exc), exc.field)

    @app.exception_handler(GameError)
    async def _game(_: Request, exc: GameError) -> JSONResponse:
        return _error(422, str(exc))

    @app.exception_handler(NotFound)
    async def _not_found(_: Request, exc: NotFound) -> JSONResponse:
        return _error(404, str(exc.args[0]) if exc.args else "not found")

    # Starlette's class, not only FastAPI's subclass: the router's own 404 and 405 and
    # FastAPI's "error parsing the body" are raised as Starlette exceptions.
    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = exc.status_code
        if code == 400 and exc.__cause__ is not None:  # the body did not parse
            return _error(422, _unreadable_body(exc.__cause__), "body")
        message = str(exc.detail)
        if message == HTTPStatus(code).phrase:  # raised by the router, not by a route
            path = _cut(request.url.path)
            if code == 404:
                message = f"no route {request.method} {path}; the routes are listed at /docs"
            elif code == 405:
                message = f"{path} does not accept {request.method}; see the Allow header"
        return _error(code, message, headers=exc.headers)

    @app.exception_handler(sqlalchemy.exc.OperationalError)
    @app.exception_handler(sqlalchemy.exc.InterfaceError)
    async def _database(_: Request, exc: Exception) -> JSONResponse:
        log.warning("database unreachable: %s", exc)
        return _error(503, "the database is unreachable; try again in a moment")

    @app.exception_handler(redis.exceptions.ConnectionError)
    @app.exception_handler(kombu.exceptions.OperationalError)
    async def _broker(_: Request, exc: Exception) -> JSONResponse:
        log.warning("broker unreachable: %s", exc)
        return _error(503, "the broker is unreachable; try again in a moment")

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error", exc_info=exc)
        return _error(500, "internal error; the server log has the details")


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
    app.state.dispatcher = make_dispatcher(settings)
    install_error_handlers(app)
    app.include_router(routes_batches.router)
    app.include_router(routes_games.router)
    app.include_router(routes_reports.router)
    app.add_middleware(BodyLimit)
    return app


app = create_app()
