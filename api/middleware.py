"""ASGI middleware of the API: request bodies over a size limit are refused before parsing,
requests for a host name this server is not served at are refused, and writes a browser sends
from another site are refused before they reach a route."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from api.errors import error_response

MAX_BODY_BYTES = 64 * 1024
"""Largest request body accepted; a batch request is a few hundred bytes."""
MAX_ARCHIVE_BYTES = 256 * 1024 * 1024
"""Largest body of ``POST /batches/import``: a batch archive as a zip (about 200 bytes a match
with its moves, so a batch of a million matches)."""
ROUTE_LIMITS = {"/batches/import": MAX_ARCHIVE_BYTES}
"""Routes that take more than ``MAX_BODY_BYTES``. Their bodies must declare their length
(``Content-Length``): nothing is held in memory to count them, and the server reads no more
than the length declared."""

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
"""Methods whose requests carry a body (an ``OPTIONS`` or ``DELETE`` needs no length)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    """Reject request bodies over ``limit`` bytes (over ``routes[path]`` for the routes named
    there) with a 413 naming ``body``, before parsing."""

    def __init__(
        self, app: ASGIApp, limit: int = MAX_BODY_BYTES, routes: dict[str, int] | None = None
    ) -> None:
        self.app = app
        self.limit = limit
        self.routes = ROUTE_LIMITS if routes is None else routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        path = str(scope.get("path", ""))
        route = path.removeprefix(str(scope.get("root_path", ""))) or path
        limit = self.routes.get(route, self.limit)
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await self._reject(scope, receive, send, limit)
            return
        if route in self.routes and declared is None and scope.get("method") in BODY_METHODS:
            response = error_response(
                411, f"send the body with a Content-Length (at most {limit} bytes)", "body"
            )
            await response(scope, receive, send)
            return
        # Bodies sent without a length (chunked) are read up to the limit first.
        messages: list[Message] = []
        size = 0
        if declared is None and scope.get("method") in BODY_METHODS:
            while True:
                message = await receive()
                messages.append(message)
                size += len(message.get("body", b""))
                if size > self.limit:
                    await self._reject(scope, receive, send, self.limit)
                    return
                if message["type"] != "http.request" or not message.get("more_body"):
                    break

        async def replay() -> Message:
            if messages:
                return messages.pop(0)
            return await receive()

        await self.app(scope, replay, send)

    async def _reject(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        response = error_response(
            413, f"request body is larger than {limit} bytes; send a smaller one", "body"
        )
        await response(scope, receive, send)


WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
TRUSTED_FETCH_SITES = frozenset({"same-origin", "none"})
"""``Sec-Fetch-Site`` values of a request the page itself, or the user, made."""
BROWSER_HEADERS = ("origin", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest")
"""Headers only browsers send: a request carrying one is a browser's, acting for its user."""
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""Names that always mean this machine; a browser resolves ``*.localhost`` itself too."""
DEFAULT_PORTS = {"http": "80", "https": "443"}


def _host_port(scheme: str, netloc: str) -> str:
    """``netloc`` lower-cased, without the scheme's default port."""
    netloc = netloc.strip().lower()
    default = DEFAULT_PORTS.get(scheme)
    return netloc.removesuffix(f":{default}") if default else netloc


def origin_of(url: str) -> str | None:
    """The ``scheme://host[:port]`` of an origin or URL as compared here (lower case, without
    the scheme's default port); None when it has none."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.netloc:
        return None
    return f"{scheme}://{_host_port(scheme, parts.netloc)}"


def host_name(host: str) -> str | None:
    """The name in a ``Host`` header (``[::1]:8000`` → ``::1``), lower case; None when the
    header is no host name at all."""
    try:
        name = urlsplit(f"//{host.strip()}").hostname
    except ValueError:
        return None
    return name or None


class SameOrigin:
    """Refuse (403) what a browser sends to this server on another site's behalf.

    With ``API_KEY`` unset nothing else stands between a page on another site and a form that
    posts here: a browser sends such a form with the user's access to this server. Browsers
    label every request: ``Sec-Fetch-Site`` (on a write, anything but ``same-origin`` or
    ``none`` is refused) and, on a write, ``Origin`` (refused unless it is this server, scheme
    included: ``public_url`` when the request names its host, else the host and scheme the
    request came by).

    A page that rebinds its own name to this server's address (DNS rebinding) is same-origin
    with itself, so both labels look right; what gives it away is the ``Host`` it sends, its
    own name. Every request is therefore refused unless its ``Host`` is a name this server is
    served at: a loopback name, ``public_url``'s host, or the address the connection arrived at
    (the bind address). Not only a browser's: an older browser sends neither ``Origin`` nor
    ``Sec-Fetch-*`` on a read, so a rebinding page would read the answers. A request with no
    ``Host`` at all (HTTP/1.0; no browser sends one) names no other site and passes, unless it
    carries a browser's headers. Past the name, a client that is no browser (the command line,
    scripts, ``curl``) acts for no one else and passes the write checks.
    """

    def __init__(self, app: ASGIApp, public_url: str | None = None) -> None:
        self.app = app
        self.public = origin_of(public_url) if public_url else None
        self.public_host = urlsplit(public_url).hostname if public_url else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            problem = self._refusal(scope)
            if problem is not None:
                response = error_response(403, problem)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> str | None:
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []
        }
        browser = any(name in headers for name in BROWSER_HEADERS)
        sent = headers.get("host")
        host = sent or ""
        if (sent is not None or browser) and not self._served(host, scope):
            return (
                f"request for host {host[:80]!r} refused: this server answers at its "
                "own address, loopback names and PUBLIC_URL (set PUBLIC_URL to the address "
                "you open)"
            )
        if not browser or scope.get("method") not in WRITE_METHODS:
            return None
        site = headers.get("sec-fetch-site")
        if site is not None and site.strip().lower() not in TRUSTED_FETCH_SITES:
            return (
                f"cross-site request refused (Sec-Fetch-Site: {site[:40]}): writes come from "
                "this server's own pages or from clients that are not browsers"
            )
        origin = headers.get("origin")
        if origin is None:
            return None
        # Reached by its public name, the server is what PUBLIC_URL says, scheme included (a
        # proxy in front may speak plain HTTP to it); by any other served name, what the
        # connection was.
        own: str | None = self.public
        if own is None or host_name(host) != self.public_host:
            own = origin_of(f"{scope.get('scheme', 'http')}://{host}")
        if own is not None and origin_of(origin) == own:
            return None
        return (
            f"cross-origin request refused (Origin: {origin[:80]}): writes come from this "
            "server's own pages or from clients that are not browsers"
        )

    def _served(self, host: str, scope: Scope) -> bool:
        name = host_name(host)
        if name is None:
            return False
        if name in LOOPBACK_NAMES or name.endswith(".localhost") or name == self.public_host:
            return True
        server = scope.get("server")
        return server is not None and name == str(server[0]).lower()
