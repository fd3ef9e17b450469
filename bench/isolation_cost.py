"""What checking one OpenSpiel request in a child costs: a child forked by the pre-imported fork
server (``workers.isolation``) against a fresh interpreter that imports the planner and plans
the same request (how each check ran before the fork server).

    .venv/bin/python -m bench.isolation_cost --rounds 5

Rounds alternate the two ways over the same requests (a good one, a segfault, a refusal).
Times are wall time per check and the CPU time of the children (``RUSAGE_CHILDREN``, which
for the fresh interpreters; ``/proc`` for the fork server and the children it reaped). Prints both
and their ratio; the fork server's own start is reported apart.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from engines.core import OptionError
from storage.settings import Settings
from workers import forkserver, native_games
from workers.batches import plan_batch

ROOT = Path(__file__).resolve().parent.parent
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("openspiel:tic_tac_toe", {}),
    ("openspiel:connect_four", {"rows": 0}),
    ("openspiel:hex", {"board_size": 0}),
]
FRESH = """
import sys
from engines.core import OptionError
from storage.settings import Settings
from workers.batches import plan_here
try:
    plan_here({request!r}, Settings(database_url="sqlite://"))
except OptionError:
    pass
"""


def request(game: str, options: dict[str, Any]) -> dict[str, Any]:
    return {
        "game": game,
        "players": None,
        "options": options,
        "agents": ["random"],
        "matches": 2,
        "seed": 0,
        "seat_policy": None,
        "chunk_size": None,
        "max_plies": None,
        "stop_rule": None,
        "variation": None,
    }


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def forked(body: dict[str, Any]) -> None:
    native_games.forget_checks()
    with contextlib.suppress(OptionError):
        plan_batch(**body, settings=Settings(database_url="sqlite://"))


def fresh(body: dict[str, Any]) -> None:
    # A crashing request kills this interpreter too: its exit status is not the point here.
    subprocess.run([sys.executable, "-c", FRESH.format(request=body)], cwd=ROOT, check=False)


def server_tree_cpu() -> float:
    """CPU seconds of the running fork server and of its children it has reaped."""
    assert forkserver._handle is not None
    fields = Path(f"/proc/{forkserver._handle.process.pid}/stat").read_text().rsplit(")", 1)[1]
    utime, stime, cutime, cstime = (int(x) for x in fields.split()[11:15])
    return (utime + stime + cutime + cstime) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    bodies = [request(game, options) for game, options in REQUESTS]

    began = time.perf_counter()
    forked(bodies[0])
    start_cpu = server_tree_cpu()
    print(
        f"fork server start and first check: {time.perf_counter() - began:.2f} s wall, "
        f"{start_cpu:.2f} s CPU"
    )
    walls: dict[str, list[float]] = {"fork server": [], "fresh interpreter": []}
    cpus = dict.fromkeys(walls, 0.0)
    for _ in range(rounds):
        for body in bodies:
            began, cpu = time.perf_counter(), server_tree_cpu()
            forked(body)
            walls["fork server"].append(time.perf_counter() - began)
            cpus["fork server"] += server_tree_cpu() - cpu
            began, cpu = time.perf_counter(), children_cpu()
            fresh(body)
            walls["fresh interpreter"].append(time.perf_counter() - began)
            cpus["fresh interpreter"] += children_cpu() - cpu
    forkserver.stop_server()
    checks = rounds * len(bodies)
    for name, times in walls.items():
        print(
            f"{name}: median {statistics.median(times) * 1000:.0f} ms wall, "
            f"{cpus[name] / checks * 1000:.0f} ms CPU per check ({checks} checks)"
        )
    ratio = statistics.median(walls["fresh interpreter"]) / statistics.median(walls["fork server"])
    print(f"fresh interpreter / fork server, median wall: {ratio:.1f}x")


if __name__ == "__main__":
    main()
