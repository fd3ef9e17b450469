"""The deployment files: compose services, commands, shared environment; the Celery app."""

from __future__ import annotations

import re

import pytest
import yaml
from repo_paths import REPO

from storage.settings import Settings

PLAYTESTER_SERVICES = ("migrate", "api", "worker", "flower")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((REPO / "compose.yaml").read_text())


def test_compose_has_every_service(compose: dict) -> None:
    assert set(compose["services"]) == {"api", "worker", "redis", "postgres", "flower", "migrate"}


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?error}`` as its specification
    describes them; a missing required variable raises ``LookupError`` with its message."""

    def one(found: re.Match[str]) -> str:
        name, kind, word = found.group(1), found.group(2), found.group(3) or ""
        given = env.get(name, "")
        if given:
            return given
        if kind == "?":
            raise LookupError(f"{name}: {word}")
        return word if kind == "-" else ""

    return re.sub(r"\$\{(\w+)(?::([?-])([^}]*))?\}", one, value)


def resolved(compose: dict, service: str, env: dict[str, str]) -> dict[str, str]:
    """The environment a service's container gets, for the given ``.env`` values."""
    given = compose["services"][service].get("environment", {})
    return {k: interpolate(str(v), env) for k, v in given.items()}


SECRETS = {
    "API_KEY": "k3y",
    "POSTGRES_PASSWORD": "pw-9_x",
    "REDIS_PASSWORD": "rp-4_y",
    "FLOWER_BASIC_AUTH": "admin:fl0wer",
}


def test_playtester_services_share_one_environment(compose: dict) -> None:
    shared = compose["services"]["migrate"]["environment"]
    for name in PLAYTESTER_SERVICES:
        env = compose["services"][name]["environment"]
        assert env.items() >= shared.items()
        assert name == "flower" or env == shared  # Flower alone adds its password
    env = resolved(compose, "api", SECRETS)
    assert env["DATABASE_URL"] == "postgresql+psycopg://playtester:pw-9_x@postgres:5432/playtester"
    assert env["BROKER_URL"] == "redis://:rp-4_y@redis:6379/0"
    assert env["API_KEY"] == "k3y"


@pytest.mark.parametrize("missing", sorted(SECRETS))
def test_no_default_secret_compose_refuses_to_start_without_each(
    compose: dict, missing: str
) -> None:
    env = {k: v for k, v in SECRETS.items() if k != missing}
    with pytest.raises(LookupError, match=missing):
        for name, service in compose["services"].items():
            resolved(compose, name, env)
            for port in service.get("ports", []):
                interpolate(port, env)


def test_postgres_password_comes_from_the_environment(compose: dict) -> None:
    postgres = resolved(compose, "postgres", SECRETS)
    assert postgres["POSTGRES_PASSWORD"] == "pw-9_x"
    assert "playtester" not in postgres["POSTGRES_PASSWORD"]
    for name in PLAYTESTER_SERVICES:
        assert "pw-9_x@postgres" in resolved(compose, name, SECRETS)["DATABASE_URL"]


