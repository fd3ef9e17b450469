"""The HTTP API takes an installed package's game like ours, and refuses one whose package
cannot load with a 422 on ``game`` naming that package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from api_support import client_for, forget_settings, make_api, point_settings_at
from fastapi.testclient import TestClient
from game_packages import Site, site_packages


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    with site_packages(tmp_path / "site", monkeypatch) as site:
        (tmp_path / "site").mkdir()
        site.install("toy-nim", "0.3", {"toy": "toy_nim"})
        site.install("crashy", "0.1", {"crashy": "crashy_game"}, {"crashy_game": "1/0\n"})
        yield site


@pytest.fixture
def client(installed: Site, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    point_settings_at(monkeypatch, db_url)
    app, _ = make_api(db_url)
    with client_for(app) as test_client:
        yield test_client
    forget_settings()


def test_games_lists_a_packages_game_with_its_origin(client: TestClient) -> None:
    games = {g["name"]: g for g in client.get("/games").json()}
    assert (games["toy"]["package"], games["toy"]["version"]) == ("toy-nim", "0.3")
    assert games["alquerque"]["package"] == "playtester"
    assert "crashy" not in games


def test_a_batch_of_a_packages_game_is_accepted(client: TestClient) -> None:
    response = client.post("/batches", json={"game": "toy", "agents": ["random"], "matches": 4})
    assert response.status_code in (200, 201, 202), response.text


def test_a_game_whose_package_fails_to_load_is_a_422_naming_it(client: TestClient) -> None:
    response = client.post("/batches", json={"game": "crashy", "agents": ["random"], "matches": 4})
    assert response.status_code == 422
    body = response.json()
    assert body["field"] == "game"
    assert "crashy 0.1" in body["message"] and "ZeroDivisionError" in body["message"]
