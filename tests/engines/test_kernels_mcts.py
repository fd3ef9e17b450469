"""The compiled UCT search and the ``mcts`` agent's backends."""

from __future__ import annotations

import dataclasses
import importlib
import random
import subprocess
import sys

import numpy as np
import pytest

from engines.agents.mcts import MctsAgent
from engines.alquerque.rules import AlquerqueGame, AlquerqueState
from engines.compiled import dispatch
from engines.compiled.agent_mcts import CompiledMctsAgent
from engines.compiled.choose_mcts import make_mcts
from engines.compiled.kernels import KERNEL_GAMES, kernel_id, kernel_module
from engines.core import OptionError, play_match
from engines.kernel_rng import seed_rng
from engines.registry import load_game, make_agent


def test_mcts_uses_the_compiled_search_when_the_game_has_a_kernel() -> None:
    for name in ("alveoles", "alquerque", "abalone"):
        game = load_game(name)
        assert isinstance(make_agent(game, "mcts"), CompiledMctsAgent)
        assert isinstance(make_agent(game, {"name": "mcts", "backend": "python"}), MctsAgent)
        assert isinstance(
            make_agent(game, {"name": "mcts", "backend": "compiled"}), CompiledMctsAgent
        )


def test_a_fresh_process_finds_the_kernel_without_listing_agents() -> None:
    """Nothing but the game is loaded first: the kernel is looked up, not registered."""
    script = (
        "import random\n"
        "from engines.registry import load_game\n"
        "from engines.compiled.choose_mcts import make_mcts\n"
        "game = load_game('alquerque')\n"
        "for backend in ('compiled', 'auto'):\n"
        "    agent = make_mcts(game, random.Random(0), iterations=5, backend=backend)\n"
        "    assert type(agent).__name__ == 'CompiledMctsAgent', (backend, type(agent))\n"
        "    assert game.new_initial_state(0).legal_actions().count(agent.step("
        "game.new_initial_state(0))) == 1\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def _same_rng(seed: int) -> tuple[np.ndarray, np.ndarray]:
    first, second = np.zeros(1, dtype=np.uint64), np.zeros(1, dtype=np.uint64)
    seed_rng(first, seed)
    seed_rng(second, seed)
    return first, second


@pytest.mark.parametrize("name", KERNEL_GAMES)
def test_every_declared_kernel_has_its_branch_in_each_dispatch_function(name: str) -> None:
    """Each dispatch function, given a declared game's id, does what that game's kernel does:
    a declared kernel without its branch raises there, one wired to another kernel differs."""
    kernel = importlib.import_module(kernel_module(name))
    game_id = kernel_id(name)
    state = load_game(name).new_initial_state(1)
    chooser = random.Random(2)
    ours = np.empty(dispatch.MAX_ACTIONS, dtype=np.int64)
    theirs = np.empty(dispatch.MAX_ACTIONS, dtype=np.int64)
    plies = 0
    while not state.is_terminal():  # a whole random game, every dispatch at every ply
        plies += 1
        position = kernel.encode(state)
        assert dispatch.current_player(game_id, position) == kernel.current_player(position)
        n = dispatch.legal_actions(game_id, position, ours)
        assert n == kernel.legal_actions(position, theirs)
        assert sorted(ours[:n]) == sorted(theirs[:n]) == state.legal_actions()
        seat = state.current_player()
        assert dispatch.evaluate(game_id, position, seat) == kernel.evaluate(position, seat)
        for dispatched, own in (
            (dispatch.random_action, kernel.random_action),
            (dispatch.rollout_action, kernel.rollout_action),
            (dispatch.strong_rollout_action, kernel.strong_rollout_action),
        ):
            rng_a, rng_b = _same_rng(plies)
            assert dispatched(game_id, position.copy(), rng_a) == own(position.copy(), rng_b)
        action = chooser.choice(state.legal_actions())
        played, expected = position.copy(), position.copy()
        dispatch.apply(game_id, played, action)
        kernel.apply(expected, action)
        assert played.tolist() == expected.tolist()
        state.apply(action)
    final = kernel.encode(state)
    got, want = np.zeros(dispatch.MAX_PLAYERS), np.zeros(dispatch.MAX_PLAYERS)
    dispatch.returns(game_id, final, got)
    kernel.returns(final, want)
    assert got.tolist() == want.tolist()
    assert got[: state.game.num_players].tolist() == state.returns()


def test_an_id_no_branch_takes_is_refused() -> None:
    position = importlib.import_module(kernel_module(KERNEL_GAMES[0])).encode(
        load_game(KERNEL_GAMES[0]).new_initial_state(0)
    )
    with pytest.raises(ValueError, match="no dispatch branch"):
        dispatch.current_player(len(KERNEL_GAMES), position)


def test_listing_and_making_other_agents_does_not_load_numba() -> None:
    """Workers and the CLI that never search with a kernel start without numba's import."""
    script = (
        "import sys\n"
        "from engines.registry import describe_games, load_game, make_agent\n"
        "describe_games(caps={})\n"
        "make_agent(load_game('alveoles'), {'name': 'mcts', 'backend': 'python'})\n"
        "make_agent(load_game('alquerque'), 'hard')\n"
        "assert 'numba' not in sys.modules, 'numba was imported'\n"
        "make_agent(load_game('alveoles'), 'expert')\n"
        "assert 'numba' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_compiled_backend_is_refused_where_no_kernel_is_declared_without_numba() -> None:
    """Spec validation reads the kernel declaration: the request is refused before any match,
    naming the parameter, and asking loads no numba. Every registered game with the generic
    ``mcts`` has a kernel, so the declaration is narrowed here to leave Abalone out."""
    script = (
        "import sys\n"
        "from engines.compiled import kernels\n"
        "from engines.core import OptionError\n"
        "from engines.registry import load_game, normalise_agent_spec\n"
        "kernels.KERNEL_GAMES = ('alveoles', 'alquerque')\n"
        "spec = {'name': 'mcts', 'backend': 'compiled', 'iterations': 10}\n"
        "try:\n"
        "    normalise_agent_spec(load_game('abalone'), spec, field='agents[0]')\n"
        "except OptionError as exc:\n"
        "    assert exc.field == 'agents[0].backend', exc.field\n"
        "    assert 'abalone' in str(exc), exc\n"
        "else:\n"
        "    raise AssertionError('accepted')\n"
        "assert normalise_agent_spec(load_game('alquerque'), spec)['backend'] == 'compiled'\n"
        "assert 'numba' not in sys.modules, 'numba was imported'\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


class _NoKernel(AlquerqueGame):
    game_type = dataclasses.replace(AlquerqueGame.game_type, short_name="no_kernel")


def test_a_game_without_kernel_keeps_the_python_search() -> None:
    game = _NoKernel(2, {"no_capture_limit": 50})
    assert isinstance(make_mcts(game, random.Random(0)), MctsAgent)
    with pytest.raises(OptionError) as info:
        make_mcts(game, random.Random(0), backend="compiled")
    assert info.value.field == "backend"


def test_compiled_search_takes_the_capture_that_wins() -> None:
    # Three captures; only a3xc5xc3xe5 takes all three black pieces and wins at once.
    state = AlquerqueState.from_board(white=["a3", "b5"], black=["d4", "c4", "b4"])
    legal = [state.action_to_string(a) for a in state.legal_actions()]
    assert legal == ["b5xb3", "a3xc5xe3", "a3xc5xc3xe5"]
    agent = make_agent(state.game, {"name": "mcts", "iterations": 300}, random.Random(0))
    best = state.action_to_string(agent.step(state))
    child = state.clone()
    child.apply(state.string_to_action(best))
    assert best == "a3xc5xc3xe5"
    assert child.is_terminal() and child.returns() == [1.0, 0.0]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_compiled_mcts_plays_legal_games_and_replays_from_its_seed(players: int) -> None:
    game = load_game("alveoles", players=players, square_bonus="disjoint")
    spec = {"name": "mcts", "iterations": 60, "rollout": "random", "max_rollout_plies": 12}

    def match() -> tuple[str, ...]:
        agents = [make_agent(game, spec, random.Random(seat)) for seat in range(players)]
        return play_match(game, agents, seed=1).moves  # play_match checks every move

    first = match()
    assert len(first) == 144
    assert match() == first


def test_expert_plays_a_whole_alveoles_game() -> None:
    game = load_game("alveoles")
    agents = [make_agent(game, "expert", random.Random(1)), make_agent(game, "greedy")]
    result = play_match(game, agents, seed=3)
    assert result.plies == 144
    assert sum(result.stats["per_seat"][s]["square_points"] for s in range(2)) == 500
