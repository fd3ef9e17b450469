"""The Redis client of distributed mode's broker: chunk bookkeeping, leases, the roster."""

from __future__ import annotations

from functools import lru_cache

import redis

from storage.settings import Settings
from workers.links import socket_options, tls_options

__all__ = ["broker", "redis_client"]


@lru_cache(maxsize=8)
def redis_client(url: str, ca_file: str | None = None, tcp_timeout: float = 20.0) -> redis.Redis:
    """A Redis client for the broker URL (one connection pool per URL and process)."""
    return redis.Redis.from_url(url, **socket_options(tcp_timeout), **tls_options(url, ca_file))


def broker(settings: Settings) -> redis.Redis:
    """The Redis client of ``settings``' broker."""
    url = settings.broker_url
    if not url:
        raise RuntimeError("distributed mode needs BROKER_URL (redis://host:6379/0)")
    return redis_client(url, settings.broker_ca_file, settings.tcp_timeout)
