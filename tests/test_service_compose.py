"""The deployment files: compose services, commands, shared environment; the Celery app."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PLAYTESTER_SERVICES = ("migrate", "api", "worker", "flower")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_has_every_service(compose: dict) -> None:
    assert set(compose["services"]) == {"api", "worker", "redis", "postgres", "flower", "migrate"}


def test_playtester_services_share_one_environment(compose: dict) -> None:
    envs = [compose["services"][name]["environment"] for name in PLAYTESTER_SERVICES]
    assert all(env == envs[0] for env in envs)
    env = envs[0]
    assert (
        env["DATABASE_URL"].startswith("postgresql+psycopg://")
        and "@postgres:" in env["DATABASE_URL"]
    )
    assert env["BROKER_URL"] == "redis://redis:6379/0"
    # No default secret: compose refuses to start until the key is set.
    assert env["API_KEY"].startswith("${API_KEY:?")


def test_commands(compose: dict) -> None:
    services = compose["services"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "workers", "worker"]
    assert services["flower"]["command"][:4] == ["celery", "-A", "workers", "flower"]
    assert services["migrate"]["command"] == ["playtester", "db", "upgrade"]
    assert services["api"]["command"][:2] == ["playtester", "serve"]
    assert "noeviction" in services["redis"]["command"]


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
    text = (ROOT / "Dockerfile").read_text()
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
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and "*.db" in ignored


def test_celery_finds_the_app_as_workers() -> None:
    from celery.app.utils import find_app

    import workers.tasks  # noqa: F401  (a worker imports it through `include`)
    from workers.celery_app import CHUNK_QUEUE, CONTROL_QUEUE, app

    assert find_app("workers") is app
    conf = app.conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_serializer == "json" and conf.accept_content == ["json"]
    assert {q.name for q in conf.task_queues} == {CHUNK_QUEUE, CONTROL_QUEUE}
    assert conf.task_time_limit * 4 <= conf.broker_transport_options["visibility_timeout"]
    assert {"playtester.play_chunk", "playtester.start_batch"} <= set(app.tasks)


def test_backoff_is_capped_and_jittered() -> None:
    from workers.tasks import BACKOFF_CAP, backoff

    delays = [backoff(n) for n in range(40)]
    assert all(0 < d <= BACKOFF_CAP for d in delays)
    assert delays[0] <= 0.5 and max(delays) > BACKOFF_CAP / 2
    assert len({round(backoff(20), 6) for _ in range(20)}) > 1
