"""The compiled agents' common base (``engines.compiled.agent_base.CompiledAgent``): loading a
search before a clock starts without changing what the agent plays, and one clock for all."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import pytest
from alhambra_views import midgame
from repo_paths import REPO

from engines.clock import TimeControl
from engines.compiled.agent_base import CompiledAgent, preload_position
from engines.compiled.agent_ismcts import CompiledIsMctsAgent
from engines.core import Action, LoadingAgent, State, TimedAgent, play_match
from engines.registry import load_game, make_agent
from engines.variation import MatchVariation, vary_agents

AGENTS: list[tuple[str, int, dict[str, Any]]] = [
    ("alveoles", 2, {"name": "mcts", "iterations": 80}),
    ("alveoles", 2, {"name": "expert", "iterations": 80}),
    ("alquerque", 2, {"name": "alphabeta", "depth": 3}),
    ("abalone", 2, {"name": "expert", "nodes": 500}),
    ("abalone", 3, {"name": "expert", "iterations": 60}),
    ("alhambra", 3, {"name": "mcts", "iterations": 40}),
    ("alhambra", 2, {"name": "expert", "iterations": 40}),
]


def _made(game_name: str, players: int, spec: dict[str, Any], seed: int) -> CompiledAgent:
    agent = make_agent(load_game(game_name, players), spec, random.Random(seed))
    assert isinstance(agent, CompiledAgent) and isinstance(agent, LoadingAgent)
    return agent


@pytest.mark.parametrize(("game_name", "players", "spec"), AGENTS)
def test_preloading_changes_nothing_the_agent_plays(
    game_name: str, players: int, spec: dict[str, Any]
) -> None:
    """An agent that preloaded plays, move for move and root value for root value, what the
    same agent that did not plays; its generator is where it was."""
    loaded = _made(game_name, players, spec, 5)
    plain = _made(game_name, players, spec, 5)
    before = loaded.rng.getstate()
    loaded.preload()
    assert loaded.rng.getstate() == before
    loaded.preload()  # a second call does nothing
    state = preload_position(load_game(game_name, players))
    for _ in range(2):
        assert loaded.step(state) == plain.step(state)
    assert loaded.root_values(state) == plain.root_values(state)
    assert loaded.rng.getstate() == plain.rng.getstate()


_ENTRY_POINTS = """
import random
from engines.compiled import search_ismcts, search_negamax, search_uct
from engines.compiled.agent_base import preload_position
from engines.registry import load_game, make_agent

FUNCTIONS = {"uct.search": search_uct.search, "uct.root_moves": search_uct.root_moves,
             "ismcts": search_ismcts.root_moves, "negamax": search_negamax.search}
for name, players, spec in [("alveoles", 2, "expert"), ("abalone", 2, "expert"),
                            ("alhambra", 3, "expert"), ("abalone", 3, "expert")]:
    game = load_game(name, players)
    agent = make_agent(game, spec, random.Random(0))
    agent.preload()
    loaded = {key: len(f.signatures) for key, f in FUNCTIONS.items()}
    state = preload_position(game)
    agent.set_move_time(0.05)
    agent.step(state)
    agent.root_values(state, 0.1)
    agent.set_move_time(None)
    agent.step(state)
    after = {key: len(f.signatures) for key, f in FUNCTIONS.items()}
    assert after == loaded, (name, spec, loaded, after)
    print(name, players, sorted(key for key, count in loaded.items() if count))
"""


@pytest.mark.slow
def test_preload_loads_exactly_what_step_and_root_values_call() -> None:
    """In a fresh process, after ``preload`` no move and no root valuation compiles a new
    function or signature; and each level loads its own search only."""
    done = subprocess.run(
        [sys.executable, "-c", _ENTRY_POINTS], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "alveoles 2 ['uct.root_moves', 'uct.search']",
        "abalone 2 ['negamax', 'uct.root_moves', 'uct.search']",
        "alhambra 3 ['ismcts', 'negamax', 'uct.root_moves', 'uct.search']",
        "abalone 3 ['ismcts', 'negamax', 'uct.root_moves', 'uct.search']",
    ]


class _Loading:
    """Records when it was loaded, against the fake clock's readings."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def preload(self) -> None:
        self.log.append("preload")

    def step(self, state: State) -> Action:
        return state.legal_actions()[0]


def test_a_clocked_match_loads_every_agent_before_its_first_clock_reading() -> None:
    game = load_game("alquerque")
    log: list[str] = []

    def clock() -> float:
        log.append("clock")
        return 0.0

    agents = [_Loading(log), _Loading(log)]
    play_match(game, agents, 1, max_plies=2, time_control=TimeControl(1.0), clock=clock)
    assert log[:3] == ["preload", "preload", "clock"]
    assert log.count("preload") == 2
    log.clear()
    play_match(game, agents, 1, max_plies=2)  # no clock: nothing to load ahead of
    assert log == []


def test_a_varied_player_passes_its_loading_on() -> None:
    log: list[str] = []
    varied = vary_agents(
        [_Loading(log)],
        MatchVariation(game_seed=0, script=(), noise=None, key_plies=None, deal=False),
        0,
    )
    assert isinstance(varied[0], LoadingAgent) and isinstance(varied[0], TimedAgent)
    varied[0].preload()  # type: ignore[attr-defined]
    assert log == ["preload"]


def test_the_information_set_search_takes_every_width_the_option_allows() -> None:
    """``width`` up to the option's 1,000 is searched as given, not cut to a buffer's size:
    every legal move is a root candidate, and two widths beyond every legal count in the tree
    search alike."""
    game = load_game("alhambra", players=2)
    plies = 20
    while len(midgame(2, 3, plies).legal_actions()) <= 12:
        plies += 1
    state = midgame(2, 3, plies)
    legal = state.legal_actions()

    def values(width: int) -> list[tuple[Action, float]]:
        agent = CompiledIsMctsAgent(game, random.Random(0), iterations=300, width=width)
        agent.prior = 0.0
        return agent.root_values(state)

    widest = values(1_000)
    assert {action for action, _ in widest} == set(legal)
    assert widest == values(200)
    assert widest != values(6)
