"""ASGI middleware of the API: request bodies over a size limit are refused before parsing, and
writes a browser sends from another site are refused before they reach a route."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from api.errors import error_response

MAX_BODY_BYTES = 64 * 1024
"""Largest request body accepted; a batch request is a few hundred bytes."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


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
        response = error_response(
            413, f"request body is larger than {self.limit} bytes; send a smaller one", "body"
        )
        await response(scope, receive, send)


WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
TRUSTED_FETCH_SITES = frozenset({"same-origin", "none"})
"""``Sec-Fetch-Site`` values of a request the page itself, or the user, made."""
DEFAULT_PORTS = {"http": "80", "https": "443"}


def _host_port(scheme: str, netloc: str) -> str:
    """``netloc`` lower-cased, without the scheme's default port."""
    netloc = netloc.strip().lower()
    default = DEFAULT_PORTS.get(scheme)
    return netloc.removesuffix(f":{default}") if default else netloc


def origin_of(url: str) -> str | None:
    """The ``host[:port]`` of an origin or URL as compared here; None when it has none."""
    parts = urlsplit(url.strip())
    if parts.scheme not in DEFAULT_PORTS or not parts.netloc:
        return None
    return _host_port(parts.scheme, parts.netloc)


class SameOrigin:
    """Refuse (403) a write that a browser sends from another site.

    With ``API_KEY`` unset nothing else stands between a page on another site and a form that
    posts here: a browser sends such a form with the user's access to this server. Browsers
    label every request: ``Sec-Fetch-Site`` (anything but ``same-origin`` or ``none`` is
    refused) and, on a write, ``Origin`` (refused unless it is this server: the host the
    request was sent to, or ``public_url``). A client that sends neither (the command line,
    scripts, ``curl``) is no browser acting for someone else, and passes.
    """

    def __init__(self, app: ASGIApp, public_url: str | None = None) -> None:
        self.app = app
        self.public = origin_of(public_url) if public_url else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") in WRITE_METHODS:
            problem = self._cross_site(scope)
            if problem is not None:
                response = error_response(403, problem)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _cross_site(self, scope: Scope) -> str | None:
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []
        }
        site = headers.get("sec-fetch-site")
        if site is not None and site.strip().lower() not in TRUSTED_FETCH_SITES:
            return (
                f"cross-site request refused (Sec-Fetch-Site: {site[:40]}): writes come from "
                "this server's own pages or from clients that are not browsers"
            )
        origin = headers.get("origin")
        if origin is None:
            return None
        own = {self.public, _host_port(str(scope.get("scheme", "http")), headers.get("host", ""))}
        if origin_of(origin) in own - {None, ""}:
            return None
        return (
            f"cross-origin request refused (Origin: {origin[:80]}): writes come from this "
            "server's own pages or from clients that are not browsers"
        )
