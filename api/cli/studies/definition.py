"""A study file (``studies/<name>.toml``) read and checked: its batches and its questions.

A study is a named set of batches and the questions they answer::

    title = "Alquerque: does the first mover win more?"

    [defaults]            # shared by every batch below; a batch's own keys win
    game = "alquerque"
    matches = 400
    seed = 1

    [[batch]]
    name = "hard"
    agents = "hard"

    [[question]]
    title = "First-player advantage at the hard level"
    figure = "first_player_advantage"
    batch = "hard"

A batch takes the keys of ``playtester run``'s options, written as in a command line
(``agents = "hard,mcts:iterations=200"``, ``stop = "sprt:0.5,0.55"``, ``noise = "10:0.02"``)
with ``options`` a table of game options. Every error names the file, the line and the field,
and nothing runs until the whole file is good (:mod:`api.cli.studies.plan`).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engines.core import OptionError

BATCH_KEYS = frozenset(
    {
        "name",
        "game",
        "agents",
        "players",
        "matches",
        "seed",
        "seat_policy",
        "options",
        "max_plies",
        "stop",
        "openings",
        "book",
        "noise",
        "no_variation",
    }
)
"""What a ``[[batch]]`` (or ``[defaults]``) may say; ``name`` only in a batch."""
FIGURES = {
    "first_player_advantage": "the starting player's win share minus 1/n",
    "seats": "each seat's win share against its fair share",
    "agents": "each agent's score and Elo",
    "draw_rate": "the share of drawn games",
    "game_length": "plies per game",
}
"""The figures a question can ask for; ``against`` (another batch) makes a comparison of the
first two."""
COMPARABLE = frozenset({"first_player_advantage", "seats"})
QUESTION_KEYS = frozenset({"title", "figure", "batch", "against"})
TOP_KEYS = frozenset({"title", "description", "defaults", "batch", "question", "tune"})
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class StudyError(OptionError):
    """A study file that cannot run: the message starts with ``file:line`` and names the field."""

    def __init__(self, path: Path, line: int, field: str, message: str) -> None:
        super().__init__(f"{path}:{line}: {field}: {message}", field=field)
        self.path = path
        self.line = line


@dataclass(frozen=True)
class StudyBatch:
    """One batch of a study: its name, its keys (defaults applied) and where it is written."""

    name: str
    keys: dict[str, Any]
    line: int
    """The line of its ``[[batch]]`` header."""


@dataclass(frozen=True)
class Question:
    title: str
    figure: str
    batch: str
    against: str | None
    line: int


@dataclass(frozen=True)
class Study:
    name: str
    """The file's stem: the page is ``<name>.md``."""
    path: Path
    title: str
    description: str
    batches: tuple[StudyBatch, ...]
    questions: tuple[Question, ...]
    text: str
    """The file as read, to find the line of a field named in an error."""
    tune: dict[str, Any] | None = None
    """The ``[tune]`` table, read by :mod:`api.cli.studies.tuning`."""

    def batch(self, name: str) -> StudyBatch:
        return next(b for b in self.batches if b.name == name)

    def field_line(self, batch: StudyBatch, field: str) -> int:
        """The line where ``field`` (``options.layout``: the key ``layout``) of ``batch`` is
        written: in its own table, else in ``[defaults]``, else the batch's header."""
        parts = [part.split("[")[0] for part in field.split(".")]
        # Only game options are written as keys below a batch key (``options.layout``); an
        # agent's parameter is inside the ``agents`` text.
        key = parts[-1] if parts[0] == "options" else parts[0]
        for start in (batch.line, _header_line(self.text, "defaults", 0)):
            if start:
                found = _key_line(self.text, start, key)
                if found:
                    return found
        return batch.line


def _table_headers(text: str) -> list[tuple[int, str]]:
    """(line, header) of every ``[table]`` and ``[[array]]`` header, in order."""
    pattern = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-]+)\s*\]\]?")
    headers = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = pattern.match(line)
        if match:
            headers.append((number, match.group(1)))
    return headers


def _header_line(text: str, name: str, index: int) -> int:
    """The line of the ``index``-th ``[[name]]`` (or ``[name]``) header; 0 if there is none."""
    lines = [number for number, header in _table_headers(text) if header == name]
    return lines[index] if index < len(lines) else 0


