"""What a lost client can hold on PostgreSQL: the workers' session limits, the keepalives of
both ends, and a chunk write that locks its batch only for its claim."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from storage_rows import counts, make_plan, record

from storage import crud
from storage.crud import writes
from storage.db import (
    ConnectionOptions,
    configure_connections,
    connection_options,
    get_engine,
    postgres_connect_args,
)
from storage.settings import Settings
from workers.links import socket_options
from workers.outages import TRANSIENT_ERRORS

URL = "postgresql+psycopg://u@db.lab/playtester"


@pytest.fixture
def limits() -> Iterator[None]:
    """Undo ``configure_connections`` after the test."""
    yield
    configure_connections(None)


def test_worker_sessions_get_both_limits_and_every_session_the_keepalives() -> None:
    settings = Settings(
        tcp_timeout=24, worker_idle_in_transaction_timeout=15, worker_lock_timeout=5
    )
    worker = postgres_connect_args(ConnectionOptions.from_settings(settings, worker=True), URL)
    api = postgres_connect_args(ConnectionOptions.from_settings(settings), URL)
    # Silence, then three unanswered probes: 6 + 3 x 6 = 24 s, the timeout asked for.
    assert (worker["keepalives"], worker["keepalives_idle"], worker["keepalives_interval"]) == (
        1,
        6,
        6,
    )
    assert worker["keepalives_count"] == 3 and worker["tcp_user_timeout"] == 24_000
    assert worker["options"].split(" -c ") == [
        "-c tcp_keepalives_idle=6",
        "tcp_keepalives_interval=6",
        "tcp_keepalives_count=3",
        "tcp_user_timeout=24000",
        "idle_in_transaction_session_timeout=15000",
        "lock_timeout=5000",
    ]
    assert "lock_timeout" not in api["options"] and "idle_in" not in api["options"]
    assert "sslmode" not in worker


def test_a_ca_file_means_verify_full_unless_the_url_says_otherwise() -> None:
    options = ConnectionOptions(ca_file="/etc/ca.pem")
    args = postgres_connect_args(options, URL)
    assert (args["sslmode"], args["sslrootcert"]) == ("verify-full", "/etc/ca.pem")
    kept = postgres_connect_args(options, URL + "?sslmode=require&options=-c%20x%3D1")
    assert "sslmode" not in kept and "options" not in kept
    assert kept["sslrootcert"] == "/etc/ca.pem"


def test_the_broker_link_gives_up_on_a_silent_broker() -> None:
    import socket

    options = socket_options(20)
    keepalive = options["socket_keepalive_options"]
    assert options["socket_keepalive"] is True
    assert keepalive[socket.TCP_KEEPIDLE] + 3 * keepalive[socket.TCP_KEEPINTVL] == 20
    assert keepalive[socket.TCP_USER_TIMEOUT] == 20_000


def test_the_worker_process_applies_the_worker_limits(limits: None) -> None:
    from workers.celery_app import _bound_worker_sessions

    settings = Settings()
    assert connection_options() == ConnectionOptions.from_settings(settings)
    _bound_worker_sessions()
    assert connection_options() == ConnectionOptions.from_settings(settings, worker=True)
    assert connection_options().lock == settings.worker_lock_timeout


def test_the_server_applies_the_limits(pg_url: str, limits: None) -> None:
    configure_connections(ConnectionOptions(tcp_timeout=8, idle_in_transaction=0.5, lock=0.25))
    engine = get_engine(pg_url)
    with engine.connect() as conn:
        shown = {
            name: conn.execute(text(f"SHOW {name}")).scalar()
            for name in ("idle_in_transaction_session_timeout", "lock_timeout")
        }
    assert shown == {"idle_in_transaction_session_timeout": "500ms", "lock_timeout": "250ms"}
    # A session left inside a transaction is ended by the server, with what it held; its
    # client then sees an outage it retries, not a bug.
    conn = engine.connect()
    pid = conn.execute(text("SELECT pg_backend_pid()")).scalar()
    admin = psycopg.connect(pg_url.replace("postgresql+psycopg://", "postgresql://"))
    admin.autocommit = True

    def gone() -> bool:
        row = admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
        return row is None

    deadline = time.monotonic() + 30
    while not gone() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(), "the idle transaction was not ended"
    admin.close()
    with pytest.raises(TRANSIENT_ERRORS, match="idle-in-transaction timeout"):
        conn.execute(text("SELECT 1"))
    conn.close()
    with engine.connect() as again:
        assert again.execute(text("SELECT 2")).scalar() == 2


def test_a_writer_lost_mid_write_blocks_only_its_own_range(pg_url: str, limits: None) -> None:
    """The writer of [0, 10) stops inside its transaction, after its rows and before its
    claim (a host cut off mid-COPY): the batch's other chunks are written meanwhile, and a
    second delivery of [0, 10) fails on the lock timeout instead of waiting."""
    from storage.db import upgrade

    upgrade(pg_url)
    configure_connections(ConnectionOptions(lock=0.5))
    engine = get_engine(pg_url)
    batch = crud.create_batch(engine, plan=make_plan(matches=30, chunk_size=10))
    inside, release = threading.Event(), threading.Event()
    real = writes.insert_rows
    lost = threading.current_thread()

    def stalled(conn, matches, seats) -> None:  # type: ignore[no-untyped-def]
        real(conn, matches, seats)
        if threading.current_thread() is not lost:
            inside.set()
            assert release.wait(60)

    writes.insert_rows = stalled  # type: ignore[assignment]
    outcome: dict[str, bool] = {}

    def lost_writer() -> None:
        outcome["lost"] = crud.write_chunk(
            engine,
            batch_id=batch.id,
            start=0,
            stop=10,
            records=[record(i) for i in range(10)],
            duration=0.1,
        )

    thread = threading.Thread(target=lost_writer)
    try:
        thread.start()
        assert inside.wait(30)
        for start in (10, 20):
            assert crud.write_chunk(
                engine,
                batch_id=batch.id,
                start=start,
                stop=start + 10,
                records=[record(i) for i in range(start, start + 10)],
                duration=0.1,
            )
        with pytest.raises(OperationalError, match="lock timeout") as refused:
            crud.write_chunk(
                engine,
                batch_id=batch.id,
                start=0,
                stop=10,
                records=[record(i) for i in range(10)],
                duration=0.1,
            )
        assert isinstance(refused.value, TRANSIENT_ERRORS)  # the task retries it later
    finally:
        release.set()
        thread.join(30)
        writes.insert_rows = real  # type: ignore[assignment]
    assert outcome == {"lost": True}
    assert counts(engine, batch.id) == (3, 30, 60)
    # The retried delivery then finds its range written and stores nothing.
    assert not crud.write_chunk(
        engine,
        batch_id=batch.id,
        start=0,
        stop=10,
        records=[record(i) for i in range(10)],
        duration=0.1,
    )
    assert counts(engine, batch.id) == (3, 30, 60)
