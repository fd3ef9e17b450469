"""The worked example outside the tree, ``examples/kalah/``, stays a working game package:
installed as a distribution (its own entry point, its folder on ``sys.path``) it is listed
with its package, passes the conformance kit and plays with its own ``perfect`` agent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from game_packages import Site, site_packages
from repo_paths import REPO

from engines.core import play_match
from engines.registry import describe_games, load_game, make_agent
from engines.testing import assert_conforms

EXAMPLE = REPO / "examples" / "kalah"


@pytest.fixture
def kalah(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    with site_packages(tmp_path, monkeypatch) as site:
        site.install_example(EXAMPLE)
        yield site


@pytest.mark.usefixtures("kalah")
def test_the_kalah_example_is_a_conforming_package() -> None:
    listed = {g["name"]: g for g in describe_games(caps={})}
    assert (listed["kalah"]["package"], listed["kalah"]["version"]) == ("playtester-kalah", "0.1.0")
    assert "perfect" in [a["name"] for a in listed["kalah"]["agents"]]
    assert_conforms("kalah", games=120)
    assert_conforms("kalah", games=60, options={"houses": 2, "seeds": 3})


@pytest.mark.usefixtures("kalah")
def test_perfect_never_loses_the_first_move_of_two_houses_of_one() -> None:
    # Two houses of one seed each: seat 0 wins 3 to 1 by "2" then "1" (docs/rules.md K3-K5 of
    # the example; worked by hand in its tests), whatever seat 1 does.
    game = load_game("kalah", houses=2, seeds=1)
    for seed in range(5):
        agents = [make_agent(game, "perfect"), make_agent(game, "random")]
        result = play_match(game, agents, seed)
        assert result.scores == (3.0, 1.0) and result.moves == ("2", "1")
