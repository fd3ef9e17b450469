"""The API's error policy: every error answer is JSON ``{"message": ..., "field": ...}`` with a
message a person can act on (422 for bad input, 404 for an unknown batch, 503 when the database
or the broker does not answer, 500 for a bug); stack traces stay in the server log.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from engines.core import GameError, OptionError
from storage.crud import NotFound
from workers.outages import BROKER_DOWN, DATABASE_DOWN

log = logging.getLogger(__name__)


def error_response(
    status: int, message: str, field: str | None = None, **extra: Any
) -> JSONResponse:
    """The JSON error answer: ``{"message": ..., "field": ...}`` with this status."""
    return JSONResponse({"message": message, "field": field}, status_code=status, **extra)


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


def validation_error_body(found: Sequence[Any]) -> dict[str, Any]:
    """The 422 answer for pydantic's ``errors()``: the first error's field and message, and
    every error under ``errors``."""
    errors = []
    for e in found:
        if e.get("type") == "json_invalid":  # its loc is the character offset
            error = {"field": "body", "message": "the request body is not valid JSON"}
        else:
            error = {"field": _field_of(e.get("loc", ())), "message": str(e.get("msg"))}
        errors.append(error)
    first = errors[0] if errors else {"field": "body", "message": "invalid request"}
    message = f"{first['field']}: {first['message']}"
    return {"message": message, "field": first["field"], "errors": errors}


def install_error_handlers(app: FastAPI) -> None:
    """Turn every known error into a JSON answer with a message and the field at fault."""

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(validation_error_body(exc.errors()), status_code=422)

    @app.exception_handler(OptionError)
    async def _option(_: Request, exc: OptionError) -> JSONResponse:
        return error_response(422, str(exc), exc.field)

    @app.exception_handler(GameError)
    async def _game(_: Request, exc: GameError) -> JSONResponse:
        return error_response(422, str(exc))

    @app.exception_handler(NotFound)
    async def _not_found(_: Request, exc: NotFound) -> JSONResponse:
        return error_response(404, str(exc.args[0]) if exc.args else "not found")

    # Starlette's class, not only FastAPI's subclass: the router's own 404 and 405 and
    # FastAPI's "error parsing the body" are raised as Starlette exceptions.
    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = exc.status_code
        if code == 400 and exc.__cause__ is not None:  # the body did not parse
            return error_response(422, _unreadable_body(exc.__cause__), "body")
        message = str(exc.detail)
        if message == HTTPStatus(code).phrase:  # raised by the router, not by a route
            path = _cut(request.url.path)
            if code == 404:
                message = f"no route {request.method} {path}; the routes are listed at /docs"
            elif code == 405:
                message = f"{path} does not accept {request.method}; see the Allow header"
        return error_response(code, message, headers=exc.headers)

    async def _database(_: Request, exc: Exception) -> JSONResponse:
        log.warning("database unreachable: %s", exc)
        return error_response(503, "the database is unreachable; try again in a moment")

    async def _broker(_: Request, exc: Exception) -> JSONResponse:
        log.warning("broker unreachable: %s", exc)
        return error_response(503, "the broker is unreachable; try again in a moment")

    for outage in DATABASE_DOWN:
        app.add_exception_handler(outage, _database)
    for outage in BROKER_DOWN:
        app.add_exception_handler(outage, _broker)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error", exc_info=exc)
        return error_response(500, "internal error; the server log has the details")
