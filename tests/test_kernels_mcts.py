"""The compiled UCT search and the ``mcts`` agent's backends."""

from __future__ import annotations

import dataclasses
import random
import subprocess
import sys

import pytest

from engines.agents.mcts import MctsAgent, make_mcts
from engines.alquerque.rules import AlquerqueGame, AlquerqueState
from engines.compiled.agent import CompiledMctsAgent
from engines.core import OptionError, play_match
from engines.registry import load_game, make_agent


def test_mcts_uses_the_compiled_search_when_the_game_has_a_kernel() -> None:
    for name in ("alveoles", "alquerque"):
        game = load_game(name)
        assert isinstance(make_agent(game, "mcts"), CompiledMctsAgent)
        assert isinstance(make_agent(game, {"name": "mcts", "backend": "python"}), MctsAgent)
        assert isinstance(
            make_agent(game, {"name": "mcts", "backend": "compiled"}), CompiledMctsAgent
        )


def test_the_games_declared_with_a_kernel_are_those_the_search_knows() -> None:
    from engines.compiled import KERNEL_GAMES
    from engines.compiled.agent import KERNELS

    assert sorted(KERNEL_GAMES) == sorted(KERNELS)


def test_listing_and_making_other_agents_does_not_load_numba() -> None:
    """Workers and the CLI that never search with a kernel start without numba's import."""
    script = (
        "import sys\n"
        "from engines.registry import describe_games, load_game, make_agent\n"
        "describe_games()\n"
        "make_agent(load_game('alveoles'), {'name': 'mcts', 'backend': 'python'})\n"
        "make_agent(load_game('alquerque'), 'hard')\n"
        "assert 'numba' not in sys.modules, 'numba was imported'\n"
        "make_agent(load_game('alveoles'), 'expert')\n"
        "assert 'numba' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


class _NoKernel(AlquerqueGame):
    game_type = dataclasses.replace(AlquerqueGame.game_type, short_name="no_kernel")


def test_a_game_without_kernel_keeps_the_python_search() -> None:
    make_agent(load_game("alquerque"), "mcts")  # the registry has loaded the compiled core
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


def test_the_search_cache_key_follows_the_kernels_it_calls() -> None:
    from engines import kernel_rng
    from engines.alquerque import kernel as alquerque
    from engines.alveoles import kernel as alveoles
    from engines.compiled import uct
    from engines.kernel_cache import digest

    sources = [vars(uct), vars(kernel_rng), vars(alveoles), vars(alquerque)]
    assert uct.search._cache._digest == digest(*sources)
    edited = dict(vars(alveoles), BONUS=alveoles.BONUS + 1)  # a kernel constant changes
    assert digest(vars(uct), vars(kernel_rng), edited, vars(alquerque)) != digest(*sources)
    table = dict(vars(alquerque), _JUMP_LAND=alquerque._JUMP_LAND + 1)  # a table changes
    assert digest(vars(uct), vars(kernel_rng), vars(alveoles), table) != digest(*sources)
