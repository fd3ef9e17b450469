"""``playtester check-game`` and ``playtester new-game``: the conformance kit on the command
line, and the package a designer starts from (installed here as a distribution on
``sys.path``; ``test_new_game_install.py`` installs it with pip)."""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from game_packages import Site, site_packages
from repo_paths import REPO
from typer.testing import CliRunner

from api.cli import app
from engines.core import play_match, replay
from engines.registry import game_origin, load_game, make_agent
from engines.testing import assert_conforms

runner = CliRunner()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    with site_packages(tmp_path / "site", monkeypatch) as installed:
        (tmp_path / "site").mkdir()
        yield installed


def _words(text: str) -> str:
    return " ".join(text.split())


def test_check_game_passes_a_builtin_game_with_a_speed_line() -> None:
    result = runner.invoke(app, ["check-game", "alquerque", "--games", "30", "--seed", "5"])
    assert result.exit_code == 0, result.output
    text = _words(result.stdout)
    assert "alquerque: 30 games," in text and "plies/s" in text and "games/s" in text
    assert "ok: 30 games met every check" in text


def test_check_game_names_the_seed_and_ply_of_a_planted_fault(site: Site) -> None:
    # Nim from a pile of 5, taking 1 or 2 a ply, lasts at least 3 plies: a declared maximum
    # of 2 is broken by every game, at its ply 2.
    source = (REPO / "tests" / "toy_nim.py").read_text(encoding="utf-8")
    short = source.replace("max_game_length=5", "max_game_length=2")
    site.install("short-toy", "0.1", {"toy": "short_toy"}, {"short_toy": short})
    result = runner.invoke(app, ["check-game", "toy", "--games", "8", "--seed", "40"])
    assert result.exit_code == 1, result.output
    text = _words(result.stdout)
    assert "FAIL length: seed 40, ply 2 (2 players): not over after the declared" in text
    assert "8 of 8 games failed: length 8" in text
    assert "... 3 more length failures" in text


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["check-game", "nosuchgame"], "unknown game 'nosuchgame'"),
        (["check-game", "alquerque", "--games", "0"], "number of games must be at least 1"),
        (["check-game", "alquerque", "--players", "3"], "played by 2 players, not 3"),
        (["check-game", "alquerque", "-o", "nosuch=1"], "unknown option 'nosuch' for alquerque"),
        (["new-game", "Bad-Name"], "lower-case letters"),
        (["new-game", "alveoles"], "already comes from playtester"),
    ],
)
def test_bad_input_is_one_error_line(arguments: list[str], message: str) -> None:
    result = runner.invoke(app, arguments)
    assert result.exit_code == 2, result.output
    assert message in _words(result.stderr)
    assert "Traceback" not in result.output


def test_new_game_refuses_a_folder_with_something_in_it(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    result = runner.invoke(app, ["new-game", "ludo", "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "already exists and is not empty" in _words(result.stderr)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_new_game_writes_a_package_that_plays_and_conforms(
    tmp_path: Path, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "playtester-race_to_zero"
    result = runner.invoke(app, ["new-game", "race_to_zero", "--dir", str(target)])
    assert result.exit_code == 0, result.output
    project = tomllib.loads((target / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["name"] == "playtester-race-to-zero"
    entry = project["project"]["entry-points"]["playtester.games"]
    assert entry == {"race_to_zero": "race_to_zero_game"}
    assert (target / "race_to_zero_game" / "rules.py").is_file()
    decisions = (target / "docs" / "rules.md").read_text(encoding="utf-8")
    assert "**R1 — The pile.**" in decisions and "**R4 — Notation.**" in decisions
    assert (target / "tests" / "test_race_to_zero_rules.py").is_file()
    # What pip install -e would do: the package's folder on the path, its entry point read.
    monkeypatch.syspath_prepend(str(target))
    site.modules.update({"race_to_zero_game", "race_to_zero_game.rules"})
    site.install("playtester-race-to-zero", "0.1.0", entry)
    assert str(game_origin("race_to_zero")) == "playtester-race-to-zero 0.1.0"
    assert assert_conforms("race_to_zero", games=100).games == 100
    # The template's rules (docs/rules.md R1-R3): from a pile of 4, take 3 then 1: seat 1
    # takes the last counter and wins.
    final = replay(load_game("race_to_zero", pile=4), ["take3", "take1"])
    assert final.is_terminal() and final.returns() == [0.0, 1.0]
    game = load_game("race_to_zero")
    result_ = play_match(game, [make_agent(game, "mcts", None), make_agent(game, "random")], 2)
    assert sorted(result_.returns) == [0.0, 1.0] and result_.plies >= 21 // 3
    assert "race_to_zero_game" in sys.modules
