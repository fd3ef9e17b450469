"""Fixed-seed matches of every compiled agent of every game replay move for move in a fresh
process, and depend on the agents' seeds.

``tests/data/compiled_replays.json`` holds the moves these matches produced before the compiled
agents were rebuilt on one base (``engines.compiled.agent_base``) and the information-set search
on UCT's shared parts; the code must still produce exactly them. The matches are played in a
subprocess, so nothing a test ran before (a warmed search, a generator drawn from) can help.
Each case is also played with other agent seeds and the same game seed: an agent that ignored
its seed would play the same game again, and the test fails for it.

To record the file again (only when a change is meant to alter play):
``.venv/bin/python tests/engines/test_compiled_replays.py record``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engines.core import agent_rng, match_seed, play_match
from engines.registry import load_game, make_agent

# Relative to this file rather than from ``repo_paths``: the module also runs as a script (the
# fixture below runs it so), where the tests folder is not on the import path.
DATA = Path(__file__).resolve().parents[1] / "data" / "compiled_replays.json"
ROOT = Path(__file__).resolve().parents[2]
GAME_SEED = match_seed(7, 0)
OTHER_AGENT_SEED = match_seed(8, 0)

CASES: dict[str, dict[str, Any]] = {
    "alveoles_mcts": {
        "game": "alveoles",
        "agents": [
            {"name": "mcts", "iterations": 200},
            {"name": "mcts", "iterations": 150, "rollout": "random", "max_rollout_plies": 10},
        ],
    },
    "alveoles_alphabeta": {
        "game": "alveoles",
        "agents": [{"name": "alphabeta", "depth": 3}, {"name": "alphabeta", "nodes": 500}],
    },
    "alveoles_expert": {
        "game": "alveoles",
        "agents": [{"name": "expert", "iterations": 400}, {"name": "expert", "iterations": 300}],
    },
    "alveoles_master": {
        "game": "alveoles",
        "agents": [{"name": "master", "iterations": 500}, {"name": "master", "iterations": 350}],
    },
    "alquerque_mcts": {
        "game": "alquerque",
        "agents": [
            {"name": "mcts", "iterations": 200},
            {"name": "mcts", "iterations": 100, "rollout": "random"},
        ],
    },
    "alquerque_alphabeta": {
        "game": "alquerque",
        "agents": [
            {"name": "alphabeta", "depth": 1},
            {"name": "alphabeta", "depth": 2},
        ],
    },
    "alquerque_expert": {
        # Budgets small enough that the agents' seeds break ties within the 30 plies.
        "game": "alquerque",
        "agents": [{"name": "expert", "nodes": 200}, {"name": "expert", "nodes": 150}],
    },
    "abalone_mcts": {
        "game": "abalone",
        "agents": [{"name": "mcts", "iterations": 150, "max_rollout_plies": 20}] * 2,
    },
    "abalone_alphabeta": {
        "game": "abalone",
        "agents": [{"name": "alphabeta", "depth": 2}, {"name": "alphabeta", "nodes": 3000}],
    },
    "abalone_expert": {
        "game": "abalone",
        "agents": [{"name": "expert", "nodes": 3000}, {"name": "expert", "nodes": 2000}],
    },
    "abalone_expert_three_players": {
        "game": "abalone",
        "players": 3,
        "agents": [{"name": "expert", "iterations": 300}] * 3,
    },
    "abalone_master": {
        "game": "abalone",
        "agents": [{"name": "master", "nodes": 4000}, {"name": "master", "nodes": 2500}],
    },
    "abalone_master_three_players": {
        "game": "abalone",
        "players": 3,
        "agents": [{"name": "master", "iterations": 350}] * 3,
    },
    "alhambra_mcts": {
        "game": "alhambra",
        "players": 3,
        "agents": [{"name": "mcts", "iterations": 100}] * 3,
    },
    "alhambra_expert": {
        "game": "alhambra",
        "agents": [{"name": "expert", "iterations": 200}, {"name": "expert", "iterations": 150}],
    },
}
MAX_PLIES = 30


def play_case(name: str, agent_seed: int) -> list[str]:
    """The moves of case ``name`` from ``GAME_SEED``, each seat's generator derived from
    ``agent_seed``."""
    case = CASES[name]
    game = load_game(case["game"], case.get("players"))
    agents = [
        make_agent(game, spec, agent_rng(agent_seed, seat))
        for seat, spec in enumerate(case["agents"])
    ]
    return list(play_match(game, agents, GAME_SEED, max_plies=MAX_PLIES).moves)


def play_all() -> dict[str, dict[str, list[str]]]:
    """Every case with its own agent seeds (``recorded``) and with others (``other``)."""
    return {
        name: {"recorded": play_case(name, GAME_SEED), "other": play_case(name, OTHER_AGENT_SEED)}
        for name in sorted(CASES)
    }


@pytest.fixture(scope="module")
def fresh() -> dict[str, dict[str, list[str]]]:
    done = subprocess.run(
        [sys.executable, __file__, "play"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    played: dict[str, dict[str, list[str]]] = json.loads(done.stdout)
    return played


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_recorded_match_replays_in_a_fresh_process(
    name: str, fresh: dict[str, dict[str, list[str]]]
) -> None:
    recorded = json.loads(DATA.read_text())[name]
    assert len(recorded) == MAX_PLIES
    assert fresh[name]["recorded"] == recorded


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_other_agent_seeds_play_another_game(
    name: str, fresh: dict[str, dict[str, list[str]]]
) -> None:
    """Same game seed, same view of hidden cards: only the agents' generators differ."""
    assert fresh[name]["other"] != fresh[name]["recorded"]


if __name__ == "__main__":
    played = play_all()
    if sys.argv[1:] == ["record"]:
        DATA.write_text(
            json.dumps({name: moves["recorded"] for name, moves in played.items()}, indent=1) + "\n"
        )
        print(f"written {DATA}", file=sys.stderr)
    else:
        print(json.dumps(played))
