"""Database engines, sessions and schema migrations.

``DATABASE_URL`` (through ``storage.settings``) selects SQLite, the default, or PostgreSQL.
Engines are cached per (url, process id): a forked worker never reuses its parent's
connections, it opens its own on first use.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import ExceptionContext, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError
from sqlmodel import Session

from storage.settings import Settings, get_settings

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite writer waits for another writer's lock before giving up."""
SUPPORTED_BACKENDS = ("sqlite", "postgresql")
DRIVER_MODULES = frozenset(
    {"psycopg", "psycopg_binary", "psycopg_c", "psycopg2", "sqlite3", "_sqlite3"}
)
"""The modules the supported backends load their driver from: one missing means the database
cannot be used, any other missing module is a broken installation or a bug."""
_ADVISORY_LOCK_KEY = 0x706C6179  # any constant: serialises concurrent upgrades on PostgreSQL

_engines: dict[tuple[str, int], Engine] = {}
_schema_ready: set[tuple[str, int]] = set()
_lock = threading.Lock()


def normalise_url(url: str | None = None) -> str:
    """The URL to use: ``url`` or the settings' one; bare ``postgresql://`` means psycopg 3."""
    chosen = (url or get_settings().database_url).strip()
    for prefix in ("postgresql://", "postgres://"):
        if chosen.startswith(prefix):
            return "postgresql+psycopg://" + chosen[len(prefix) :]
    return chosen


def is_sqlite(url: str) -> bool:
    """True for ``sqlite://`` URLs (with or without a driver suffix)."""
    return make_url(url).get_backend_name() == "sqlite"


def safe_url(url: str | None = None) -> str:
    """The URL with any password hidden, for messages."""
    try:
        return make_url(normalise_url(url)).render_as_string(hide_password=True)
    except ArgumentError:
        return "(an unreadable database URL)"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers (progress bars, reports) run while a chunk is being written;
    # NORMAL sync is durable across application crashes, which is what a batch needs.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


@dataclass(frozen=True)
class ConnectionOptions:
    """How this process's PostgreSQL connections guard against a lost peer.

    ``tcp_timeout``: seconds of silence after which either end drops the connection (libpq's
    keepalives and ``tcp_user_timeout`` on this side, the server's ``tcp_keepalives_*`` and
    ``tcp_user_timeout`` for the session on the other), so a server keeps a lost client's
    session, and its locks, that long at most instead of the kernel's two hours.
    ``idle_in_transaction`` and ``lock`` (seconds, None: the server's) bound a transaction
    left open and a wait for a lock; the workers set both. ``ca_file``: verify the server's
    certificate and host name against it.
    """

    tcp_timeout: float = 20.0
    idle_in_transaction: float | None = None
    lock: float | None = None
    ca_file: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings, *, worker: bool = False) -> ConnectionOptions:
        """The options of ``settings``: with the workers' timeouts when ``worker``."""
        return cls(
            tcp_timeout=settings.tcp_timeout,
            idle_in_transaction=settings.worker_idle_in_transaction_timeout if worker else None,
            lock=settings.worker_lock_timeout if worker else None,
            ca_file=settings.database_ca_file,
        )


KEEPALIVE_PROBES = 3


def postgres_connect_args(options: ConnectionOptions, url: str) -> dict[str, Any]:
    """libpq connection parameters for ``options`` (those ``url`` sets itself are kept)."""
    tcp_ms = int(options.tcp_timeout * 1000)
    # Silence, then KEEPALIVE_PROBES unanswered probes: the connection is dead after
    # about tcp_timeout, whichever end is waiting.
    probe = max(1, int(options.tcp_timeout / (KEEPALIVE_PROBES + 1)))
    server = {
        "tcp_keepalives_idle": probe,
        "tcp_keepalives_interval": probe,
        "tcp_keepalives_count": KEEPALIVE_PROBES,
        "tcp_user_timeout": tcp_ms,
    }
    if options.idle_in_transaction is not None:
        server["idle_in_transaction_session_timeout"] = int(options.idle_in_transaction * 1000)
    if options.lock is not None:
        server["lock_timeout"] = int(options.lock * 1000)
    args: dict[str, Any] = {
        "connect_timeout": 10,
        "keepalives": 1,
        "keepalives_idle": probe,
        "keepalives_interval": probe,
        "keepalives_count": KEEPALIVE_PROBES,
        "tcp_user_timeout": tcp_ms,
        "options": " ".join(f"-c {name}={value}" for name, value in server.items()),
    }
    if options.ca_file:
        args["sslrootcert"] = options.ca_file
        args["sslmode"] = "verify-full"
    given = make_url(url).query
    return {k: v for k, v in args.items() if k not in given}


_options: ConnectionOptions | None = None


def configure_connections(options: ConnectionOptions | None) -> None:
    """Set how this process's PostgreSQL connections behave (a worker process calls it when it
    starts; None: back to the settings'); engines made before are dropped, so every connection
    from here on has them."""
    global _options
    _options = options
    with _lock:
        engines = list(_engines.values())
        _engines.clear()
        _schema_ready.clear()
    for engine in engines:
        engine.dispose()


