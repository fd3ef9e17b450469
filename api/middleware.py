"""ASGI middleware of the API: request bodies over a size limit are refused before parsing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

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
