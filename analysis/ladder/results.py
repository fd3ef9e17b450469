"""A ladder's results files, ``<folder>/<game>.jsonl``: one JSON line per match, appended as
each match ends. The committed ones are in ``studies/results/ladder/`` beside the studies'
results, whose pages quote them."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FOLDER = "ladder"
"""The ladder's folder inside a results folder (``studies/results/ladder``)."""
FIELDS = ("pairing", "index", "seats", "returns", "cpu", "match_cpu", "plies")


class LadderFileError(ValueError):
    """A results line that is whole but lacks a field: the file is not a ladder's."""


def results_path(game: str, folder: Path) -> Path:
    return folder / f"{game}.jsonl"


def read_results(game: str, folder: Path) -> list[dict[str, Any]]:
    """Every match stored for ``game``, the first line kept where one was stored twice.

    A line cut short by a stopped run is left out, with a warning: that match is played again
    on the next run.
    """
    path = results_path(game, folder)
    if not path.exists():
        return []
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for number, line in enumerate(path.read_text().splitlines(keepends=True), 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            print(f"{path}:{number}: a line cut short, left out", file=sys.stderr)
            continue
        missing = [f for f in FIELDS if f not in row]
        if missing:
            raise LadderFileError(f"{path}:{number}: missing {', '.join(missing)}")
        rows.setdefault((row["pairing"], int(row["index"])), row)
    return list(rows.values())


def done_indices(rows: Iterable[dict[str, Any]]) -> dict[str, set[int]]:
    """Match indices stored, by pairing."""
    done: dict[str, set[int]] = {}
    for row in rows:
        done.setdefault(row["pairing"], set()).add(int(row["index"]))
    return done


def append_result(game: str, row: dict[str, Any], folder: Path) -> None:
    """Append one match. A run stopped mid-write leaves at most one unterminated line, which
    ``read_results`` skips; the next line written starts on a line of its own."""
    path = results_path(game, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(row, separators=(",", ":")) + "\n"
    with path.open("a+b") as f:
        f.seek(0, 2)
        if f.tell() > 0:
            f.seek(-1, 2)
            if f.read(1) != b"\n":
                text = "\n" + text
        f.write(text.encode())
        f.flush()
