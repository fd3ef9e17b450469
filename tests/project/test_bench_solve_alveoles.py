"""``bench.solve_alveoles``: its files, its random layouts and its resumption, on 2 × 2."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from bench.solve_alveoles import random_layout, run_board
from engines.alveoles.layouts import CLASSIC


def test_random_layouts_draw_from_the_classic_values_and_repeat() -> None:
    layout = random_layout(3, 4, 7)
    assert layout == random_layout(3, 4, 7)
    assert layout != random_layout(3, 4, 8)
    assert [len(row) for row in layout] == [4, 4, 4]
    drawn = Counter(v for row in layout for v in row)
    classic = Counter(v for row in CLASSIC for v in row)
    assert all(drawn[v] <= classic[v] for v in drawn)


def test_a_board_is_written_and_resumed(tmp_path: Path) -> None:
    run_board(2, 2, 2, out=tmp_path)
    first = json.loads((tmp_path / "2x2.json").read_text())
    # All 50s: a plain minimax (test_alveoles_solver.py) gives the first player +100.
    assert first["classic"]["name"] == "classic-2x2"
    assert first["classic"]["start_value"] == 100
    assert first["table_entries"] == 2**12 and first["classic"]["table_bytes"] == 2 * 2**12
    assert [r["index"] for r in first["random"]] == [0, 1]
    run_board(2, 2, 3, out=tmp_path)
    again = json.loads((tmp_path / "2x2.json").read_text())
    assert again["random"][:2] == first["random"][:2]
    assert [r["index"] for r in again["random"]] == [0, 1, 2]
    assert again["random_summary"]["layouts"] == 3
