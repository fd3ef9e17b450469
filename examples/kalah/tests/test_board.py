"""Kalah's replay board against docs/rules.md: houses where the players sit (K1), numbered as
the notation numbers them (K7), with the seeds of positions worked out by hand."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from kalah import RENDER_BOARD
from kalah.board import render

from engines.contract import replay
from engines.registry import load_game

SVG = "{http://www.w3.org/2000/svg}"


def _rows(root: ET.Element) -> dict[str, list[tuple[str, str]]]:
    """Each seat's houses as drawn, left to right: (house number label, seeds)."""
    circles = [c for c in root.iter(f"{SVG}circle") if "house" in c.get("class", "")]
    texts = list(root.iter(f"{SVG}text"))
    rows: dict[str, list[tuple[str, str]]] = {}
    for circle in sorted(circles, key=lambda c: float(c.get("cx", 0))):
        seat = next(c for c in circle.get("class", "").split() if c.startswith("seat-"))
        x = circle.get("cx")
        seeds = next(
            t.text
            for t in texts
            if t.get("class") == "seeds" and t.get("x") == x and t.get("y") == circle.get("cy")
        )
        number = next(
            t.text
            for t in texts
            if t.get("class") == "house-number"
            and t.get("x") == x
            and abs(float(t.get("y", 0)) - float(circle.get("cy", 0))) < 64
        )
        rows.setdefault(seat, []).append((str(number), str(seeds)))
    return rows


def _stores(root: ET.Element) -> dict[str, tuple[float, str]]:
    """Each seat's store: its left edge and the seeds written on it."""
    out = {}
    texts = [t for t in root.iter(f"{SVG}text") if t.get("font-weight") == "bold"]
    for rect in root.iter(f"{SVG}rect"):
        classes = rect.get("class", "").split()
        if "store" in classes:
            x = float(rect.get("x", 0))
            seeds = next(t.text for t in texts if abs(float(t.get("x", 0)) - x) < 64)
            out[classes[1]] = (x, str(seeds))
    return out


def test_the_module_declares_this_renderer_by_reference() -> None:
    assert RENDER_BOARD == "kalah.board:render"


def test_the_start_shows_every_house_full_and_empty_stores() -> None:
    # K1: 6 houses of 4 a side, stores empty.
    root = ET.fromstring(render(load_game("kalah").new_initial_state(), None))
    assert root.tag == f"{SVG}svg" and len(root.get("viewBox", "").split()) == 4
    assert root.get("width") is None and root.get("height") is None
    rows = _rows(root)
    assert [s for _, s in rows["seat-0"]] == ["4"] * 6
    assert [s for _, s in rows["seat-1"]] == ["4"] * 6
    assert {seeds for _, seeds in _stores(root).values()} == {"0"}
    title = root.find(f"{SVG}title")
    assert title is not None and title.text == (
        "Kalah, 6 houses a side, at the start: stores 0 to 0, seat 0 to move"
    )


def test_rows_face_each_other_with_seat_ones_first_house_top_right() -> None:
    # Seat 0 plays its third house (4 seeds: houses 4, 5, 6 and its store; K2, K3: it plays
    # again), then its sixth (5 seeds: its store and seat 1's houses 1 to 4).
    state = replay(load_game("kalah"), ["3", "6"])
    root = ET.fromstring(render(state, "6"))
    rows = _rows(root)
    # Seat 0 at the bottom, left to right from its house 1.
    assert rows["seat-0"] == [
        ("1", "4"),
        ("2", "4"),
        ("3", "0"),
        ("4", "5"),
        ("5", "5"),
        ("6", "0"),
    ]
    # Seat 1, facing it: its house 6 at the top left, its house 1 (now 5 seeds) top right.
    assert rows["seat-1"] == [
        ("6", "4"),
        ("5", "4"),
        ("4", "5"),
        ("3", "5"),
        ("2", "5"),
        ("1", "5"),
    ]
    stores = _stores(root)
    # Seat 0's store on the right holds 2, seat 1's on the left none.
    assert stores["seat-0"][1] == "2" and stores["seat-1"][1] == "0"
    assert stores["seat-0"][0] > stores["seat-1"][0]
    title = root.find(f"{SVG}title")
    assert title is not None and "after house 6: stores 2 to 0, seat 1 to move" in str(title.text)


def test_the_end_is_drawn_as_game_over() -> None:
    # K4, K5: one house of 3 each; seat 0 sows its store and seat 1's house, then lands in its
    # own emptied house and takes that seed and the 4 opposite: 6 to 0, the game over.
    state = replay(load_game("kalah", houses=1, seeds=3), ["1"])
    root = ET.fromstring(render(state, "1"))
    assert {k: v[1] for k, v in _stores(root).items()} == {"seat-0": "6", "seat-1": "0"}
    title = root.find(f"{SVG}title")
    assert title is not None and str(title.text).endswith("stores 6 to 0, game over")
