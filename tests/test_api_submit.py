"""Submitting over HTTP: the app's own limits."""

from __future__ import annotations

import pytest
from api_support import client_for, forget_settings, make_api, point_settings_at

GOOD = {"game": "alquerque", "agents": ["random", "random"], "matches": 10, "chunk_size": 5}


def test_the_app_settings_bound_the_batch_size(
    migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """create_app(Settings(...)) limits apply, whatever the environment allows."""
    from storage.settings import get_settings

    point_settings_at(monkeypatch, migrated_sqlite_url)
    monkeypatch.setenv("MAX_MATCHES_PER_BATCH", "1000")
    get_settings.cache_clear()
    try:
        assert get_settings().max_matches_per_batch == 1000
        app, _ = make_api(migrated_sqlite_url, max_matches_per_batch=10)
        with client_for(app) as client:
            over = client.post("/batches", json={**GOOD, "matches": 11})
            assert over.status_code == 422, over.text
            assert over.json()["field"] == "matches" and "10" in over.json()["message"]
            assert client.post("/batches", json={**GOOD, "matches": 10}).status_code == 202
    finally:
        forget_settings()
