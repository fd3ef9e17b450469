"""Games from installed packages: the entry-point group ``playtester.games``.

Each test installs real distributions (``tests/game_packages.py``) into a folder on
``sys.path`` and reads what the registry and ``playtester games`` make of them: a package's
game listed with its package and version and playable; a name clashing with ours or with
another package refused naming both origins; a package that fails to load listed as broken
with its error while every other game stays usable.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from game_packages import Site, site_packages
from repo_paths import REPO
from typer.testing import CliRunner

from api.cli import app
from engines.contract import CONTRACT_VERSION
from engines.core import play_match
from engines.errors import OptionError
from engines.plugins import GameLoadError
from engines.registry import (
    board_renderer,
    broken_games,
    describe_games,
    game_class,
    game_names,
    game_origin,
    load_game,
    make_agent,
)

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
BUILTIN = PYPROJECT["project"]["entry-points"]["playtester.games"]
VERSION = PYPROJECT["project"]["version"]


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    with site_packages(tmp_path, monkeypatch) as installed:
        yield installed


def _broken(name: str) -> list[dict[str, str]]:
    return [b for b in broken_games() if b["name"] == name]


def test_the_builtin_games_are_playtesters_own_entry_points() -> None:
    assert sorted(BUILTIN) == ["abalone", "alhambra", "alquerque", "alveoles"]
    assert game_names() == sorted(BUILTIN)
    for name, module in BUILTIN.items():
        assert game_class(name).__module__.startswith(module)
        origin = game_origin(name)
        assert (origin.package, origin.version) == ("playtester", VERSION)
    assert broken_games() == []


def test_a_packages_game_is_listed_with_its_origin_and_plays(site: Site) -> None:
    site.install("toy-nim", "0.3", {"toy": "toy_nim"})
    assert game_names() == sorted([*BUILTIN, "toy"])
    described = {g["name"]: g for g in describe_games(caps={})}
    assert (described["toy"]["package"], described["toy"]["version"]) == ("toy-nim", "0.3")
    assert described["alquerque"]["package"] == "playtester"
    game = load_game("toy")
    agents = [make_agent(game, "random"), make_agent(game, "toy_only")]
    result = play_match(game, agents, seed=4)
    # Nim from 5 taking 1 or 2: the pile empties within 3 to 5 plies.
    assert 3 <= result.plies <= 5 and sorted(result.returns) == [0.0, 1.0]


def test_a_name_taken_by_a_builtin_game_is_refused_naming_both(site: Site) -> None:
    site.install("alquerque-fork", "2.0", {"alquerque": "toy_nim"})
    assert game_class("alquerque").game_type.long_name == "Alquerque"
    assert game_origin("alquerque").package == "playtester"
    [refused] = _broken("alquerque")
    assert (refused["package"], refused["version"]) == ("alquerque-fork", "2.0")
    assert "alquerque-fork 2.0" in refused["error"]
    assert f"playtester {VERSION}" in refused["error"]


def test_one_name_from_two_packages_is_refused_for_both(site: Site) -> None:
    site.install("toy-nim", "0.3", {"toy": "toy_nim"})
    site.install("other-toy", "1.1", {"toy": "toy_nim"})
    assert "toy" not in game_names()
    assert sorted(b["package"] for b in _broken("toy")) == ["other-toy", "toy-nim"]
    with pytest.raises(GameLoadError) as caught:
        game_class("toy")
    assert "toy-nim 0.3" in str(caught.value) and "other-toy 1.1" in str(caught.value)
    assert caught.value.field == "game"


def test_a_package_that_fails_to_import_is_broken_and_hides_nothing(site: Site) -> None:
    site.install("toy-nim", "0.3", {"toy": "toy_nim"})
    site.install(
        "crashy", "0.1", {"crashy": "crashy_game"}, {"crashy_game": "import no_such_module_x\n"}
    )
    assert game_names() == sorted([*BUILTIN, "toy"])
    [broken] = _broken("crashy")
    assert broken["package"] == "crashy"
    assert "ModuleNotFoundError" in broken["error"] and "no_such_module_x" in broken["error"]
    assert {g["name"] for g in describe_games(caps={})} == {*BUILTIN, "toy"}
    with pytest.raises(OptionError) as caught:
        load_game("crashy")
    assert "crashy 0.1" in str(caught.value) and caught.value.field == "game"


def test_a_package_written_against_another_contract_is_refused(site: Site) -> None:
    source = (REPO / "tests" / "toy_nim.py").read_text(encoding="utf-8")
    other = CONTRACT_VERSION + 1
    newer = source.replace("CONTRACT_VERSION = 1\n", f"CONTRACT_VERSION = {other}\n")
    unversioned = source.replace("CONTRACT_VERSION = 1\n", "")
    site.install("future-toy", "9.0", {"toy": "future_toy"}, {"future_toy": newer})
    site.install(
        "old-toy",
        "0.0.1",
        {"oldtoy": "old_toy"},
        {"old_toy": unversioned.replace('"toy"', '"oldtoy"')},
    )
    [future] = _broken("toy")
    assert "future-toy 9.0" in future["error"]
    assert (
        f"version {other}" in future["error"] and f"version {CONTRACT_VERSION}" in future["error"]
    )
    [old] = _broken("oldtoy")
    assert "old-toy 0.0.1" in old["error"] and "declares no CONTRACT_VERSION" in old["error"]


def test_a_game_under_another_name_or_an_object_entry_point_is_refused(site: Site) -> None:
    site.install("misnamed", "1.0", {"nim": "toy_nim"})
    site.install("pointed", "1.0", {"pointy": "toy_nim:GAME"})
    site.install("shouty", "1.0", {"Shout-Game": "toy_nim"})
    assert "short_name is 'toy'" in _broken("nim")[0]["error"]
    assert "should name the module" in _broken("pointy")[0]["error"]
    assert "not a lower-case name" in _broken("Shout-Game")[0]["error"]
    assert game_names() == sorted(BUILTIN)


def test_playtester_games_shows_origins_and_broken_packages(site: Site) -> None:
    site.install("toy-nim", "0.3", {"toy": "toy_nim"})
    site.install("crashy", "0.1", {"crashy": "crashy_game"}, {"crashy_game": "1/0\n"})
    result = CliRunner().invoke(app, ["games"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "toy — Toy Nim (2 players) from toy-nim 0.3" in text
    assert f"alveoles — Les Alvéoles (2–4 players) from playtester {VERSION}" in text
    assert "crashy — broken, from crashy 0.1" in text and "ZeroDivisionError" in text


def _toy_named(name: str, extra: str) -> str:
    """The toy's module as game ``name``, with ``extra`` source after it."""
    source = (REPO / "tests" / "toy_nim.py").read_text(encoding="utf-8")
    return source.replace('short_name="toy"', f'short_name="{name}"') + "\n" + extra + "\n"


