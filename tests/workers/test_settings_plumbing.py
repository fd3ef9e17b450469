"""Settings come in at the entry points and are passed down: a local run's child process
gets every setting of the server that started it, not only its database."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from analysis_data import random_plan
from service_fixtures import wait_for

from storage import crud
from storage.db import get_engine
from storage.settings import Settings
from workers.dispatchers import LocalDispatcher

DUMP_SETTINGS = (
    "import sys\n"
    "from storage.settings import Settings\n"
    "open(sys.argv[1], 'w').write(Settings().model_dump_json())\n"
)
"""A stand-in for ``playtester``: writes the settings it reads to the file it is given
(``resume <batch id>`` follow, ignored)."""


def unusual(database_url: str) -> dict[str, Any]:
    """A value other than the default for every setting."""
    return {
        "database_url": database_url,
        "broker_url": "redis://broker.invalid:6379/3",
        "api_key": "server-key",
        "api_key_reads": True,
        "max_matches_per_batch": 4321,
        "max_plies": 321,
        "chunk_seconds": 0.375,
        "max_chunks_in_flight": 5,
        "task_time_limit": 77.0,
        "task_soft_time_limit": 66.5,
        "max_chunk_attempts": 6,
        "stall_seconds": 12.5,
        "max_agent_iterations": 999,
        "max_agent_nodes": 8888,
        "max_agent_depth": 5,
        "max_concurrent_imports": 4,
        "native_checks_at_once": 3,
        "native_checks_waiting": 7,
        "public_url": "https://playtester.example.org/lab",
        "trusted_proxies": "10.0.0.2",
        "database_ca_file": "/etc/playtester/db-ca.pem",
        "broker_ca_file": "/etc/playtester/redis-ca.pem",
        "tcp_timeout": 13.0,
        "worker_idle_in_transaction_timeout": 11.0,
        "worker_lock_timeout": 3.5,
        "chunk_lease_seconds": 7.5,
    }


def test_the_local_child_runs_with_every_setting_of_its_server(
    migrated_sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = unusual(migrated_sqlite_url)
    assert set(values) == set(Settings.model_fields), "a setting is missing from unusual()"
    server = Settings(**values)
    # The server's own environment says otherwise: the child must not fall back on it.
    monkeypatch.setenv("MAX_PLIES", "10")
    monkeypatch.setenv("CHUNK_SECONDS", "9")
    monkeypatch.setenv("API_KEY", "environment-key")
    batch = crud.create_batch(get_engine(migrated_sqlite_url), plan=random_plan(server))
    dump = tmp_path / "child-settings.json"
    dispatcher = LocalDispatcher(server, command=[sys.executable, "-c", DUMP_SETTINGS, str(dump)])
    try:
        dispatcher.start(batch)
        wait_for(lambda: dispatcher.exits, 60, "the child to end")
    finally:
        dispatcher.close()
    assert dispatcher.exits == [(batch.id, 0)]
    assert json.loads(dump.read_text()) == json.loads(server.model_dump_json())


def test_settings_read_back_from_their_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(**unusual("sqlite:///x.db"))
    for name, value in settings.environment().items():
        monkeypatch.setenv(name, value)
    assert Settings() == settings
    for name in Settings.model_fields:
        monkeypatch.setenv(name.upper(), "")
    assert Settings() == Settings.model_construct()  # empty: the defaults
