"""The API's error policy: every error answer is JSON ``{"message": ..., "field": ...}`` with a
message a person can act on (422 for bad input, 404 for an unknown batch, 409 for a batch
whose stored rows cannot be read (``storage.soundness``), 429 with ``Retry-After`` when as
many OpenSpiel checks run and wait as the server takes, 503 when the database
or the broker does not answer, 500 for a bug); stack traces stay in the server log.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import iter_route_contexts
from starlette.exceptions import HTTPException as StarletteHTTPException

from engines.core import GameError, OptionError
from storage.crud import BatchIsLive, NotFound
from storage.soundness import UnsoundBatch
from workers.native_games import ChecksBusyError
from workers.outages import BROKER_DOWN, DATABASE_DOWN

log = logging.getLogger(__name__)


def error_response(
    status: int, message: str, field: str | None = None, **extra: Any
) -> JSONResponse:
    """The JSON error answer: ``{"message": ..., "field": ...}`` with this status. A message
    that echoes a lone surrogate someone sent (no UTF-8 can hold one) shows it escaped."""
    return JSONResponse(
        {"message": _utf8(message), "field": None if field is None else _utf8(field)},
        status_code=status,
        **extra,
    )


def _utf8(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


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
    if type(cause) is ValueError:
        # JSON syntax errors reach the validation handler as ``json_invalid``; the plain
        # ValueError left is Python's limit on the digits of an integer (4,300).
        return "the request body holds a number with too many digits"
    return "the request body could not be read as JSON"


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def validation_error_body(found: Sequence[Any]) -> dict[str, Any]:
    """The 422 answer for pydantic's ``errors()``: the first error's field and message, and
    every error under ``errors``."""
    errors = []
    worded = []
    for e in found:
        cause = (e.get("ctx") or {}).get("error")
        if e.get("type") == "json_invalid":  # its loc is the character offset
            error = {"field": "body", "message": "the request body is not valid JSON"}
        elif isinstance(cause, OptionError):  # a validator's refusal names its own field
            error = {"field": cause.field, "message": str(cause)}
        else:
            error = {"field": _field_of(e.get("loc", ())), "message": str(e.get("msg"))}
        errors.append(error)
        worded.append(isinstance(cause, OptionError))
    first = errors[0] if errors else {"field": "body", "message": "invalid request"}
    message = first["message"] if worded[:1] == [True] else f"{first['field']}: {first['message']}"
    return {"message": message, "field": first["field"], "errors": errors}


async def on_validation(_: Request, exc: RequestValidationError) -> JSONResponse:
    """422 for a request that fails its route's declared types."""
    return JSONResponse(validation_error_body(exc.errors()), status_code=422)


async def on_option(_: Request, exc: OptionError) -> JSONResponse:
    """422 naming the option or agent parameter at fault."""
    return error_response(422, str(exc), exc.field)


async def on_game(_: Request, exc: Exception) -> JSONResponse:
    """422 for any other bad input the engines refuse."""
    return error_response(422, str(exc))


async def on_not_found(_: Request, exc: Exception) -> JSONResponse:
    """404 for a batch or match no one stored."""
    return error_response(404, str(exc.args[0]) if exc.args else "not found")


async def on_unsound(_: Request, exc: Exception) -> JSONResponse:
    """409 for a batch whose stored rows no match can produce (the message names the row), or
    one that cannot be deleted while it is queued or running."""
    return error_response(409, str(exc))


async def on_busy(_: Request, exc: ChecksBusyError) -> JSONResponse:
    """429 for a request naming an OpenSpiel game when the checks' queue is full: it names
    the game and says when to try again."""
    headers = {"Retry-After": str(exc.retry_after)}
    return error_response(429, str(exc), "game", headers=headers)


async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Starlette's and FastAPI's own errors: the router's 404 and 405, an unreadable body, a
    route's ``HTTPException``."""
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
            return error_response(code, message, headers={"Allow": _allowed(request)})
    return error_response(code, message, headers=exc.headers)


def _allowed(request: Request) -> str:
    """Every method the routes of this path's template take, as the OpenAPI document lists
    them. The router's own 405 names only the first route that matched the path (``POST`` on
    ``/batches``, which takes ``GET`` too). Where several templates match, the one with the
    longest fixed part is the path's, as OpenAPI matches a concrete path before a templated
    one: ``/batches/check`` is not ``/batches/{batch_id}``."""
    path = request.scope.get("path", "")
    by_fixed: dict[int, set[str]] = {}
    for context in iter_route_contexts(request.app.routes):
        pattern = getattr(context, "path_regex", None)
        if pattern is not None and pattern.match(path):
            fixed = len(PARAMETER.sub("", getattr(context, "path", "")))
            by_fixed.setdefault(fixed, set()).update(context.methods or ())
    return ", ".join(sorted(by_fixed[max(by_fixed)])) if by_fixed else ""


PARAMETER = re.compile(r"\{[^}]*\}")
"""A parameter in a route's path template."""


async def on_database(_: Request, exc: Exception) -> JSONResponse:
    log.warning("database unreachable: %s", exc)
    return error_response(503, "the database is unreachable; try again in a moment")


async def on_broker(_: Request, exc: Exception) -> JSONResponse:
    log.warning("broker unreachable: %s", exc)
    return error_response(503, "the broker is unreachable; try again in a moment")


async def on_unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error", exc_info=exc)
    return error_response(500, "internal error; the server log has the details")


Handler = Callable[[Request, Any], Awaitable[Response]]
"""An error handler: the request and the error (of the class it is installed for)."""

HANDLERS: tuple[tuple[type[Exception], Handler], ...] = (
    (RequestValidationError, on_validation),
    (OptionError, on_option),
    (GameError, on_game),
    (NotFound, on_not_found),
    (UnsoundBatch, on_unsound),
    (BatchIsLive, on_unsound),
    (ChecksBusyError, on_busy),
    # Starlette's class, not only FastAPI's subclass: the router's own 404 and 405 and
    # FastAPI's "error parsing the body" are raised as Starlette exceptions.
    (StarletteHTTPException, on_http),
    *((outage, on_database) for outage in DATABASE_DOWN),
    *((outage, on_broker) for outage in BROKER_DOWN),
    (Exception, on_unexpected),
)
"""Every known error and the handler that turns it into a JSON answer."""


def install_error_handlers(app: FastAPI, wrap: Callable[[Handler], Handler] | None = None) -> None:
    """Turn every known error into a JSON answer with a message and the field at fault;
    ``wrap`` may dress each handler's answer differently for some requests (the dashboard's
    pages answer with a page)."""
    for error, handler in HANDLERS:
        app.add_exception_handler(error, wrap(handler) if wrap else handler)
