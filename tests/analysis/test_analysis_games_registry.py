"""The report's game sections come from the games themselves (each game module's ``REPORT``);
the generic modules name no game."""

from __future__ import annotations

import importlib
import re

import pytest
from repo_paths import REPO

from analysis.formatting import TextTable
from analysis.games import game_report, registered
from engines.registry import game_names

ANALYSIS = REPO / "analysis"


def test_each_game_declares_its_section() -> None:
    # Every game the engines know has its report section (ARCHITECTURE.md, "a new game"),
    # and no section stands for a game the engines do not know.
    assert registered() == sorted(game_names())
    for name in registered():
        section = game_report(name)
        assert section is not None and section.name == name and section.title
    assert game_report("no-such-game") is None


def test_a_builtin_games_section_is_its_own_analysis_module() -> None:
    # One mechanism: the section a report uses is the object in analysis/games/<game>.py, found
    # through the game module's REPORT, with no list of sections beside it.
    for name in game_names():
        assert game_report(name) is importlib.import_module(f"analysis.games.{name}").REPORT
    assert game_report("openspiel:tic_tac_toe") is None


@pytest.mark.parametrize("module", sorted(p.name for p in ANALYSIS.glob("*.py")))
def test_generic_analysis_modules_name_no_game(module: str) -> None:
    text = (ANALYSIS / module).read_text(encoding="utf-8")
    for game in game_names():
        assert not re.search(rf"\b{game}\b", text), f"{module} names {game}"


def test_section_tables_render_in_the_terminal_and_in_html() -> None:
    from analysis.html_parts import text_table
    from api.cli_tables import rich_table

    t = TextTable("Draw causes", ("cause", "draws"), [["<ply cap>", "3"]], note="n")
    assert rich_table(t).row_count == 1
    page = text_table(t)
    assert "&lt;ply cap&gt;" in page and "<h3>Draw causes</h3>" in page
