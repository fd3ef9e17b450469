"""Errors worth waiting out: the database or the broker is away and expected back.

One list for every place that tells an outage from a bug: a chunk task retries with backoff
(``workers.tasks``), a delivery gives its attempt back (``workers.delivery``), a start request
stays in the outbox for the sweeper (``workers.dispatchers``), and the API answers 503 instead
of 500 (``api.errors``).
"""

from __future__ import annotations

import kombu.exceptions
import redis.exceptions
import sqlalchemy.exc

DATABASE_DOWN: tuple[type[Exception], ...] = (
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
)
BROKER_DOWN: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    kombu.exceptions.OperationalError,
)
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    *DATABASE_DOWN,
    *BROKER_DOWN,
    ConnectionError,
    TimeoutError,
)
"""The database's and the broker's, and the socket errors beneath either."""
