"""Every compiled agent of every game keeps to a Blitz clock from its first move: in a fresh
process, under ``0.4+0.2``, loading its search (``preload``, before the clocks start) is
charged to no move, so none loses on time in its first five moves; and a match ends on time
only where the clock, recomputed from the stored move times, really ran out.

The increment is most of the clock on purpose: a move then plans on about 0.2 s with as much
again in reserve, so a search stopped a check late on a loaded machine still keeps its time
(under ``0.5+0.05`` the fifth move planned on 0.08 s with 0.1 s left, and a loaded run lost
on time by 20 ms), while a first move charged with loading its search (0.36 s for Abalone's
``master`` from numba's cache, measured) besides its own 0.2 s would run past the 0.4 s a seat
starts with."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from repo_paths import REPO

CONTROL = "0.4+0.2"
MOVES = 5

_SCRIPT = """
import json, random
from engines.clock import TimeControl
from engines.compiled import AGENTS
from engines.compiled.agent_base import CompiledAgent
from engines.compiled.kernels import KERNEL_GAMES
from engines.core import play_match
from engines.registry import load_game, make_agent

control = TimeControl.parse(%(control)r)
out = []
for name in KERNEL_GAMES:
    for players in (2, 3):
        try:
            game = load_game(name, players)
        except Exception:
            continue  # a player count the game does not take
        for atype in AGENTS:
            if atype.games is not None and name not in atype.games:
                continue
            if not atype.min_players <= players <= atype.max_players:
                continue
            agents = [make_agent(game, atype.name, random.Random(seat)) for seat in range(players)]
            if not all(isinstance(agent, CompiledAgent) for agent in agents):
                continue
            result = play_match(
                game, agents, 1, max_plies=%(moves)d * players, time_control=control
            )
            out.append({
                "game": name, "players": players, "agent": atype.name,
                "ended_by": str(result.ended_by), "first_player": result.first_player,
                "move_times": result.move_times,
            })
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def matches() -> list[dict[str, Any]]:
    script = _SCRIPT % {"control": CONTROL, "moves": MOVES}
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    played: list[dict[str, Any]] = json.loads(done.stdout)
    return played


def _ran_out(times: list[float], base: float, increment: float) -> bool:
    """Whether a seat's clock, ``base`` less each move's time plus ``increment`` after each
    completed move, was ever short of the move being played."""
    left = base
    for spent in times:
        if spent > left:
            return True
        left += increment - spent
    return False


@pytest.mark.slow
def test_every_compiled_agent_keeps_its_first_moves_within_the_clock(
    matches: list[dict[str, Any]],
) -> None:
    played = {(m["game"], m["agent"], m["players"]) for m in matches}
    # Every game with a kernel has at least one compiled agent, and the levels are there.
    assert {game for game, _, _ in played} == {"alveoles", "alquerque", "abalone", "alhambra"}
    for expected in [
        ("alveoles", "expert", 2),
        ("alveoles", "master", 2),
        ("abalone", "expert", 2),
        ("abalone", "expert", 3),
        ("abalone", "master", 2),
        ("abalone", "master", 3),
        ("abalone", "alphabeta", 2),
        ("alquerque", "expert", 2),
        ("alquerque", "master", 2),
        ("alhambra", "mcts", 2),
        ("alhambra", "expert", 3),
    ]:
        assert expected in played
    for match in matches:
        label = (match["game"], match["agent"], match["players"])
        assert match["ended_by"] != "time", (label, match["move_times"])
        # Cut at five moves a seat (Alhambra's seats may take several plies in a row).
        moves = sum(len(times) for times in match["move_times"])
        assert moves == MOVES * match["players"], label


@pytest.mark.slow
def test_a_match_ends_on_time_only_where_the_clock_ran_out(
    matches: list[dict[str, Any]],
) -> None:
    base, increment = (float(part) for part in CONTROL.split("+"))
    for match in matches:
        out = [_ran_out(times, base, increment) for times in match["move_times"]]
        assert (match["ended_by"] == "time") == any(out), match
