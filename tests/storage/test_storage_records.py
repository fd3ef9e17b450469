"""Alhambra moves hold spaces: they are stored one per line and replay from the database."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from api.cli import app
from storage.records import join_moves, split_moves


def test_moves_with_spaces_survive_the_moves_column() -> None:
    moves = ("take denar:3+dirham:2", "buy florin pay florin:4+florin:5", "place 23 at 1,-2")
    assert split_moves(join_moves(moves)) == list(moves)
    assert split_moves(join_moves(("pass",))) == ["pass"]
    assert split_moves("a1-b2 c3xd4") == ["a1-b2", "c3xd4"]  # rows stored before
    assert split_moves("") == [] and split_moves(None) == []


@pytest.mark.slow
def test_a_stored_alhambra_match_replays(sqlite_url: str) -> None:
    url = sqlite_url
    runner = CliRunner()
    ran = runner.invoke(
        app,
        ["run", "alhambra", "--agents", "greedy,random", "--matches", "2", "--seed", "3",
         "--workers", "1", "--db", url],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    found = re.search(r"batch (\w{12}): done, 2 played, 0 failed", ran.stdout)
    assert found, ran.stdout
    batch = found.group(1)
    shown = runner.invoke(app, ["replay", batch, "1", "--db", url])
    assert shown.exit_code == 0, shown.output
    assert "re-played from its seed: same moves" in shown.output
    assert "buy " in shown.output and "Alhambra, 2 players; game over" in shown.output
