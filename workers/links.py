"""The broker link's options: how a Redis client gives up on a silent broker, and TLS.

Shared by the Celery app (``workers.celery_app``: the consumer and the publisher) and the
plain Redis client of the cursor, leases and sweeper (``workers.dispatch``).
"""

from __future__ import annotations

import socket
from typing import Any

KEEPALIVE_PROBES = 3


def socket_options(tcp_timeout: float) -> dict[str, Any]:
    """Redis client socket options under which a silent broker is given up within about
    ``tcp_timeout`` seconds: keepalive probes, and TCP_USER_TIMEOUT for data never
    acknowledged (a cable pulled mid-send would otherwise block a worker for many minutes)."""
    probe = max(1, int(tcp_timeout / (KEEPALIVE_PROBES + 1)))
    keepalive = {
        socket.TCP_KEEPIDLE: probe,
        socket.TCP_KEEPINTVL: probe,
        socket.TCP_KEEPCNT: KEEPALIVE_PROBES,
        socket.TCP_USER_TIMEOUT: int(tcp_timeout * 1000),
    }
    return {
        "socket_timeout": min(10.0, tcp_timeout),
        "socket_connect_timeout": 5,
        "socket_keepalive": True,
        "socket_keepalive_options": keepalive,
        "health_check_interval": probe,
    }


def tls_options(url: str, ca_file: str | None) -> dict[str, Any]:
    """A ``rediss://`` client checks the server's certificate and host name, against
    ``ca_file`` when given (else the system's authorities)."""
    if not url.startswith("rediss:"):
        return {}
    return {"ssl_cert_reqs": "required", "ssl_ca_certs": ca_file}
