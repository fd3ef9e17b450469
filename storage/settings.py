"""The one settings object, read from the environment and nowhere else.

Settings come in at the entry points only: the API's app (``api.app.create_app``), each
command of the command line, and a Celery worker's process (``workers.celery_app``,
``workers.tasks``) call ``get_settings()`` and pass the object down; the code below them takes
it as an argument. A child process gets them back as environment variables
(``Settings.environment()``).
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    # An empty variable means "the default" (compose passes every setting, set or not).
    model_config = SettingsConfigDict(
        env_prefix="", case_sensitive=False, extra="ignore", env_ignore_empty=True
    )

    database_url: str = Field(
        default="sqlite:///playtester.db",
        description="SQLAlchemy URL; a SQLite file in the working directory by default.",
    )
    broker_url: str | None = Field(
        default=None, description="Celery broker (redis://...); unset means local mode."
    )
    api_key: str | None = Field(default=None, description="Bearer key required for writes.")
    api_key_reads: bool = Field(default=False, description="Require the key for reads too.")
    max_matches_per_batch: int = Field(default=10_000_000, ge=1)
    max_plies: int = Field(default=10_000, ge=1, description="Upper bound on a batch's ply cap.")
    chunk_seconds: float = Field(
        default=2.0, gt=0, description="Target wall time of one chunk of matches."
    )
    max_chunks_in_flight: int = Field(
        default=64, ge=1, description="Chunks queued ahead per batch in distributed mode."
    )
    task_time_limit: float = Field(
        default=300.0,
        gt=0,
        description="Hard time limit of one chunk task (s); kept well under the broker's "
        "visibility timeout, which is derived from it.",
    )
    task_soft_time_limit: float | None = Field(
        default=None,
        gt=0,
        description="Soft time limit of one chunk task (s), below the hard one: the chunk "
        "stores the matches it finished and records the rest as failed by the time limit. "
        "Default: 90 % of task_time_limit.",
    )
    max_chunk_attempts: int = Field(
        default=2,
        ge=1,
        description="Deliveries of a chunk that may end without a result (worker killed, hard "
        "time limit) before its matches are recorded as failed.",
    )
    chunk_lease_seconds: float = Field(
        default=10.0,
        ge=1,
        description="A delivery holds its chunk's lease in Redis, renewed every quarter of "
        "this while it plays; a worker that dies leaves it to expire within this, and only "
        "then may another delivery take the chunk.",
    )
    stall_seconds: float = Field(
        default=60.0,
        gt=0,
        description="A running batch with no chunk written for this long has its lost "
        "chunks queued again.",
    )
    database_ca_file: str | None = Field(
        default=None,
        description="CA certificate(s) that sign PostgreSQL's certificate: connections then "
        "use TLS and check the server's certificate and host name (sslmode=verify-full, "
        "unless DATABASE_URL names another sslmode).",
    )
    broker_ca_file: str | None = Field(
        default=None,
        description="CA certificate(s) that sign Redis's certificate, for a rediss:// "
        "BROKER_URL (unset: the system's). The certificate and host name are always checked.",
    )
    tcp_timeout: float = Field(
        default=20.0,
        ge=4,
        description="A connection to PostgreSQL or Redis whose other end stays silent this "
        "long is dropped (TCP keepalives and TCP_USER_TIMEOUT, on both ends for PostgreSQL): "
        "a host cut off the network loses its sessions, and their locks, within this time, "
        "and finds out itself instead of waiting for the kernel's two hours.",
    )
    worker_idle_in_transaction_timeout: float = Field(
        default=15.0,
        gt=0,
        description="The database ends a worker's session that sits inside a transaction "
        "doing nothing for this long (idle_in_transaction_session_timeout), so a worker cut "
        "off mid-write holds its locks no longer than this.",
    )
    worker_lock_timeout: float = Field(
        default=5.0,
        gt=0,
        description="A worker's statement that waits this long for a lock fails (lock_timeout) "
        "and its chunk is retried later, instead of waiting behind a lost session.",
    )
    max_agent_iterations: int = Field(
        default=100_000, ge=1, description="Upper bound on an agent's search iterations."
    )
    max_agent_nodes: int = Field(
        default=1_000_000, ge=1, description="Upper bound on an agent's node budget per move."
    )
    max_agent_depth: int = Field(
        default=16, ge=1, description="Upper bound on an agent's search depth in plies."
    )
    max_concurrent_imports: int = Field(
        default=2,
        ge=1,
        description="Archive imports (POST /batches/import) the API runs at once; one more "
        "is answered 429 with Retry-After.",
    )
    native_checks_at_once: int = Field(
        default=2,
        ge=1,
        description="Requests naming an OpenSpiel game checked at once, each in a child "
        "process (POST /batches, POST /batches/check, a study's plan).",
    )
    native_checks_waiting: int = Field(
        default=2,
        ge=0,
        description="OpenSpiel checks that may wait for a turn beyond those running; one more "
        "is refused at once (429 with Retry-After), so none waits behind more than "
        "this many others.",
    )

    public_url: str | None = Field(
        default=None,
        description="Public base URL of the API (https://playtester.example.org); links in "
        "answers start with it, and browsers may reach the server by its name and scheme "
        "(besides loopback names and the server's address). Unset: links are relative "
        "(/batches/...), never taken from the client's Host header.",
    )
    trusted_proxies: str | None = Field(
        default=None,
        description="Comma-separated addresses or networks of the reverse proxies whose "
        "X-Forwarded-For/-Proto headers `playtester serve` believes; none by default.",
    )

    @field_validator(
        "broker_url",
        "api_key",
        "task_soft_time_limit",
        "public_url",
        "trusted_proxies",
        "database_ca_file",
        "broker_ca_file",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @model_validator(mode="after")
    def _soft_below_hard(self) -> Settings:
        if self.task_soft_time_limit is not None and not (
            self.task_soft_time_limit < self.task_time_limit
        ):
            raise ValueError(
                f"TASK_SOFT_TIME_LIMIT ({self.task_soft_time_limit:g} s) must be below "
                f"TASK_TIME_LIMIT ({self.task_time_limit:g} s)"
            )
        return self

    @property
    def soft_time_limit(self) -> float:
        """The soft time limit in force: the one set, else 90 % of the hard one."""
        if self.task_soft_time_limit is not None:
            return self.task_soft_time_limit
        return 0.9 * self.task_time_limit

    @property
    def agent_budget_limits(self) -> dict[str, int]:
        """Upper bounds of agent parameters that set how much work a move takes, by name."""
        return {
            "iterations": self.max_agent_iterations,
            "nodes": self.max_agent_nodes,
            "depth": self.max_agent_depth,
        }

    def environment(self) -> dict[str, str]:
        """Every setting as the environment variable that gives it (unset ones empty), so a
        child process reads back exactly these settings."""
        out = {}
        for name, value in self.model_dump().items():
            if value is None:
                text = ""
            elif isinstance(value, bool):
                text = "true" if value else "false"
            else:
                text = str(value)
            out[name.upper()] = text
        return out

    @field_validator("public_url")
    @classmethod
    def _http_base(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value.strip())
        extra = parts.query or parts.fragment
        if parts.scheme not in {"http", "https"} or not parts.netloc or extra:
            raise ValueError(
                "public_url must be an http(s) URL without query or fragment, "
                "e.g. https://playtester.example.org"
            )
        return value.strip().rstrip("/")

    @field_validator("trusted_proxies")
    @classmethod
    def _addresses(cls, value: str | None) -> str | None:
        if value is None:
            return None
        listed = [part.strip() for part in value.split(",") if part.strip()]
        return ",".join(listed) or None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
