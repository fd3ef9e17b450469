"""The Celery application of distributed mode.

Start workers with ``celery -A workers worker`` on any machine that has the same environment
(``BROKER_URL``, ``DATABASE_URL``). Tasks carry ids and index ranges only, never objects, and
every result write is idempotent, so the reliability settings below (late acknowledgement,
re-queueing when a worker dies) can deliver a chunk twice without changing a result.
"""

from __future__ import annotations

import ssl
from typing import Any

from celery import Celery, signals
from kombu import Queue

from storage.db import ConnectionOptions, configure_connections
from storage.settings import Settings, get_settings
from workers.game_queues import CHUNK_QUEUE, CONTROL_QUEUE, declared_queues
from workers.warmup import install_before_work, start_compiler
from workers.worker_games import advertise_games, consume_loadable_games, withdraw_games

__all__ = ["CHUNK_QUEUE", "CONTROL_QUEUE", "TASK_MODULES", "app", "make_celery"]

TASK_MODULES = ("workers.tasks",)


def broker_visibility_timeout(settings: Settings) -> int:
    """Seconds before Redis hands an unacknowledged message to another worker.

    It must stay well above the task time limit: a chunk still running when it expires would be
    delivered a second time (harmless thanks to the idempotent write, but wasted work).
    """
    return int(max(3600.0, 4 * settings.task_time_limit))


def broker_tls(settings: Settings) -> dict[str, Any] | None:
    """TLS options of a ``rediss://`` broker: the certificate and host name always checked,
    against ``broker_ca_file`` when set (else the system's authorities); None for redis://."""
    if not (settings.broker_url or "").startswith("rediss://"):
        return None
    options: dict[str, Any] = {"ssl_cert_reqs": ssl.CERT_REQUIRED}
    if settings.broker_ca_file:
        options["ssl_ca_certs"] = settings.broker_ca_file
    return options


def make_celery(settings: Settings) -> Celery:
    """Build the Celery app from the one settings object."""
    celery = Celery("playtester", include=list(TASK_MODULES))
    # Without a broker the app is still importable (the CLI and tests load it); only sending a
    # task needs one, and local mode never sends.
    broker = settings.broker_url or "memory://"
    celery.conf.update(
        broker_url=broker,
        result_backend=None,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        result_serializer="json",
        timezone="UTC",
        enable_utc=True,
        # One queue per installed game beside the shared ones (workers.game_queues); a worker
        # narrows what it consumes to the games it loads when it starts.
        task_queues=tuple(Queue(q) for q in (CHUNK_QUEUE, CONTROL_QUEUE, *declared_queues())),
        task_default_queue=CHUNK_QUEUE,
        task_create_missing_queues=False,
        task_routes={
            "playtester.play_chunk": {"queue": CHUNK_QUEUE},
            "playtester.start_batch": {"queue": CONTROL_QUEUE},
        },
        # A chunk is acknowledged only once its results are committed; a worker that dies
        # mid-chunk leaves the message to be delivered again.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        # The soft limit raises inside the task, which stores what it finished; the hard one
        # kills the process (prefork pool; the solo pool enforces neither).
        task_time_limit=settings.task_time_limit,
        task_soft_time_limit=settings.soft_time_limit,
        # Celery's own broker connections keep kombu's socket defaults: with keepalives that
        # end a connection during a partition, a worker whose acknowledgement then failed
        # stopped taking messages once back (prefetch 1 still counted the message held).
        broker_transport_options={"visibility_timeout": broker_visibility_timeout(settings)},
        broker_use_ssl=broker_tls(settings),
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        worker_hijack_root_logger=False,
        worker_send_task_events=True,
        task_send_sent_event=True,
    )
    return celery


app = make_celery(get_settings())
"""The worker process's app (``celery -A workers worker``), built from its environment."""

# A worker compiles what its chunks need beside its work (workers.warmup): the state it shares
# with the pool's children is made before they are forked, its thread starts once they run.
signals.worker_init.connect(install_before_work, weak=False)
signals.worker_ready.connect(start_compiler, weak=False)
# A worker consumes the queues of the games it loads, and advertises them while it runs.
signals.celeryd_after_setup.connect(consume_loadable_games, weak=False)
signals.worker_ready.connect(advertise_games, weak=False)
signals.worker_shutdown.connect(withdraw_games, weak=False)


@signals.worker_init.connect
def _bound_worker_sessions(**_: object) -> None:
    # A worker cut off the network mid-write must not hold its locks for hours: its sessions
    # get the idle-in-transaction and lock timeouts (the pool's children inherit them).
    configure_connections(ConnectionOptions.from_settings(get_settings(), worker=True))
