"""The Abalone and Alhambra boards of the replay page, checked against docs/rules/ and the
tile table: cells and marbles read back from the drawing's geometry, tiles and walls from the
positions of their shapes, and a played match of each game replayed through the JSON."""

from __future__ import annotations

import csv
import random
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from api_support import RecordingDispatcher, client_for, make_api
from fastapi.testclient import TestClient
from repo_paths import REPO

from api.web.boards import SEAT_COLOURS, renderer_for
from engines.core import State
from engines.registry import load_game
from storage.settings import Settings

SVG = "{http://www.w3.org/2000/svg}"
TILES_CSV = REPO / "engines" / "alhambra" / "tiles.csv"


def _draw(game: str, state: State, move: str | None) -> ET.Element:
    render = renderer_for(game)
    assert render is not None
    svg = render(state, move)
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.get("viewBox")
    assert root.get("width") is None and root.get("height") is None
    assert root.find(f"{SVG}title") is not None
    return root


# --------------------------------------------------------------------------- Abalone

ROWS = "ABCDEFGHI"


def _abalone_names(root: ET.Element) -> dict[tuple[float, float], str]:
    """Cell name by centre, read from the drawing alone: a row is the cells level with its
    letter, and along a row the numbers run from max(1, r − 3) (docs/rules/abalone.md) left to
    right."""
    cells = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "cell"]
    letters = {
        t.text: float(t.get("y", "nan")) for t in root.iter(f"{SVG}text") if t.text in set(ROWS)
    }
    assert len(cells) == 61 and len(letters) == 9
    # Row I is on top, row A at the bottom.
    assert [r for r, _ in sorted(letters.items(), key=lambda kv: kv[1])] == list(reversed(ROWS))
    names = {}
    for r, row in enumerate(ROWS):
        level = sorted(
            (float(c.get("cx", "nan")), float(c.get("cy", "nan")))
            for c in cells
            if abs(float(c.get("cy", "nan")) - letters[row]) < 1
        )
        assert len(level) == 9 - abs(r - 4)
        for i, centre in enumerate(level):
            names[centre] = f"{row}{max(1, r - 3) + i}"
    return names


def _where(root: ET.Element, cls: str) -> list[tuple[str, ET.Element]]:
    names = _abalone_names(root)
    out = []
    for c in root.iter(f"{SVG}circle"):
        if cls in c.get("class", "").split():
            centre = (float(c.get("cx", "nan")), float(c.get("cy", "nan")))
            if centre in names:
                out.append((names[centre], c))
    return out


def _marbles(root: ET.Element) -> dict[str, set[str]]:
    by_seat: dict[str, set[str]] = {}
    for name, c in _where(root, "marble"):
        seat = next(k for k in c.get("class", "").split() if k.startswith("seat-"))
        by_seat.setdefault(seat, set()).add(name)
    return by_seat


def _span(row: str, first: int, last: int) -> set[str]:
    return {f"{row}{n}" for n in range(first, last + 1)}


def test_abalone_standard_start_matches_docs_rules() -> None:
    state = load_game("abalone").new_initial_state()
    root = _draw("abalone", state, None)
    marbles = _marbles(root)
    black = _span("A", 1, 5) | _span("B", 1, 6) | _span("C", 3, 5)
    white = _span("I", 5, 9) | _span("H", 4, 9) | _span("G", 5, 7)
    assert len(black) == len(white) == 14
    assert marbles == {"seat-0": black, "seat-1": white}
    rings = {c.get("stroke") for _, c in _where(root, "seat-1")}
    assert rings == {SEAT_COLOURS[1]}
    assert not _where(root, "last-to") and not _where(root, "last-from")
    # The diagonal numbers 1–9 are printed once each.
    numbers = sorted(t.text or "" for t in root.iter(f"{SVG}text") if (t.text or "").isdigit())
    assert numbers == [str(n) for n in range(1, 10)]


def test_abalone_highlights_the_cells_of_the_last_move() -> None:
    state = load_game("abalone").new_initial_state()
    state.apply_string("C3C5NE")  # a broadside of three: C3 C4 C5 step NE (r + 1, c + 1)
    root = _draw("abalone", state, "C3C5NE")
    assert {n for n, _ in _where(root, "last-from")} == {"C3", "C4", "C5"}
    assert {n for n, _ in _where(root, "last-to")} == {"D4", "D5", "D6"}
    assert {"D4", "D5", "D6"} <= _marbles(root)["seat-0"]
    assert not {"C3", "C4", "C5"} & _marbles(root)["seat-0"]


