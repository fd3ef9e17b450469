"""Which ladder a game gets: the built-in games' own (unchanged), an installed game's declared
``LADDER`` (checked when the game loads: a bad one lists the game as broken with the reason),
or, for a game that declares none, the generic ladder of the generic agents it is offered."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from game_packages import Site, site_packages
from repo_paths import REPO

from analysis.ladder.ladders import LADDERS, ladder_for, pairing_name
from bench.ladder.__main__ import main
from bench.ladder.play import pairing_batch
from engines.registry import broken_games, game_names

TOY = (REPO / "tests" / "toy_nim.py").read_text(encoding="utf-8")

DECLARED = """
from engines.contract import LadderDeclaration

LADDER = LadderDeclaration(
    levels=("random", "toy_only", "mcts"),
    reference="toy_only",
    games=6,
    extra=(("mcts", "random"),),
    options={},
)
"""

GENERIC = """
AGENTS = ()  # no agent of its own: every level is a generic one


def _evaluate(self, seat):
    return 0.0


ToyState.evaluate = _evaluate  # an evaluation of its own: alpha-beta joins the ladder
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    with site_packages(tmp_path, monkeypatch) as installed:
        yield installed


def _install(site: Site, name: str, extra: str) -> None:
    source = TOY.replace('short_name="toy"', f'short_name="{name}"') + "\n" + extra + "\n"
    site.install(f"{name}-pkg", "1.0", {name: f"{name}_game"}, {f"{name}_game": source})


def test_the_builtin_games_ladders_are_the_ones_their_committed_results_were_played_for() -> None:
    # The levels, references and sizes as docs/ladder.md has published them.
    expected = {
        "alquerque": (2, ("random", "easy", "medium", "hard", "expert", "master"), "easy", 200),
        "alveoles": (
            2,
            (
                "random",
                "greedy",
                "bonus_builder",
                "hunter",
                "value",
                "cautious",
                "expert",
                "master",
            ),
            "greedy",
            200,
        ),
        "abalone": (2, ("random", "easy", "medium", "hard", "expert", "master"), "medium", 200),
        "alhambra": (
            3,
            ("random", "greedy", "builder", "collector", "banker", "mcts", "expert"),
            "greedy",
            300,
        ),
    }
    folder = REPO / "studies" / "results" / "ladder"
    for game, (players, levels, reference, games) in expected.items():
        ladder = ladder_for(game)
        assert ladder is LADDERS[game]
        assert (ladder.players, ladder.levels, ladder.reference, ladder.games) == (
            players,
            levels,
            reference,
            games,
        )
        assert ladder.options == ()
        stored = {
            json.loads(line)["pairing"]
            for line in (folder / f"{game}.jsonl").read_text().splitlines()
            if line.strip()
        }
        # Every pairing the committed file holds is still one of the ladder's.
        assert stored <= {pairing_name(a, b) for a, b in ladder.pairings()}


def test_a_packages_declared_ladder_is_its_ladder_and_plays(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _install(site, "laddered", DECLARED)
    assert "laddered" in game_names()
    ladder = ladder_for("laddered")
    assert (ladder.players, ladder.levels, ladder.reference, ladder.games) == (
        2,
        ("random", "toy_only", "mcts"),
        "toy_only",
        6,
    )
    # Next level up, then the reference, then the extra pairing, the stronger first.
    assert ladder.pairings() == [("toy_only", "random"), ("mcts", "toy_only"), ("mcts", "random")]
    main(["--results", str(tmp_path), "run", "--game", "laddered", "--games", "2"])
    rows = [json.loads(x) for x in (tmp_path / "laddered.jsonl").read_text().splitlines()]
    assert sorted((r["pairing"], r["index"]) for r in rows) == sorted(
        (p, i) for p in ("toy_only-random", "mcts-toy_only", "mcts-random") for i in (0, 1)
    )
    # Nim from a pile of 5, taking 1 or 2: every game is won, in 3 to 5 plies.
    assert all(sorted(r["returns"]) == [0.0, 1.0] and 3 <= r["plies"] <= 5 for r in rows)
    capsys.readouterr()
    main(["--results", str(tmp_path), "table", "--game", "laddered"])
    assert "laddered: 2 players, reference toy_only, 6 games" in capsys.readouterr().out


def test_a_ladder_of_the_wrong_shape_lists_the_game_as_broken_with_the_reason(
    site: Site,
) -> None:
    head = "from engines.contract import LadderDeclaration\n"
    shapes = {
        "numbered": "LADDER = 3",
        "unreferenced": head + 'LADDER = LadderDeclaration(("random", "mcts"), "greedy")',
        "crowded": head + 'LADDER = LadderDeclaration(("random",), "random", players=3)',
        "stranger": head
        + 'LADDER = LadderDeclaration(("random", "mcts"), "random", extra=(("mcts", "x"),))',
        "empty": head + 'LADDER = LadderDeclaration((), "random", games=0)',
    }
    for name, extra in shapes.items():
        _install(site, name, extra)
    assert not set(shapes) & set(game_names())
    errors = {b["name"]: b["error"] for b in broken_games()}
    assert "numbered-pkg 1.0" in errors["numbered"]
    assert "LADDER is 3, of type int" in errors["numbered"]
    assert "LadderDeclaration" in errors["numbered"]
    assert "reference 'greedy' is not one of the levels" in errors["unreferenced"]
    assert "players is 3; the game seats 2 to 2" in errors["crowded"]
    assert "extra pairing ('mcts', 'x')" in errors["stranger"]
    assert "levels should be a non-empty tuple" in errors["empty"]
    with pytest.raises(ValueError, match=r"crowded-pkg 1\.0"):
        ladder_for("crowded")


def test_a_game_that_declares_no_ladder_gets_the_generic_one(site: Site) -> None:
    _install(site, "plain", GENERIC)
    ladder = ladder_for("plain")
    assert (ladder.players, ladder.reference, ladder.games, ladder.options) == (
        2,
        "random",
        200,
        (),
    )
    assert ladder.levels == ("random", "mcts:iterations=100", "mcts:iterations=1000", "alphabeta")
    # The toy as it is: no evaluation of its own (so no alpha-beta) and its own ``mcts``,
    # which takes no iterations: the generic ladder keeps only what it can seat.
    _install(site, "toy2", "")
    assert ladder_for("toy2").levels == ("random",)


@pytest.fixture
def kalah(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    """The example package installed as pip would (as tests/analysis/test_example_study_page.py
    does)."""
    example = REPO / "examples" / "kalah"
    with site_packages(tmp_path, monkeypatch) as site:
        site.install_example(example)
        yield site


@pytest.mark.usefixtures("kalah")
def test_kalahs_ladder_climbs_the_players_of_its_study_on_its_largest_board() -> None:
    study = tomllib.loads((REPO / "studies" / "kalah.toml").read_text(encoding="utf-8"))
    board = next(b["options"] for b in study["batch"] if b["name"].startswith("h4s3"))
    played = [b["agents"] for b in study["batch"] if b["name"].startswith("h4s3")]
    ladder = ladder_for("kalah")
    assert list(ladder.levels) == played
    assert (ladder.players, ladder.reference) == (2, "random")
    assert dict(ladder.options) == board == {"houses": 4, "seeds": 3, "empty_capture": True}
    batch = pairing_batch(ladder, *ladder.pairings()[0], ladder.games)
    assert {k: batch.options[k] for k in board} == board
