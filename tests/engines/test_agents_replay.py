"""Fixed-seed matches of the search players replay move for move.

``tests/data/agent_replays.json`` holds the moves these matches produced before ``mcts.search``
and ``alphabeta._search`` were split into named steps and before the Alvéoles heuristics read
the state through its public API; the code must still produce exactly them. ``mcts`` and
``alphabeta`` are the Python searches here (``backend`` ``python``): the compiled ones are
tested in ``tests/engines/test_kernels_mcts.py`` and ``tests/engines/test_kernels_alphabeta.py``.
The matches cover both games, two and three players, game and uniform rollouts, capped rollouts
(the Alvéoles evaluation and its forced-closing cascade), a node budget, and the Alvéoles players
built on the heuristics.

To record the file again (only when a change is meant to alter play):
``.venv/bin/python tests/engines/test_agents_replay.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from engines.core import agent_rng, match_seed, play_match
from engines.registry import load_game, make_agent

# Relative to this file rather than from ``repo_paths``: the module also runs as a script, where
# the tests folder is not on the import path.
DATA = Path(__file__).resolve().parents[1] / "data" / "agent_replays.json"

CASES: dict[str, dict[str, Any]] = {
    "alquerque_mcts_mirror": {
        "game": "alquerque",
        "agents": [{"name": "mcts", "backend": "python", "iterations": 60}] * 2,
        "max_plies": 40,
    },
    "alquerque_mcts_random_rollouts": {
        "game": "alquerque",
        "agents": [
            {
                "name": "mcts",
                "backend": "python",
                "iterations": 50,
                "rollout": "random",
                "max_rollout_plies": 10,
            },
            {"name": "mcts", "backend": "python", "iterations": 80, "exploration": 0.7},
        ],
        "max_plies": 40,
    },
    "alquerque_alphabeta": {
        "game": "alquerque",
        "agents": [
            {"name": "alphabeta", "backend": "python", "depth": 3},
            {"name": "alphabeta", "backend": "python", "depth": 4},
        ],
        "max_plies": 40,
    },
    "alquerque_alphabeta_nodes_vs_mcts": {
        "game": "alquerque",
        "agents": [
            {"name": "alphabeta", "backend": "python", "depth": 5, "nodes": 400},
            {"name": "mcts", "backend": "python"},
        ],
        "max_plies": 30,
    },
    "alveoles_mcts_vs_alphabeta": {
        "game": "alveoles",
        "agents": [
            {"name": "mcts", "backend": "python", "iterations": 40, "max_rollout_plies": 20},
            {"name": "alphabeta", "backend": "python", "depth": 2, "nodes": 150},
        ],
        "max_plies": None,
    },
    "alveoles_mcts_three_players": {
        "game": "alveoles",
        "players": 3,
        "agents": [
            {"name": "mcts", "backend": "python", "iterations": 30},
            {"name": "mcts", "backend": "python", "iterations": 30, "max_rollout_plies": 10},
            {
                "name": "mcts",
                "backend": "python",
                "iterations": 30,
                "rollout": "random",
                "max_rollout_plies": 10,
            },
        ],
        "max_plies": 80,
    },
    "alveoles_heuristic_players": {
        "game": "alveoles",
        "players": 4,
        "agents": ["greedy", "hunter", "white_pusher", {"name": "value", "bonus_weight": 1.0}],
        "max_plies": None,
    },
}
SEEDS = (0, 1)


def play_case(name: str, seed: int) -> list[str]:
    """The moves of match ``seed`` of case ``name`` (each seat's rng derived from the seed)."""
    case = CASES[name]
    game = load_game(case["game"], case.get("players"))
    mseed = match_seed(seed, 0)
    agents = [
        make_agent(game, spec, agent_rng(mseed, seat)) for seat, spec in enumerate(case["agents"])
    ]
    return list(play_match(game, agents, mseed, max_plies=case["max_plies"]).moves)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_recorded_match_replays(name: str, seed: int) -> None:
    recorded = json.loads(DATA.read_text())[name][str(seed)]
    assert play_case(name, seed) == recorded


def record() -> None:
    """Write the moves the current code plays for every case and seed."""
    data = {name: {str(seed): play_case(name, seed) for seed in SEEDS} for name in sorted(CASES)}
    DATA.write_text(json.dumps(data, indent=1) + "\n")
    print(f"written {DATA}", file=sys.stderr)


if __name__ == "__main__":
    record()