def test_abalone_placement_and_pushed_off_marbles_are_shown() -> None:
    game = load_game("abalone", layout="free_placement")
    state = game.new_initial_state()
    state.apply_string("+E5")
    root = _draw("abalone", state, "+E5")
    assert {n for n, _ in _where(root, "last-to")} == {"E5"}
    assert _marbles(root) == {"seat-0": {"E5"}}

    # Two black marbles push the white one on E9, at the east edge, off the board (2 v 1).
    from engines.abalone import AbaloneState

    game = load_game("abalone")
    black = ["E7", "E8", "A1", "A2", "A3"]
    white = ["E9", "I5", "I6", "I7", "I8"]
    state = AbaloneState.from_cells(game, [black, white])  # type: ignore[arg-type]
    state.apply_string("E7E8E")
    root = _draw("abalone", state, "E7E8E")
    assert _marbles(root)["seat-1"] == {"I5", "I6", "I7", "I8"}
    off = {
        t.get("data-seat"): t.text or ""
        for t in root.iter(f"{SVG}text")
        if t.get("class") == "pushed-off"
    }
    assert "pushed off 1 of 6" in off["0"] and "pushed off 0 of 6" in off["1"]


def test_abalone_three_players_in_their_seat_colours() -> None:
    state = load_game("abalone", players=3).new_initial_state()
    root = _draw("abalone", state, None)
    marbles = _marbles(root)
    red = {"E1", "F2", "G3", "H4", "I5", "D1", "E2", "F3", "G4", "H5", "I6"}
    white = {"E9", "F9", "G9", "H9", "I9", "D8", "E8", "F8", "G8", "H8", "I8"}
    assert marbles == {
        "seat-0": _span("A", 1, 5) | _span("B", 1, 6),
        "seat-1": white,
        "seat-2": red,
    }
    for seat in range(3):
        strokes = {c.get("stroke") for _, c in _where(root, f"seat-{seat}")}
        assert strokes == {SEAT_COLOURS[seat]}
    assert len({c.get("fill") for _, c in _where(root, "marble")}) == 3


# --------------------------------------------------------------------------- Alhambra


def _csv_walls() -> dict[int, set[str]]:
    with TILES_CSV.open(newline="") as f:
        return {
            int(row["id"]): {side for side in "NESW" if row[f"wall_{side.lower()}"] == "1"}
            for row in csv.DictReader(f)
        }


def _played_alhambra(players: int, seed: int, want: int) -> Iterator[tuple[State, str]]:
    """Positions of a random game after each move, up to ``want`` placements in all."""
    state = load_game("alhambra", players=players).new_initial_state(seed)
    rng = random.Random(seed)
    placed = 0
    while not state.is_terminal() and placed < want:
        action = rng.choice(state.legal_actions())
        move = state.action_to_string(action)
        state.apply(action)
        placed += move.startswith("place")
        yield state, move


def _panels(root: ET.Element) -> dict[int, ET.Element]:
    return {
        int(g.get("data-seat", "-1")): g
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "seat-panel"
    }


def _rect(tile: ET.Element) -> tuple[float, float, float]:
    r = tile.find(f"{SVG}rect")
    assert r is not None
    return float(r.get("x", "nan")), float(r.get("y", "nan")), float(r.get("width", "nan"))


def _sides(tile: ET.Element) -> set[str]:
    """The sides of a tile that carry a wall, from where its thick lines lie."""
    x, y, size = _rect(tile)
    out = set()
    for line in tile.iter(f"{SVG}line"):
        x1, y1 = float(line.get("x1", "nan")), float(line.get("y1", "nan"))
        x2, y2 = float(line.get("x2", "nan")), float(line.get("y2", "nan"))
        if y1 == y2:
            out.add("N" if y1 < y + size / 2 else "S")
        elif x1 == x2:
            out.add("W" if x1 < x + size / 2 else "E")
    return out


def _built(panel: ET.Element) -> dict[tuple[int, int], ET.Element]:
    """The panel's Alhambra by (x, y), placed from each tile's position relative to the
    fountain's (x east, y north)."""
    tiles = [
        g
        for g in panel.iter(f"{SVG}g")
        if "tile" in g.get("class", "").split() and g.get("data-reserve") is None
    ]
    fountain = [g for g in tiles if "fountain" in g.get("class", "").split()]
    assert len(fountain) == 1
    fx, fy, size = _rect(fountain[0])
    out = {}
    for g in tiles:
        x, y, _ = _rect(g)
        out[(round((x - fx) / size), round((fy - y) / size))] = g
    return out