def connection_options() -> ConnectionOptions:
    """The options in force: those configured, else the settings' (without the workers')."""
    return _options if _options is not None else ConnectionOptions.from_settings(get_settings())


SESSION_ENDED_STATES = frozenset({"25P03", "57P05"})
"""The server ended the session for sitting idle (in a transaction, or at all)."""


def _session_ended(context: ExceptionContext) -> DBAPIError | None:
    # The server ending a session idle in its transaction is an outage of that session, as
    # a dropped connection is: raised as OperationalError, it is retried (workers.outages),
    # and the pool forgets the connection.
    orig = context.original_exception
    if getattr(orig, "sqlstate", None) not in SESSION_ENDED_STATES:
        return None
    context.is_disconnect = True
    return OperationalError(context.statement, context.parameters, orig)


def _create_engine(url: str) -> Engine:
    backend = make_url(url).get_backend_name()
    if backend not in SUPPORTED_BACKENDS:
        raise ArgumentError(
            f"unsupported database {backend!r}; use sqlite:///path.db or "
            "postgresql+psycopg://user@host/name"
        )
    if is_sqlite(url):
        database = make_url(url).database
        if database and database != ":memory:":
            parent = Path(database).expanduser().resolve().parent
            if not parent.is_dir():
                raise FileNotFoundError(
                    f"cannot create the SQLite database {database!r}: "
                    f"folder {str(parent)!r} does not exist"
                )
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    engine = create_engine(url, **engine_options(url))
    event.listen(engine, "handle_error", _session_ended)
    return engine


def engine_options(url: str, *, search_path: str | None = None) -> dict[str, Any]:
    """``create_engine``'s keywords for the PostgreSQL database ``url``: this process's
    connection options (:func:`connection_options`), with ``search_path`` for the session
    when given. Another library's engine (Optuna's) takes them too."""
    args = postgres_connect_args(connection_options(), url)
    if search_path is not None:
        args["options"] = f"{args.get('options', '')} -c search_path={search_path}".strip()
    # An unreachable server should fail in seconds, not hang a command or a worker.
    return {"pool_pre_ping": True, "pool_size": 5, "max_overflow": 10, "connect_args": args}


def get_engine(url: str | None = None) -> Engine:
    """The engine for ``url`` (default: settings), created once per URL and process."""
    chosen = normalise_url(url)
    key = (chosen, os.getpid())
    engine = _engines.get(key)
    if engine is None:
        with _lock:
            engine = _engines.get(key)
            if engine is None:
                engine = _create_engine(chosen)
                _engines[key] = engine
    return engine


def forget_inherited_engines() -> None:
    """Drop engines created by a parent process without closing their connections.

    Call first thing in a forked child: the parent's pooled connections must neither be used
    nor closed here (closing would disturb the parent's sessions on PostgreSQL).
    """
    pid = os.getpid()
    with _lock:
        for key in [k for k in _engines if k[1] != pid]:
            _engines.pop(key).dispose(close=False)
        _schema_ready.difference_update({k for k in _schema_ready if k[1] != pid})


@contextmanager
def session(engine: Engine) -> Iterator[Session]:
    """A SQLModel session whose objects stay readable after commit."""
    with Session(engine, expire_on_commit=False) as s:
        yield s


# --------------------------------------------------------------------------- migrations


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic configuration built in code: no alembic.ini is needed at run time."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    """The newest migration shipped with this version of playtester."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships migrations
        raise RuntimeError("no migrations found in " + str(MIGRATIONS_DIR))
    return head


def current_revision(url: str | None = None) -> str | None:
    """The revision the database is at, ``None`` for an empty database."""
    with get_engine(url).connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(url: str | None = None, revision: str = "head") -> None:
    """Create or upgrade the schema to ``revision`` by running the Alembic migrations."""
    engine = get_engine(url)
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                # Several workers starting at once must not run the same DDL twice.
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _ADVISORY_LOCK_KEY})
            command.upgrade(alembic_config(conn), revision)
    except DBAPIError:
        # Another process may have created the schema between our check and our DDL
        # (SQLite has no advisory lock); that is success if the database is now current.
        if revision != "head" or current_revision(url) != head_revision():
            raise
    _schema_ready.add((normalise_url(url), os.getpid()))


def ensure_schema(url: str | None = None) -> None:
    """Upgrade the database to the newest schema unless this process already checked it."""
    key = (normalise_url(url), os.getpid())
    if key in _schema_ready:
        return
    if current_revision(url) != head_revision():
        upgrade(url)
    _schema_ready.add(key)


def dispose_engine(url: str | None = None) -> None:
    """Close and forget this process's engine for ``url`` (before dropping its database)."""
    key = (normalise_url(url), os.getpid())
    with _lock:
        engine = _engines.pop(key, None)
        _schema_ready.discard(key)
    if engine is not None:
        engine.dispose()


def downgrade(url: str | None = None, revision: str = "-1") -> None:
    """Undo migrations down to ``revision`` (``base`` removes every table)."""
    with get_engine(url).begin() as conn:
        command.downgrade(alembic_config(conn), revision)
    _schema_ready.discard((normalise_url(url), os.getpid()))
