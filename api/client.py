"""A small HTTP client of the playtester API, used by ``playtester submit``, ``status``,
``study`` and ``tune``."""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import httpx

from engines.core import OptionError

TRANSIENT_STATUS = frozenset({429, 502, 503, 504})
"""Answers that mean "try again": the server busy (as many imports or OpenSpiel checks as it
takes at once), a proxy without its server, a database or broker outage."""
RETRY_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Seconds before each retry of a submission or an import; one more attempt than delays."""
MAX_RETRY_AFTER = 30.0
"""Longest wait before a retry that a server's ``Retry-After`` can ask for."""

T = TypeVar("T")


class ServiceError(RuntimeError):
    """The server refused a request or could not be reached; the message says why."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        field: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        """True when trying again later may succeed (no answer, or a 429/502/503/504)."""
        return self.status is None or self.status in TRANSIENT_STATUS


def _refusal(response: httpx.Response) -> ServiceError:
    """The error an answer of 400 or more stands for, with the server's message and field."""
    try:
        body = response.json()
        message = str(body.get("message") or body.get("detail") or response.text)
        field = body.get("field")
    except ValueError:
        message, field = response.text.strip() or response.reason_phrase, None
    if response.status_code == 401:
        message += " (set API_KEY or pass --api-key)"
    return ServiceError(
        message,
        status=response.status_code,
        field=field,
        retry_after=_seconds(response.headers.get("Retry-After")),
    )


def _seconds(text: str | None) -> float | None:
    """A ``Retry-After`` given in seconds (its date form is not used by this server)."""
    try:
        return max(0.0, float(text)) if text is not None else None
    except ValueError:
        return None


def new_idempotency_key() -> str:
    """A fresh key for one submission (sent again, unchanged, with each retry of it)."""
    return str(uuid.uuid4())


class ServiceClient:
    """Talks to one playtester server; ``api_key`` is sent as a Bearer token when given."""

    def __init__(
        self,
        server: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
        retry_delays: Sequence[float] = RETRY_DELAYS,
    ) -> None:
        self.server = server.rstrip("/")
        self.retry_delays = tuple(retry_delays)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # ``http`` lets a caller bring its own client (an in-process test client, a proxy).
        self.http = http or httpx.Client(base_url=self.server, timeout=timeout)
        self.http.headers.update(headers)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ServiceError(f"cannot reach {self.server}: {exc}") from exc
        if response.status_code >= 400:
            raise _refusal(response)
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json()
        return response.text

    def submit(self, body: dict[str, Any], *, idempotency_key: str | None = None) -> dict[str, Any]:
        """POST /batches: the accepted batch (id, status, links).

        Every attempt carries the same ``Idempotency-Key`` (a fresh one unless given), so
        transient failures (no answer, 502/503/504) are retried after ``retry_delays`` without
        risk: a first attempt that was stored but whose answer was lost returns its batch.
        """
        headers = {"Idempotency-Key": idempotency_key or new_idempotency_key()}
        result: dict[str, Any] = self._retried(
            lambda: self._call("POST", "/batches", json=body, headers=headers)
        )
        return result

    def _retried(self, attempt: Callable[[], T]) -> T:
        """``attempt()``, tried again after each of ``retry_delays`` (or the server's longer
        ``Retry-After``, at most ``MAX_RETRY_AFTER``) while it fails transiently."""
        delays = list(self.retry_delays)
        while True:
            try:
                return attempt()
            except ServiceError as exc:
                if not exc.transient or not delays:
                    raise
                asked = exc.retry_after or 0.0
                time.sleep(min(max(delays.pop(0), asked), MAX_RETRY_AFTER))

    def check_batch(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST /batches/check: the batch as the server would store it, nothing stored;
        ``OptionError`` naming the field the server refuses."""
        try:
            result: dict[str, Any] = self._call("POST", "/batches/check", json=dict(body))
        except ServiceError as exc:
            if exc.status == 422:
                raise OptionError(str(exc), field=exc.field or "batch") from None
            raise
        return result

    def batch(self, batch_id: str) -> dict[str, Any]:
        """GET /batches/{id}: the batch with its progress."""
        result: dict[str, Any] = self._call("GET", f"/batches/{batch_id}")
        return result

    def batches(self, **filters: Any) -> dict[str, Any]:
        """GET /batches: a page of batches (filters: game, status, limit, offset)."""
        params = {k: v for k, v in filters.items() if v is not None}
        result: dict[str, Any] = self._call("GET", "/batches", params=params)
        return result

    def cancel(self, batch_id: str) -> dict[str, Any]:
        """POST /batches/{id}/cancel."""
        result: dict[str, Any] = self._call("POST", f"/batches/{batch_id}/cancel")
        return result

    def report(self, batch_id: str, *, compensation: bool = True) -> Any:
        """GET /batches/{id}/report (JSON); ``compensation=False`` spares the server the
        komi bootstrap and leaves ``fair_compensation`` null."""
        params = None if compensation else {"compensation": "false"}
        return self._call("GET", f"/batches/{batch_id}/report", params=params)

    def compare(self, batch_a: str, batch_b: str) -> Any:
        """GET /compare?a=…&b=…: the differences a − b."""
        return self._call("GET", "/compare", params={"a": batch_a, "b": batch_b})

    def archive(self, batch_id: str, folder: Path, *, moves: bool = True) -> None:
        """GET /batches/{id}/archive, unpacked into ``folder`` (a new one) under the checks a
        server makes of an upload (``storage.archive.zipped.unpack``); the zip is spooled to a
        temporary file on the way, never held in memory."""
        from storage.archive.zipped import unpack

        path = f"/batches/{batch_id}/archive"
        with tempfile.TemporaryFile() as spool:
            try:
                params = {"moves": str(moves).lower()}
                with self.http.stream("GET", path, params=params) as response:
                    if response.status_code >= 400:
                        response.read()
                        raise _refusal(response)
                    for piece in response.iter_bytes():
                        spool.write(piece)
            except httpx.HTTPError as exc:
                raise ServiceError(f"cannot reach {self.server}: {exc}") from exc
            spool.seek(0)
            unpack(spool, folder)

    def import_archive(self, folder: Path, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """POST /batches/import: the archive folder ``folder`` sent as a zip (built in a
        temporary file); what the import did. With ``idempotency_key``, the server keeps that
        key with the imported batch (``GET /batches?key=`` finds it). A busy server or an
        outage is tried again as for ``submit``: an import adds nothing twice."""
        from storage.archive.zipped import pack

        with tempfile.TemporaryFile() as spool:
            pack(folder, spool)
            size = spool.tell()
            headers = {"Content-Type": "application/zip", "Content-Length": str(size)}
            if idempotency_key is not None:
                headers["Idempotency-Key"] = idempotency_key

            def attempt() -> dict[str, Any]:
                spool.seek(0)
                answer: dict[str, Any] = self._call(
                    "POST", "/batches/import", content=spool, headers=headers
                )
                return answer

            return self._retried(attempt)

    def games(self) -> list[dict[str, Any]]:
        """GET /games: the server's games and agents, budgets capped at its limits."""
        result: list[dict[str, Any]] = self._call("GET", "/games")
        return result

    def health(self) -> dict[str, Any]:
        """GET /healthz."""
        try:
            response = self.http.get("/healthz")
        except httpx.HTTPError as exc:
            raise ServiceError(f"cannot reach {self.server}: {exc}") from exc
        result: dict[str, Any] = response.json()
        return result