def _check_alhambra(state: Any, root: ET.Element) -> None:
    walls = _csv_walls()
    panels = _panels(root)
    assert sorted(panels) == list(range(state.game.num_players))
    for seat, panel in panels.items():
        built = _built(panel)
        expected = state.alhambra(seat)
        assert {xy: int(g.get("data-tile", "-1")) for xy, g in built.items()} == expected
        assert expected[(0, 0)] == 0
        for xy, tile in expected.items():
            assert _sides(built[xy]) == (walls[tile] if tile else set()), (seat, xy, tile)
        reserve = [g for g in panel.iter(f"{SVG}g") if g.get("data-reserve") is not None]
        assert sorted(int(g.get("data-tile", "-1")) for g in reserve) == state.reserve(seat)
        for g in reserve:
            assert _sides(g) == walls[int(g.get("data-tile", "-1"))]


@pytest.mark.parametrize("players", [2, 6])
def test_alhambra_draws_each_tile_where_it_stands_with_its_walls(players: int) -> None:
    highlighted = 0
    seen_reserve = False
    for state, move in _played_alhambra(players, seed=11, want=14):
        if not move.startswith(("place", "reserve", "remove", "swap")):
            continue
        root = _draw("alhambra", state, move)
        _check_alhambra(state, root)
        seen_reserve |= any(state.reserve(s) for s in range(players))  # type: ignore[attr-defined]
        last = [g for g in root.iter(f"{SVG}g") if "last" in g.get("class", "").split()]
        assert len(last) == 1
        if move.startswith("place"):
            tile, _, where = move.split()[1:]
            x, y = (int(v) for v in where.split(","))
            panel = next(p for p in _panels(root).values() if last[0] in list(p.iter()))
            assert _built(panel)[(x, y)] is last[0] and last[0].get("data-tile") == tile
            highlighted += 1
    assert highlighted >= 10 and seen_reserve
    legend = {t.text for t in root.iter(f"{SVG}text")}
    assert {"pavilion", "seraglio", "arcades", "chambers", "garden", "tower"} <= legend


def test_alhambra_start_has_one_fountain_per_seat_and_nothing_highlighted() -> None:
    state = load_game("alhambra", players=6).new_initial_state(2)
    root = _draw("alhambra", state, None)
    _check_alhambra(state, root)
    assert not [g for g in root.iter(f"{SVG}g") if "last" in g.get("class", "").split()]


# --------------------------------------------------------------------------- replay


@pytest.fixture
def app_client(migrated_sqlite_url: str) -> Iterator[tuple[TestClient, RecordingDispatcher, str]]:
    app, dispatcher = make_api(migrated_sqlite_url, api_key="boards-key")
    with client_for(app) as client:
        yield client, dispatcher, migrated_sqlite_url


def _short_batch(url: str, game: str, max_plies: int) -> str:
    """One match really played by the workers' code, cut at ``max_plies``, stored."""
    from storage import crud
    from storage.db import get_engine
    from workers.batches import plan_batch
    from workers.play import play_chunk

    plan = plan_batch(
        settings=Settings(),
        game=game,
        players=None,
        options={},
        agents=["random", "random"],
        matches=1,
        seed=7,
        seat_policy=None,
        chunk_size=None,
        max_plies=max_plies,
    )
    engine = get_engine(url)
    batch = crud.create_batch(engine, plan=plan)
    records = play_chunk(batch, 0, 1)
    crud.write_chunk(engine, batch_id=batch.id, start=0, stop=1, records=records, duration=0.1)
    crud.set_status(engine, batch.id, "done")
    return batch.id


@pytest.mark.parametrize("game", ["abalone", "alhambra"])
def test_a_played_match_replays_with_a_board_per_ply(
    app_client: tuple[TestClient, RecordingDispatcher, str], game: str
) -> None:
    client, _, url = app_client
    batch_id = _short_batch(url, game, 40)
    stored = client.get(f"/batches/{batch_id}/matches/0").json()
    data = client.get(f"/ui/batches/{batch_id}/matches/0/positions").json()
    positions = data["positions"]
    assert stored["plies"] == 40 and len(positions) == 41
    assert [p["move"] for p in positions[1:]] == stored["moves"]
    for p in positions:
        root = ET.fromstring(p["board"])
        assert root.tag == f"{SVG}svg" and p["text"] is None
    page = client.get(f"/ui/batches/{batch_id}/matches/0?ply=5")
    assert page.status_code == 200 and f"board-{game}" in page.text
