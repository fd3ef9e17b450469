"""The dashboard's Les Alvéoles board at the size of the game's layout (decision V5)."""

from __future__ import annotations

import re

from api.web.boards.alveoles import CELL, MARGIN, render
from engines import load_game


def test_a_3x4_board_draws_its_12_squares_and_31_grooves() -> None:
    game = load_game("alveoles", players=2, layout="classic-3x4")
    state = game.new_initial_state().play(["a1S", "d3N"])
    svg = render(state, "d3N")
    width, height = 4 * CELL + 2 * MARGIN, 3 * CELL + 2 * MARGIN
    assert f'viewBox="0 0 {width} {height}"' in svg
    assert len(re.findall(r'<rect class="sq', svg)) == 12
    plates = re.findall(
        r'<line class="plate[^"]*" x1="(\d+)" y1="(\d+)" x2="(\d+)" y2="(\d+)"', svg
    )
    assert len(plates) == 2
    assert len(re.findall(r'<line class="groove"', svg)) == 31 - 2
    # a1S lies along the bottom edge under column a, d3N along the top edge over column d.
    assert (str(MARGIN), str(MARGIN + 3 * CELL), str(MARGIN + CELL), str(MARGIN + 3 * CELL)) in (
        plates
    )
    top = (str(MARGIN + 3 * CELL), str(MARGIN), str(MARGIN + 4 * CELL), str(MARGIN))
    assert top in plates
    assert ">d<" in svg and ">e<" not in svg and ">3<" in svg and ">4<" not in svg


def test_the_classic_board_keeps_its_64_squares() -> None:
    svg = render(load_game("alveoles", players=2).new_initial_state(), None)
    span = 8 * CELL + 2 * MARGIN
    assert f'viewBox="0 0 {span} {span}"' in svg
    assert len(re.findall(r'<rect class="sq', svg)) == 64
    assert len(re.findall(r'<line class="groove"', svg)) == 144