def _key_line(text: str, start: int, key: str) -> int:
    """The first line from ``start`` that sets ``key``, before the next top-level table."""
    pattern = re.compile(rf"(^|[\s{{,]){re.escape(key)}\s*=")
    lines = text.splitlines()
    for number in range(start, len(lines) + 1):
        line = lines[number - 1]
        if number > start and re.match(r"^\s*\[", line) and "." not in line.split("]")[0]:
            return 0
        if pattern.search(line.split("#")[0]):
            return number
    return 0


def _check_keys(
    path: Path, text: str, line: int, where: str, table: Any, allowed: frozenset[str]
) -> None:
    if not isinstance(table, dict):
        raise StudyError(path, line, where, "should be a table")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise StudyError(
            path,
            _key_line(text, line, unknown[0]) or line,
            f"{where}.{unknown[0]}",
            f"unknown key; use one of {', '.join(sorted(allowed))}",
        )


def _text(path: Path, line: int, field: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise StudyError(path, line, field, "should be a non-empty text")
    return value.strip()


def load_study(path: Path) -> Study:
    """Read and check the study file at ``path`` (its structure; :func:`api.cli.studies.plan`
    checks each batch against the games and the caps)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StudyError(path, 0, "file", "no such study file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StudyError(path, 0, "file", f"cannot read it: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = int(m.group(1)) if (m := re.search(r"line (\d+)", str(exc))) else 0
        raise StudyError(path, line, "toml", str(exc)) from None
    _check_keys(path, text, 1, "study", data, TOP_KEYS)
    title = _text(path, _key_line(text, 1, "title") or 1, "title", data.get("title", path.stem))
    description = str(data.get("description", "")).strip()
    defaults = data.get("defaults", {})
    defaults_line = _header_line(text, "defaults", 0) or 1
    _check_keys(path, text, defaults_line, "defaults", defaults, BATCH_KEYS - {"name"})

    raw_batches = data.get("batch", [])
    if not isinstance(raw_batches, list) or not raw_batches:
        raise StudyError(path, 1, "batch", "a study needs at least one [[batch]]")
    batches: list[StudyBatch] = []
    for index, raw in enumerate(raw_batches):
        line = _header_line(text, "batch", index) or 1
        _check_keys(path, text, line, f"batch[{index}]", raw, BATCH_KEYS)
        name = _text(path, line, f"batch[{index}].name", raw.get("name"))
        if not NAME.match(name):
            raise StudyError(
                path, line, f"batch[{index}].name", f"{name!r}: use a-z, 0-9, _ and - (≤ 64)"
            )
        if any(b.name == name for b in batches):
            raise StudyError(path, line, f"batch[{index}].name", f"{name!r} is used twice")
        keys = {**defaults, **raw}
        if isinstance(defaults.get("options"), dict) and isinstance(raw.get("options"), dict):
            keys["options"] = {**defaults["options"], **raw["options"]}
        keys.pop("name")
        for required in ("game", "agents"):
            if required not in keys:
                raise StudyError(path, line, f"batch[{index}].{required}", "missing")
        batches.append(StudyBatch(name, keys, line))

    questions: list[Question] = []
    names = {b.name for b in batches}
    for index, raw in enumerate(data.get("question", [])):
        line = _header_line(text, "question", index) or 1
        where = f"question[{index}]"
        _check_keys(path, text, line, where, raw, QUESTION_KEYS)
        figure = _text(path, line, f"{where}.figure", raw.get("figure"))
        if figure not in FIGURES:
            raise StudyError(
                path,
                _key_line(text, line, "figure") or line,
                f"{where}.figure",
                f"{figure!r}; use one of {', '.join(FIGURES)}",
            )
        batch = _text(path, line, f"{where}.batch", raw.get("batch"))
        against = raw.get("against")
        for field, value in (("batch", batch), ("against", against)):
            if value is not None and value not in names:
                raise StudyError(
                    path,
                    _key_line(text, line, field) or line,
                    f"{where}.{field}",
                    f"no batch named {value!r}",
                )
        if against is not None and figure not in COMPARABLE:
            raise StudyError(
                path,
                line,
                f"{where}.against",
                f"a comparison is made of {' or '.join(sorted(COMPARABLE))} only",
            )
        title = _text(path, line, f"{where}.title", raw.get("title", FIGURES[figure]))
        questions.append(Question(title, figure, batch, against, line))
    tune = data.get("tune")
    if tune is not None and not isinstance(tune, dict):
        raise StudyError(path, _header_line(text, "tune", 0) or 1, "tune", "should be a table")
    return Study(path.stem, path, title, description, tuple(batches), tuple(questions), text, tune)
