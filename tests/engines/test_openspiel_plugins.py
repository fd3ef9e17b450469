"""An installed game through the OpenSpiel bridge, with no adapter of its own.

The example package ``examples/kalah`` is installed for the test (as tests/engines/
test_example_kalah.py does): the bridge registers it as ``playtester_kalah`` with its action
codes as ids. Expected values come from our own rules (the reference the bridge must agree
with), OpenSpiel's own ``random_sim_test``, and an exact minimax written here.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from game_packages import site_packages
from open_spiel.python.algorithms import mcts
from repo_paths import REPO

from engines.core import OptionError, State
from engines.openspiel.ours import register, spiel_game_of
from engines.registry import load_game

EXAMPLE = REPO / "examples" / "kalah"


@pytest.fixture
def packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with site_packages(tmp_path, monkeypatch) as site:
        site.install_example(EXAMPLE)
        site.install("toy-nim", "0.3", {"toy": "toy_nim"})
        site.install("hidden-guess", "0.1", {"guess": "hidden_guess"})
        yield


@pytest.mark.usefixtures("packages")
def test_openspiel_checks_an_installed_game_through_the_bridge() -> None:
    ours = load_game("kalah", houses=3, seeds=2)
    game = spiel_game_of(ours)
    kind = game.get_type()
    assert kind.short_name == "playtester_kalah"
    assert kind.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    assert game.num_distinct_actions() == ours.game_type.num_distinct_actions
    pyspiel.random_sim_test(game, num_sims=5, serialize=False, verbose=False)


@pytest.mark.usefixtures("packages")
def test_the_bridge_plays_the_installed_rules_move_for_move() -> None:
    ours = load_game("kalah", houses=4, seeds=3)
    game = spiel_game_of(ours)
    rng = random.Random(6)
    for _ in range(10):
        state, spiel = ours.new_initial_state(0), game.new_initial_state()
        while not state.is_terminal():
            assert spiel.current_player() == state.current_player()
            assert spiel.legal_actions() == state.legal_actions()
            action = rng.choice(state.legal_actions())
            assert spiel.action_to_string(spiel.current_player(), action) == (
                state.action_to_string(action)
            )
            state.apply(action)
            spiel.apply_action(action)
        assert spiel.is_terminal()
        assert spiel.returns() == state.returns()


def _first_seat_value(state: State) -> float:
    """Seat 0's exact share of the win under best play from ``state`` (plain minimax; a
    seat may move twice in a row, so each node takes the best for whoever is to move)."""

    @cache
    def value(moves: tuple[int, ...]) -> float:
        node = state.clone()
        for move in moves:
            node.apply(move)
        if node.is_terminal():
            return node.returns()[0]
        results = [value((*moves, a)) for a in node.legal_actions()]
        return max(results) if node.current_player() == 0 else min(results)

    return value(())


@pytest.mark.usefixtures("packages")
def test_mctsbot_through_the_bridge_finds_a_best_kalah_move() -> None:
    ours = load_game("kalah", houses=3, seeds=1)
    start = ours.new_initial_state(0)
    after = {}
    for action in start.legal_actions():
        child = start.clone()
        child.apply(action)
        after[action] = _first_seat_value(child)
    best = {a for a, v in after.items() if v == max(after.values())}
    assert best != set(after), after  # a choice that matters
    game = spiel_game_of(ours)
    seeds = np.random.RandomState(1)
    bot = mcts.MCTSBot(game, 2.0, 400, mcts.RandomRolloutEvaluator(1, seeds), solve=True,
                       random_state=seeds)  # fmt: skip
    assert bot.step(game.new_initial_state()) in best


@pytest.mark.usefixtures("packages")
def test_an_installed_game_the_generic_path_cannot_serve_is_refused_by_name() -> None:
    with pytest.raises(OptionError) as refused:
        register("guess")
    assert refused.value.field == "game"
    assert "guess has chance" in str(refused.value)
    # Toy Nim declares 2 distinct actions but plays codes 1 and 2: the id 2 is refused.
    game = spiel_game_of(load_game("toy"))
    state = game.new_initial_state()
    with pytest.raises(ValueError, match=r"toy plays action code 2.*0\.\.1"):
        state.legal_actions()