def settings_in(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The settings a container reads from ``env``, its whole environment."""
    for name in Settings.model_fields:
        monkeypatch.delenv(name.upper(), raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Settings()


def test_reads_need_the_key_by_default(compose: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    env = resolved(compose, "api", SECRETS)
    assert env["API_KEY_READS"] == "true"
    assert resolved(compose, "api", {**SECRETS, "API_KEY_READS": "false"})["API_KEY_READS"] == (
        "false"
    )
    # The values compose hands over are ones the settings read as meant; what .env leaves out
    # takes the default of storage/settings.py.
    settings = settings_in(env, monkeypatch)
    assert settings.api_key_reads is True and settings.api_key == "k3y"
    assert settings.public_url is None and settings.trusted_proxies is None
    composed = {"database_url", "broker_url", "api_key", "api_key_reads"}
    defaults = Settings.model_construct()
    for name in set(Settings.model_fields) - composed:
        assert getattr(settings, name) == getattr(defaults, name), name


CHOSEN = {
    "API_KEY_READS": "false",
    "PUBLIC_URL": "https://playtester.example.org",
    "TRUSTED_PROXIES": "10.0.0.2,10.1.0.0/16",
    "MAX_MATCHES_PER_BATCH": "12345",
    "MAX_PLIES": "777",
    "MAX_AGENT_ITERATIONS": "4321",
    "MAX_AGENT_NODES": "54321",
    "MAX_AGENT_DEPTH": "7",
    "MAX_CONCURRENT_IMPORTS": "3",
    "NATIVE_CHECKS_AT_ONCE": "3",
    "NATIVE_CHECKS_WAITING": "5",
    "CHUNK_SECONDS": "0.75",
    "MAX_CHUNKS_IN_FLIGHT": "9",
    "TASK_TIME_LIMIT": "120",
    "TASK_SOFT_TIME_LIMIT": "100",
    "MAX_CHUNK_ATTEMPTS": "5",
    "CHUNK_LEASE_SECONDS": "4",
    "STALL_SECONDS": "33",
    "DATABASE_CA_FILE": "/run/secrets/db-ca.pem",
    "BROKER_CA_FILE": "/run/secrets/redis-ca.pem",
    "TCP_TIMEOUT": "12",
    "WORKER_IDLE_IN_TRANSACTION_TIMEOUT": "9",
    "WORKER_LOCK_TIMEOUT": "4",
}
"""A value other than the default for every setting a deployment chooses in ``.env`` (the
database and broker URLs are compose's own, built from the services)."""


def test_every_setting_reaches_every_playtester_container(
    compose: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = {name.lower() for name in CHOSEN} | {"api_key", "database_url", "broker_url"}
    assert chosen == set(Settings.model_fields), "a setting is missing from CHOSEN"
    dotenv = {**SECRETS, **CHOSEN}
    for service in PLAYTESTER_SERVICES:
        settings = settings_in(resolved(compose, service, dotenv), monkeypatch)
        for name, value in CHOSEN.items():
            expected = Settings.model_validate({name.lower(): value})
            assert getattr(settings, name.lower()) == getattr(expected, name.lower()), (
                f"{name} does not reach the {service} container"
            )
        assert settings.api_key == "k3y" and settings.broker_url == "redis://:rp-4_y@redis:6379/0"
        assert settings.database_url.endswith("@postgres:5432/playtester")


def test_flower_asks_for_a_password_and_listens_on_this_machine(compose: dict) -> None:
    flower = compose["services"]["flower"]
    env = resolved(compose, "flower", SECRETS)
    assert env["FLOWER_BASIC_AUTH"] == "admin:fl0wer"  # Flower reads FLOWER_<option> itself
    assert not any("basic" in part for part in flower["command"])  # not visible in `ps`
    for other in ("api", "worker", "migrate"):
        assert "FLOWER_BASIC_AUTH" not in compose["services"][other]["environment"]
    assert [interpolate(p, SECRETS) for p in flower["ports"]] == ["127.0.0.1:5555:5555"]
    opened = {**SECRETS, "FLOWER_BIND_ADDRESS": "0.0.0.0"}
    assert [interpolate(p, opened) for p in flower["ports"]] == ["0.0.0.0:5555:5555"]


def test_the_paths_flower_leaves_open_are_documented() -> None:
    """Flower answers /metrics and /healthcheck without its password: whoever publishes its
    port must be told, where they set it (compose.yaml) and where the docs start the service."""
    compose_text = (REPO / "compose.yaml").read_text()
    flower = compose_text[compose_text.index("  flower:") :]
    service = (REPO / "docs" / "service.md").read_text()
    for text in (flower, service[service.index("## On one machine") :]):
        assert "/metrics" in text and "/healthcheck" in text
        assert "FLOWER_BIND_ADDRESS" in text


def test_project_images_are_built_here_never_pulled(compose: dict) -> None:
    for name in PLAYTESTER_SERVICES:
        service = compose["services"][name]
        assert service["build"] == "." and service["image"] == "playtester:latest"
        assert service["pull_policy"] == "build"


def test_commands(compose: dict) -> None:
    services = compose["services"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "workers", "worker"]
    assert services["flower"]["command"][:4] == ["celery", "-A", "workers", "flower"]
    assert services["migrate"]["command"] == ["playtester", "db", "upgrade"]
    assert services["api"]["command"][:2] == ["playtester", "serve"]
    assert "noeviction" in services["redis"]["command"][-1]


def test_order_health_and_storage(compose: dict) -> None:
    services = compose["services"]
    for name in ("api", "worker"):
        assert services[name]["depends_on"]["migrate"]["condition"] == (
            "service_completed_successfully"
        )
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("postgres", "redis", "api", "worker"):
        assert "test" in services[name]["healthcheck"]
    assert "pgdata" in compose["volumes"]
    assert services["postgres"]["volumes"][0].startswith("pgdata:")
    # Workers scale with --scale: no fixed container name or host port.
    assert "container_name" not in services["worker"] and "ports" not in services["worker"]


def test_dockerfile_installs_the_package() -> None:
    text = (REPO / "Dockerfile").read_text()
    # Dependencies (the package's own and the service extra, read from pyproject.toml) are
    # installed in a layer of their own, before any code is copied.
    order = [
        text.index("COPY pyproject.toml ./"),
        text.index("['optional-dependencies']['service']"),
        text.index("pip install -r /tmp/requirements.txt"),
        text.index("COPY engines"),
        text.index("pip install --no-deps ."),
    ]
    assert order == sorted(order)
    assert "USER playtester" in text
    ignored = (REPO / ".dockerignore").read_text().split()
    assert ".venv" in ignored and "*.db" in ignored


def test_celery_finds_the_app_as_workers() -> None:
    from celery.app.utils import find_app

    import workers.tasks  # noqa: F401  (a worker imports it through `include`)
    from workers.celery_app import CHUNK_QUEUE, CONTROL_QUEUE, app
    from workers.game_queues import declared_queues

    assert find_app("workers") is app
    conf = app.conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_serializer == "json" and conf.accept_content == ["json"]
    assert {q.name for q in conf.task_queues} == {CHUNK_QUEUE, CONTROL_QUEUE, *declared_queues()}
    assert conf.task_time_limit * 4 <= conf.broker_transport_options["visibility_timeout"]
    assert {"playtester.play_chunk", "playtester.start_batch"} <= set(app.tasks)


def test_the_chunk_task_keeps_its_registered_name() -> None:
    """Queued messages name the task "playtester.play_chunk"; the Python name differs from the
    pure function that plays the matches."""
    import workers.play
    import workers.tasks
    from workers.celery_app import app

    assert workers.tasks.play_chunk_task.name == "playtester.play_chunk"
    registered = app.tasks["playtester.play_chunk"].run
    assert (registered.__module__, registered.__name__) == ("workers.tasks", "play_chunk_task")
    assert not hasattr(workers.tasks, "play_chunk")
    assert callable(workers.play.play_chunk)


def test_backoff_is_capped_and_jittered() -> None:
    from workers.tasks import BACKOFF_CAP, backoff

    delays = [backoff(n) for n in range(40)]
    assert all(0 < d <= BACKOFF_CAP for d in delays)
    assert delays[0] <= 0.5 and max(delays) > BACKOFF_CAP / 2
    assert len({round(backoff(20), 6) for _ in range(20)}) > 1


def test_redis_asks_for_a_password_that_never_sits_in_a_command_line(compose: dict) -> None:
    redis = compose["services"]["redis"]
    assert resolved(compose, "redis", SECRETS)["REDIS_PASSWORD"] == "rp-4_y"
    started = " ".join(redis["command"])
    # "$$" is compose's escape: the shell, not compose, reads the variable.
    assert '--requirepass "$$REDIS_PASSWORD"' in started and "rp-4_y" not in started
    assert "REDISCLI_AUTH" in redis["healthcheck"]["test"][1]
    assert "--appendonly yes" in started


def test_redis_and_postgres_are_published_on_this_machine_unless_told(compose: dict) -> None:
    for service, port, bind in (("redis", 6379, "REDIS"), ("postgres", 5432, "POSTGRES")):
        ports = compose["services"][service]["ports"]
        assert [interpolate(p, SECRETS) for p in ports] == [f"127.0.0.1:{port}:{port}"]
        lan = {**SECRETS, f"{bind}_BIND_ADDRESS": "192.0.2.7", f"{bind}_PORT": "16000"}
        assert [interpolate(p, lan) for p in ports] == [f"192.0.2.7:16000:{port}"]


@pytest.fixture(scope="module")
def worker_compose() -> dict:
    return yaml.safe_load((REPO / "compose.worker.yaml").read_text())


WORKER_HOST = {
    "DATABASE_URL": "postgresql+psycopg://playtester:pw-9_x@db.lab:5432/playtester",
    "BROKER_URL": "rediss://:rp-4_y@redis.lab:6379/0",
}


def test_a_worker_only_host_runs_the_worker_of_the_main_compose(
    compose: dict, worker_compose: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert set(worker_compose["services"]) == {"worker"}
    worker = worker_compose["services"]["worker"]
    main = compose["services"]["worker"]
    assert worker["command"] == main["command"]
    assert worker["healthcheck"]["test"] == main["healthcheck"]["test"]
    assert (worker["build"], worker["image"], worker["pull_policy"]) == (
        ".",
        "playtester:latest",
        "build",
    )
    assert "ports" not in worker and "depends_on" not in worker
    # The same settings as the main machine's containers, every one of them.
    assert set(worker["environment"]) == set(main["environment"])
    env = {
        k: interpolate(str(v), {**WORKER_HOST, **CHOSEN}) for k, v in worker["environment"].items()
    }
    settings = settings_in(env, monkeypatch)
    assert settings.broker_url == WORKER_HOST["BROKER_URL"]
    assert settings.database_url == WORKER_HOST["DATABASE_URL"]
    for name, value in CHOSEN.items():
        expected = Settings.model_validate({name.lower(): value})
        assert getattr(settings, name.lower()) == getattr(expected, name.lower()), name


@pytest.mark.parametrize("missing", sorted(WORKER_HOST))
def test_a_worker_only_host_refuses_to_start_without_each_url(
    worker_compose: dict, missing: str
) -> None:
    env = {k: v for k, v in WORKER_HOST.items() if k != missing}
    with pytest.raises(LookupError, match=missing):
        for value in worker_compose["services"]["worker"]["environment"].values():
            interpolate(str(value), env)
