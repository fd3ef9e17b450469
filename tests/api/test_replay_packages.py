"""The replay page shows any installed game: from the board renderer its package declares
(``RENDER_BOARD``, a function or a ``module:attribute`` reference), and from the engine's text
when the package declares none. The packages are real distributions (``game_packages.Site``);
the matches are played by the workers' code and read back through the dashboard's routes."""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from analysis_data import played_batch
from api_support import client_for, make_api
from fastapi.testclient import TestClient
from game_packages import Site, site_packages
from repo_paths import REPO

SVG = "{http://www.w3.org/2000/svg}"
TOY = (REPO / "tests" / "toy_nim.py").read_text(encoding="utf-8")
DRAWN_TOY = (
    TOY
    + """

def draw(state: State, last_move: str | None) -> str:
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 5 1" class="board board-toy">'
        f"<title>pile {state.pile} after {last_move}</title></svg>"
    )


RENDER_BOARD = draw
"""
)
KALAH = REPO / "examples" / "kalah"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    with site_packages(tmp_path, monkeypatch) as installed:
        yield installed


@pytest.fixture
def client(migrated_sqlite_url: str) -> Iterator[TestClient]:
    app, _ = make_api(migrated_sqlite_url)
    with client_for(app) as test_client:
        yield test_client


def _positions(client: TestClient, batch_id: str) -> list[dict[str, Any]]:
    data = client.get(f"/ui/batches/{batch_id}/matches/0/positions").json()
    assert data["next"] is None  # a short game: one page
    positions: list[dict[str, Any]] = data["positions"]
    return positions


def _piles(moves: list[str]) -> list[int]:
    # Nim from a pile of 5: each move takes its number of counters.
    piles = [5]
    for move in moves:
        piles.append(piles[-1] - int(move))
    return piles


def test_a_game_without_a_board_replays_from_its_text(
    site: Site, client: TestClient, migrated_sqlite_url: str
) -> None:
    site.install("toy-nim", "0.3", {"toy": "toy_nim"})
    batch_id = played_batch(migrated_sqlite_url, "toy", ["random", "random"], 1)
    stored = client.get(f"/batches/{batch_id}/matches/0").json()
    positions = _positions(client, batch_id)
    assert [p["move"] for p in positions[1:]] == stored["moves"]
    piles = _piles(stored["moves"])
    assert piles[-1] == 0
    for position, pile in zip(positions, piles, strict=True):
        assert position["board"] is None
        assert position["text"].startswith(f"pile {pile}, ")
    page = client.get(f"/ui/batches/{batch_id}/matches/0", params={"ply": 1})
    assert page.status_code == 200
    assert f'<pre class="text-board">pile {piles[1]}, seat 1 to move</pre>' in page.text


def test_a_packages_own_renderer_draws_every_ply(
    site: Site, client: TestClient, migrated_sqlite_url: str
) -> None:
    site.install("drawn-toy", "1.2", {"toy": "drawn_toy"}, {"drawn_toy": DRAWN_TOY})
    batch_id = played_batch(migrated_sqlite_url, "toy", ["random", "random"], 1)
    stored = client.get(f"/batches/{batch_id}/matches/0").json()
    positions = _positions(client, batch_id)
    piles = _piles(stored["moves"])
    for position, pile, move in zip(positions, piles, [None, *stored["moves"]], strict=True):
        assert position["text"] is None
        root = ET.fromstring(position["board"])
        assert root.get("class") == "board board-toy"
        assert root.findtext(f"{SVG}title") == f"pile {pile} after {move}"
    page = client.get(f"/ui/batches/{batch_id}/matches/0", params={"ply": 2})
    assert page.status_code == 200
    assert f"<title>pile {piles[2]} after {stored['moves'][1]}</title>" in page.text
    assert "text-board" not in page.text


def test_kalah_replays_on_its_own_board(
    site: Site, client: TestClient, migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.install_example(KALAH)
    batch_id = played_batch(migrated_sqlite_url, "kalah", ["random", "random"], 1)
    stored = client.get(f"/batches/{batch_id}/matches/0").json()
    positions = _positions(client, batch_id)
    assert len(positions) == stored["plies"] + 1
    for position in positions:
        root = ET.fromstring(position["board"])
        assert "board-kalah" in root.get("class", "")
    # The last board's stores are the match's final scores, as the database has them.
    final = [int(s) for s in stored["scores"]]
    title = ET.fromstring(positions[-1]["board"]).findtext(f"{SVG}title")
    assert str(title).endswith(f"stores {final[0]} to {final[1]}, game over")
    page = client.get(f"/ui/batches/{batch_id}/matches/0", params={"ply": stored["plies"]})
    assert page.status_code == 200 and "board-kalah" in page.text


def test_a_renderer_that_does_not_resolve_is_a_422_naming_the_package(
    site: Site, client: TestClient, migrated_sqlite_url: str
) -> None:
    source = TOY + '\nRENDER_BOARD = "no_such_board_module:render"\n'
    site.install("lost-board", "0.9", {"toy": "lost_board"}, {"lost_board": source})
    batch_id = played_batch(migrated_sqlite_url, "toy", ["random", "random"], 1)
    answer = client.get(f"/ui/batches/{batch_id}/matches/0/positions")
    assert answer.status_code == 422
    body = answer.json()
    assert body["field"] == "game"
    assert "lost-board 0.9" in body["message"] and "no_such_board_module" in body["message"]
    page = client.get(f"/ui/batches/{batch_id}/matches/0")
    assert page.status_code == 422 and "lost-board 0.9" in html.unescape(page.text)


def test_a_renderer_that_raises_is_a_422_naming_the_package_and_ply(
    site: Site, client: TestClient, migrated_sqlite_url: str
) -> None:
    source = TOY + "\n\ndef RENDER_BOARD(state, last_move):\n    return 1 / (state.pile - 5)\n"
    site.install("fragile", "0.1", {"toy": "fragile_toy"}, {"fragile_toy": source})
    batch_id = played_batch(migrated_sqlite_url, "toy", ["random", "random"], 1)
    answer = client.get(f"/ui/batches/{batch_id}/matches/0/positions")
    assert answer.status_code == 422
    message = answer.json()["message"]
    # The pile is 5 only at the start: ply 0 fails, and says so.
    assert "fragile 0.1" in message and "ply 0" in message and "ZeroDivisionError" in message
