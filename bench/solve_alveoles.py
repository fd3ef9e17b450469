"""Exact start values of two-player Les Alvéoles on the boards the solver takes.

For each board (rows × columns of squares) it solves the classic values of that size
(``classic-RxC``, decision V5 of ``docs/rules/alveoles.md``) and seeded random layouts, with
``square_bonus = "none"`` (decision V6), and writes ``studies/results/solved/<R>x<C>.json``:
the board, its grooves, the table's entries and bytes, and per layout the start value (the
margin the first player can force), the solve's CPU time and the process's peak memory. The
file is rewritten after every layout and a rerun skips the layouts it already holds, so a long
run can stop and resume::

    nice -n 19 .venv/bin/python -m bench.solve_alveoles --boards 2x2,2x3,3x3 --random 100
    nice -n 19 .venv/bin/python -m bench.solve_alveoles --boards 3x4 --random 0

A random layout draws its ``R × C`` values without replacement from the classic 8 × 8 board's
64 values (so the mix of numbered and white squares is the classic one), from
``numpy.random.default_rng([seed, rows, cols, index])``.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np

from engines.alveoles.layouts import CLASSIC, classic_window, layout_name
from engines.alveoles.solver import solve, solver_board

OUT = Path(__file__).resolve().parent.parent / "studies" / "results" / "solved"
SEED = 2026


def random_layout(rows: int, cols: int, index: int, seed: int = SEED) -> list[list[int]]:
    """Layout ``index`` of a board: values drawn from the classic 64 without replacement."""
    pool = np.array([v for row in CLASSIC for v in row])
    rng = np.random.default_rng([seed, rows, cols, index])
    drawn = rng.choice(pool, size=rows * cols, replace=False)
    return [[int(v) for v in drawn[r * cols : (r + 1) * cols]] for r in range(rows)]


def square_order(layout: list[list[int]] | tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    """Printed rows (top first) to the solver's square order (bottom row first)."""
    return tuple(v for row in reversed(layout) for v in row)


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def solve_layout(rows: int, cols: int, layout: Any) -> dict[str, Any]:
    """One layout solved: its start value, CPU seconds and the table's bytes."""
    board = solver_board(rows, cols, square_order(layout))
    start = time.process_time()
    table = solve(board)
    seconds = time.process_time() - start
    out = {
        "layout": [list(r) for r in layout],
        "start_value": int(table[0]),
        "cpu_seconds": round(seconds, 2),
        "table_bytes": int(table.nbytes),
        "table_dtype": str(table.dtype),
        "peak_rss_mib": round(_peak_rss_mib(), 1),
    }
    del table
    return out


def _load(path: Path, rows: int, cols: int) -> dict[str, Any]:
    if path.exists():
        data: dict[str, Any] = json.loads(path.read_text())
        return data
    board = solver_board(rows, cols, (1,) * (rows * cols))
    return {
        "board": f"{rows}x{cols}",
        "rows": rows,
        "cols": cols,
        "players": 2,
        "square_bonus": "none",
        "grooves": board.size,
        "table_entries": 1 << board.size,
        "value": "best square-point margin the first player can force from the empty board",
        "random_seed": SEED,
        "random_draw": "values drawn without replacement from the classic 8 x 8 board's 64",
        "classic": None,
        "random": [],
    }


def _save(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)


def run_board(rows: int, cols: int, randoms: int, out: Path = OUT) -> dict[str, Any]:
    """Solve a board's classic layout and its first ``randoms`` random layouts, resuming."""
    path = out / f"{rows}x{cols}.json"
    data = _load(path, rows, cols)
    if data["classic"] is None:
        window = classic_window(rows, cols)
        data["classic"] = {"name": layout_name(window), **solve_layout(rows, cols, window)}
        _save(path, data)
        print(f"{rows}x{cols} classic: {data['classic']}", flush=True)
    for index in range(len(data["random"]), randoms):
        result = solve_layout(rows, cols, random_layout(rows, cols, index))
        data["random"].append({"index": index, **result})
        _save(path, data)
        print(f"{rows}x{cols} random {index}: {result['start_value']}", flush=True)
    values = [r["start_value"] for r in data["random"]]
    if values:
        data["random_summary"] = {
            "layouts": len(values),
            "mean": round(float(np.mean(values)), 2),
            "first_player_ahead": sum(v > 0 for v in values),
            "even": sum(v == 0 for v in values),
            "second_player_ahead": sum(v < 0 for v in values),
        }
        _save(path, data)
    return data


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default="2x2,2x3,3x2,2x4,4x2,3x3", help="RxC,RxC,...")
    parser.add_argument("--random", type=int, default=100, help="random layouts per board")
    args = parser.parse_args(argv)
    for text in args.boards.split(","):
        rows, cols = (int(x) for x in text.lower().split("x"))
        run_board(rows, cols, args.random)


if __name__ == "__main__":
    main()
