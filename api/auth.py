"""Bearer-key protection: writes need ``API_KEY`` when it is set, reads only if asked."""

from __future__ import annotations

import hmac

from fastapi import HTTPException, Request, status

from storage.settings import Settings


def presented_key(request: Request) -> str | None:
    """The key of the request's ``Authorization: Bearer <key>`` header, if it has one."""
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def key_accepted(settings: Settings, given: str | None) -> bool:
    """Whether ``given`` opens writes: anything when ``API_KEY`` is unset, else that key
    (compared in constant time)."""
    expected = settings.api_key
    if expected is None:
        return True
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def check_key(settings: Settings, request: Request) -> None:
    """Raise 401 unless the request carries the configured key."""
    if not key_accepted(settings, presented_key(request)):
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="missing or wrong API key: send the header 'Authorization: Bearer <API_KEY>'",
            headers={"WWW-Authenticate": "Bearer"},
        )


def require_write(request: Request) -> None:
    """Dependency of every route that changes something."""
    check_key(request.app.state.settings, request)


def require_read(request: Request) -> None:
    """Dependency of every read route: open unless ``API_KEY_READS`` is true."""
    settings: Settings = request.app.state.settings
    if settings.api_key_reads:
        check_key(settings, request)