SECTION = "class Section:\n    name = {name!r}\n    {members}\n\n\nREPORT = Section()"
"""A report section's look-alike: ``name`` and the callables ``members`` set."""


def test_a_board_or_report_of_the_wrong_kind_lists_the_game_as_broken(site: Site) -> None:
    shapes = {
        "numbered": "RENDER_BOARD = 3",
        "spaced": 'RENDER_BOARD = "a board module"',
        "tableless": SECTION.format(name="tableless", members="build = print"),
        "misnamed": SECTION.format(name="other", members="build = tables = print"),
        "dotted": 'REPORT = "toy_report.REPORT"',
    }
    for name, extra in shapes.items():
        site.install(
            f"{name}-pkg", "1.0", {name: f"{name}_game"}, {f"{name}_game": _toy_named(name, extra)}
        )
    assert game_names() == sorted(BUILTIN)
    errors = {name: _broken(name)[0]["error"] for name in shapes}
    assert "numbered-pkg 1.0" in errors["numbered"]
    assert (
        "RENDER_BOARD is 3, of type int" in errors["numbered"] and "function" in errors["numbered"]
    )
    assert "RENDER_BOARD is 'a board module'" in errors["spaced"]
    assert "'module:attribute'" in errors["spaced"]
    assert "of type Section, with no tables" in errors["tableless"]
    assert "the name of its REPORT is 'other'" in errors["misnamed"]
    assert "REPORT is 'toy_report.REPORT'" in errors["dotted"]


def test_a_board_given_as_a_function_or_a_reference_is_the_games(site: Site) -> None:
    board = "def draw(state, last_move):\n    return '<svg/>'\n"
    site.install(
        "direct",
        "1.0",
        {"direct": "direct_game"},
        {"direct_game": _toy_named("direct", board + "RENDER_BOARD = draw")},
    )
    site.install(
        "byref",
        "1.0",
        {"byref": "byref_game"},
        {
            "byref_game": _toy_named("byref", 'RENDER_BOARD = "byref_draw:draw"'),
            "byref_draw": board,
        },
    )
    site.install("plain", "1.0", {"plain": "plain_game"}, {"plain_game": _toy_named("plain", "")})
    import byref_draw  # type: ignore[import-not-found]
    import direct_game  # type: ignore[import-not-found]

    assert board_renderer("direct") is direct_game.draw
    assert board_renderer("byref") is byref_draw.draw
    assert board_renderer("plain") is None
    assert board_renderer("openspiel:tic_tac_toe") is None


def test_a_reference_that_does_not_resolve_names_the_package_at_first_use(site: Site) -> None:
    refs = {
        "nomodule": 'RENDER_BOARD = "no_such_module_y:draw"',
        "noattr": 'RENDER_BOARD = "toy_nim:no_such_draw"',
        "notcallable": 'RENDER_BOARD = "toy_nim:CONTRACT_VERSION"',
    }
    for name, extra in refs.items():
        site.install(
            f"{name}-pkg", "2.0", {name: f"{name}_game"}, {f"{name}_game": _toy_named(name, extra)}
        )
    # The game loads and plays: only drawing it needs the board.
    assert set(refs) <= set(game_names())
    expected = {
        "nomodule": "ModuleNotFoundError",
        "noattr": "toy_nim has no no_such_draw",
        "notcallable": "not a function",
    }
    for name, fragment in expected.items():
        with pytest.raises(GameLoadError) as caught:
            board_renderer(name)
        assert f"{name}-pkg 2.0" in str(caught.value) and fragment in str(caught.value)
        assert caught.value.field == "game"
