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
(``agents = "hard,mcts:iterations=200"``, ``stop = "sprt:hard,easy,elo0=0,elo1=20"``,
``noise = "10:0.02"``) with ``options`` a table of game options. Every error is
``file:line: field: message``, and nothing runs until the whole file is good
(``workers.studies.plan`` checks each batch against the games and the caps). The definition
lives here, below the planner, because the page (:mod:`analysis.studies.page`) reads its
questions.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections import Counter
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from analysis.ladder.results import FOLDER as LADDER_FOLDER
from analysis.studies.series import Series, SeriesError, read_series
from engines.core import OptionError


class BatchKey(StrEnum):
    """What a ``[[batch]]`` (or ``[defaults]``) may say; ``name`` only in a batch."""

    NAME = "name"
    GAME = "game"
    AGENTS = "agents"
    PLAYERS = "players"
    MATCHES = "matches"
    SEED = "seed"
    SEAT_POLICY = "seat_policy"
    OPTIONS = "options"
    MAX_PLIES = "max_plies"
    STOP = "stop"
    OPENINGS = "openings"
    BOOK = "book"
    NOISE = "noise"
    NO_VARIATION = "no_variation"

    @property
    def kinds(self) -> tuple[type, ...]:
        """The TOML types the key takes (whole numbers, texts, tables...)."""
        return _KINDS[self]


_WHOLE = (int,)
_KINDS: dict[BatchKey, tuple[type, ...]] = {
    BatchKey.NAME: (str,),
    BatchKey.GAME: (str,),
    BatchKey.AGENTS: (str, list),
    BatchKey.PLAYERS: _WHOLE,
    BatchKey.MATCHES: _WHOLE,
    BatchKey.SEED: _WHOLE,
    BatchKey.SEAT_POLICY: (str,),
    BatchKey.OPTIONS: (dict,),
    BatchKey.MAX_PLIES: _WHOLE,
    BatchKey.STOP: (str, dict),
    BatchKey.OPENINGS: _WHOLE,
    BatchKey.BOOK: (str,),
    BatchKey.NOISE: (str, int, float),
    BatchKey.NO_VARIATION: (bool,),
}
_KIND_NAMES = {
    str: "a text",
    list: "a list",
    int: "a whole number",
    float: "a number",
    dict: "a table",
    bool: "true or false",
}
VARIATION_KEYS = (BatchKey.OPENINGS, BatchKey.BOOK, BatchKey.NOISE, BatchKey.NO_VARIATION)
"""The keys a batch's ``variation`` is read from."""


class Figure(StrEnum):
    """The figures a question can ask for; ``against`` (another batch) makes a comparison of
    the comparable ones."""

    FIRST_PLAYER_ADVANTAGE = "first_player_advantage"
    SEATS = "seats"
    AGENTS = "agents"
    DRAW_RATE = "draw_rate"
    GAME_LENGTH = "game_length"
    SQUARE_VALUES = "square_values"
    EXACT_PLAY = "exact_play"

    @property
    def description(self) -> str:
        """What the figure is: a question's title when it gives none."""
        return _DESCRIPTIONS[self]

    @property
    def comparable(self) -> bool:
        """Whether two batches can be compared by it (``against``)."""
        return self in (Figure.FIRST_PLAYER_ADVANTAGE, Figure.SEATS)

    @property
    def tested(self) -> bool:
        """Whether the figure is one estimate with one test, so that a question on it can join
        a ``family`` of tests."""
        return self is Figure.FIRST_PLAYER_ADVANTAGE

    @property
    def games(self) -> tuple[str, ...] | None:
        """The games whose reports give the figure; None for every game."""
        return _GAMES.get(self)


_DESCRIPTIONS = {
    Figure.FIRST_PLAYER_ADVANTAGE: "the starting player's win share minus 1/n",
    Figure.SEATS: "each seat's win share against its fair share",
    Figure.AGENTS: "each agent's score and Elo",
    Figure.DRAW_RATE: "the share of drawn games",
    Figure.GAME_LENGTH: "plies per game",
    Figure.SQUARE_VALUES: (
        "for each square value, the winners' share of those squares minus the losers'"
    ),
    Figure.EXACT_PLAY: (
        "the players against the exact values: the first player's margin beside the forced "
        "one, and the share of optimal moves"
    ),
}
_GAMES = {Figure.SQUARE_VALUES: ("alveoles",), Figure.EXACT_PLAY: ("alveoles",)}


class QuestionKey(StrEnum):
    TITLE = "title"
    FIGURE = "figure"
    BATCH = "batch"
    AGAINST = "against"
    FAMILY = "family"
    BATCHES = "batches"
    """A series: the batches read as points along one axis (``analysis.studies.series``)."""
    LABELS = "labels"
    AXIS = "axis"
    EXACT = "exact"


SERIES_ONLY = (QuestionKey.LABELS, QuestionKey.AXIS, QuestionKey.EXACT)
"""The keys only a series has."""


class TopKey(StrEnum):
    """The top-level keys and tables of a study file."""

    TITLE = "title"
    DESCRIPTION = "description"
    DEFAULTS = "defaults"
    BATCH = "batch"
    QUESTION = "question"
    TUNE = "tune"
    HALF_WIDTH = "half_width"
    BUDGET_CPU_HOURS = "budget_cpu_hours"


NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
MAX_NESTING = 32
"""Brackets and braces deeper than this are refused before the file is parsed: a study
needs three levels, and TOML's parser recurses once per level."""


class StudyError(OptionError):
    """A study file that cannot run: the message starts with ``file:line`` and names the field."""

    def __init__(self, path: Path, line: int, field: str, message: str) -> None:
        super().__init__(f"{path}:{line}: {field}: {message}", field=field)
        self.path = path
        self.line = line
        self.message = message


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
    figure: Figure
    batch: str
    against: str | None
    line: int
    family: str | None = None
    """The questions that share a family are one set of tests: the page gives each one's
    p-value Holm-adjusted over the family beside its own."""

    @property
    def batches(self) -> list[str]:
        """The batches the question reads: its own, then the one it is compared against."""
        return [self.batch] + ([self.against] if self.against else [])

    def answered(self, played: Container[str]) -> bool:
        """Whether every batch the question reads is among ``played`` (has results)."""
        return all(name in played for name in self.batches)


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
    """The ``[tune]`` table, read by :mod:`workers.studies.tuning`."""
    half_width: float | None = None
    """The precision the study aims at: the half-width of the 95 % interval of each batch's
    headline figure (a share, 0.02 for ±2 points); a batch's precision stop states its own."""
    budget_cpu_hours: float | None = None
    """The CPU time the whole study may take, in hours: ``study plan`` sets its estimate
    against it."""
    series: tuple[Series, ...] = ()
    """The questions asked of several batches as points along one axis (``batches``): at most
    one, whose figure opens the page."""

    def batch(self, name: str) -> StudyBatch:
        return next(b for b in self.batches if b.name == name)

    def error(self, batch: StudyBatch, key: str, message: str, detail: str = "") -> StudyError:
        """An error about ``key`` of ``batch`` (``detail``: the rest of the field's path, as
        ``.layout`` of ``options``), at the line where the key is written."""
        return StudyError(
            self.path, self.key_line(batch, key, detail), f"{batch.name}.{key}{detail}", message
        )

    def key_line(self, batch: StudyBatch, key: str, detail: str = "") -> int:
        """The line where ``key`` of ``batch`` is written (for ``options``, the option named
        first in ``detail``): in its own table, else in ``[defaults]``, else the batch's
        header."""
        option = detail.lstrip(".").split(".")[0].split("[")[0]
        wanted = option if key == BatchKey.OPTIONS and option else key
        for start in (batch.line, header_line(self.text, TopKey.DEFAULTS, 0)):
            if start:
                found = key_line(self.text, start, wanted)
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


def header_line(text: str, name: str, index: int) -> int:
    """The line of the ``index``-th ``[[name]]`` (or ``[name]``) header; 0 if there is none."""
    lines = [number for number, header in _table_headers(text) if header == name]
    return lines[index] if index < len(lines) else 0


def key_line(text: str, start: int, key: str) -> int:
    """The first line from ``start`` that sets ``key``, before the next top-level table; 0
    if there is none."""
    pattern = re.compile(rf"(^|[\s{{,]){re.escape(key)}\s*=")
    lines = text.splitlines()
    for number in range(max(start, 1), len(lines) + 1):
        line = lines[number - 1]
        if number > start and re.match(r"^\s*\[", line) and "." not in line.split("]")[0]:
            return 0
        if pattern.search(line.split("#")[0]):
            return number
    return 0


def too_deep(text: str, limit: int = MAX_NESTING) -> int:
    """The first line where brackets and braces nest deeper than ``limit`` (outside strings
    and comments); 0 when none does."""
    depth = 0
    quote = ""
    for number, line in enumerate(text.splitlines(), start=1):
        escaped = False
        for char in line:
            if quote:
                if escaped:
                    escaped = False
                elif char == "\\" and quote == '"':
                    escaped = True
                elif char == quote:
                    quote = ""
            elif char in "\"'":
                quote = char
            elif char == "#":
                break
            elif char in "[{":
                depth += 1
                if depth > limit:
                    return number
            elif char in "]}":
                depth = max(0, depth - 1)
    return 0


def _check_keys(
    path: Path, text: str, line: int, where: str, table: Any, allowed: Iterable[str]
) -> None:
    if not isinstance(table, dict):
        raise StudyError(path, line, where, "should be a table")
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise StudyError(
            path,
            key_line(text, line, unknown[0]) or line,
            f"{where}.{unknown[0]}",
            f"unknown key; use one of {', '.join(sorted(allowed))}",
        )


def _check_kinds(path: Path, text: str, line: int, where: str, table: dict[str, Any]) -> None:
    """Each batch key of ``table`` (a ``[[batch]]`` or ``[defaults]``) has a type it takes."""
    for key, value in table.items():
        kinds = BatchKey(key).kinds
        # TOML's true and false are ints to isinstance; only no_variation takes them.
        if isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool)):
            continue
        wanted = " or ".join(_KIND_NAMES[kind] for kind in kinds)
        raise StudyError(
            path,
            key_line(text, line, key) or line,
            f"{where}.{key}",
            f"should be {wanted}, not {_toml_type(value)}",
        )


def _toml_type(value: Any) -> str:
    return _KIND_NAMES.get(type(value), "a date or time")


def _text(path: Path, line: int, field: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise StudyError(path, line, field, "should be a non-empty text")
    return value.strip()


def _tables(path: Path, text: str, data: dict[str, Any], key: TopKey) -> list[Any]:
    """The ``[[key]]`` entries; an array of tables, or nothing."""
    value = data.get(key, [])
    if not isinstance(value, list):
        line = key_line(text, 1, key) or header_line(text, key, 0) or 1
        raise StudyError(path, line, str(key), f"write each one as a [[{key}]] table")
    return value


def _parse(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StudyError(path, 0, "file", "no such study file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StudyError(path, 0, "file", f"cannot read it: {exc}") from None
    deep = too_deep(text)
    if deep:
        raise StudyError(path, deep, "toml", f"nested more than {MAX_NESTING} levels deep")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = int(m.group(1)) if (m := re.search(r"line (\d+)", str(exc))) else 0
        raise StudyError(path, line, "toml", str(exc)) from None


def _batches(path: Path, text: str, data: dict[str, Any]) -> list[StudyBatch]:
    defaults = data.get(TopKey.DEFAULTS, {})
    defaults_line = header_line(text, TopKey.DEFAULTS, 0) or key_line(text, 1, "defaults") or 1
    allowed = [key for key in BatchKey if key != BatchKey.NAME]
    _check_keys(path, text, defaults_line, "defaults", defaults, allowed)
    _check_kinds(path, text, defaults_line, "defaults", defaults)
    raw_batches = _tables(path, text, data, TopKey.BATCH)
    if not raw_batches:
        raise StudyError(path, 1, "batch", "a study needs at least one [[batch]]")
    batches: list[StudyBatch] = []
    for index, raw in enumerate(raw_batches):
        line = header_line(text, TopKey.BATCH, index) or 1
        where = f"batch[{index}]"
        _check_keys(path, text, line, where, raw, BatchKey)
        name = _text(path, line, f"{where}.name", raw.get(BatchKey.NAME))
        if not NAME.match(name):
            raise StudyError(path, line, f"{where}.name", f"{name!r}: use a-z, 0-9, _ and - (≤ 64)")
        if any(b.name == name for b in batches):
            raise StudyError(path, line, f"{where}.name", f"{name!r} is used twice")
        _check_kinds(path, text, line, name, raw)
        keys = {**defaults, **raw}
        if BatchKey.OPTIONS in defaults and BatchKey.OPTIONS in raw:
            keys[BatchKey.OPTIONS] = {**defaults[BatchKey.OPTIONS], **raw[BatchKey.OPTIONS]}
        keys.pop(BatchKey.NAME)
        for required in (BatchKey.GAME, BatchKey.AGENTS):
            if required not in keys:
                raise StudyError(path, line, f"{name}.{required}", "missing")
        batches.append(StudyBatch(name, keys, line))
    return batches


def _questions(
    path: Path, text: str, data: dict[str, Any], batches: Sequence[StudyBatch]
) -> tuple[list[Question], list[Series]]:
    """The questions, and the series among them (a ``[[question]]`` with ``batches``)."""
    games = {b.name: b.keys.get(BatchKey.GAME) for b in batches}
    questions: list[Question] = []
    series: list[Series] = []
    for index, raw in enumerate(_tables(path, text, data, TopKey.QUESTION)):
        line = header_line(text, TopKey.QUESTION, index) or 1
        where = f"question[{index}]"
        _check_keys(path, text, line, where, raw, QuestionKey)

        def at(key: str, line: int = line) -> int:
            return key_line(text, line, key) or line

        figure = _text(path, at("figure"), f"{where}.figure", raw.get(QuestionKey.FIGURE))
        if figure not in set(Figure):
            raise StudyError(
                path, at("figure"), f"{where}.figure", f"{figure!r}; use one of {', '.join(Figure)}"
            )
        kind = Figure(figure)
        if QuestionKey.BATCHES in raw:
            found = _series(path, text, raw, where, line, kind, batches)
            if series:
                raise StudyError(
                    path,
                    at("batches"),
                    f"{where}.batches",
                    "a study has one series; ask the other in a study of its own",
                )
            series.append(found)
            continue
        for key in SERIES_ONLY:
            if key in raw:
                raise StudyError(
                    path, at(key), f"{where}.{key}", "only a series (batches = [...]) has one"
                )
        batch = _text(path, at("batch"), f"{where}.batch", raw.get(QuestionKey.BATCH))
        against = raw.get(QuestionKey.AGAINST)
        for key, value in ((QuestionKey.BATCH, batch), (QuestionKey.AGAINST, against)):
            if value is not None and value not in games:
                raise StudyError(path, at(key), f"{where}.{key}", f"no batch named {value!r}")
        if against is not None and not kind.comparable:
            comparable = " or ".join(f for f in Figure if f.comparable)
            raise StudyError(
                path,
                at("against"),
                f"{where}.against",
                f"a comparison is made of {comparable} only",
            )
        if kind.games is not None and games[batch] not in kind.games:
            raise StudyError(
                path,
                at("figure"),
                f"{where}.figure",
                f"{kind} is a figure of {' and '.join(kind.games)} only; "
                f"batch {batch!r} plays {games[batch]!r}",
            )
        title = _text(path, at("title"), f"{where}.title", raw.get("title", kind.description))
        family = _family(path, at("family"), where, kind, raw.get(QuestionKey.FAMILY))
        questions.append(Question(title, kind, batch, against, line, family))
    _check_families(path, text, questions)
    return questions, series


def _series(
    path: Path,
    text: str,
    raw: dict[str, Any],
    where: str,
    line: int,
    kind: Figure,
    batches: Sequence[StudyBatch],
) -> Series:
    """A ``[[question]]`` with ``batches``: a series of ``kind`` (the first player's advantage
    alone for now), checked with its labels, axis and exact values."""
    keys = {b.name: b.keys for b in batches}
    try:
        if kind is not Figure.FIRST_PLAYER_ADVANTAGE:
            raise SeriesError("figure", f"a series is made of {Figure.FIRST_PLAYER_ADVANTAGE} only")
        return read_series(raw, kind.description, str(kind), line, keys, path.parent)
    except SeriesError as exc:
        top, _, option = exc.key.partition(".")
        found = (option and key_line(text, line, option)) or key_line(text, line, top) or line
        raise StudyError(path, found, f"{where}.{exc.key}", exc.message) from None


def _family(path: Path, line: int, where: str, kind: Figure, value: Any) -> str | None:
    if value is None:
        return None
    field = f"{where}.family"
    if not isinstance(value, str) or not NAME.match(value):
        raise StudyError(path, line, field, "should be a name: a-z, 0-9, '-' and '_'")
    if not kind.tested:
        tested = " or ".join(f for f in Figure if f.tested)
        raise StudyError(path, line, field, f"only a question with one test ({tested}) has one")
    return value


def _check_families(path: Path, text: str, questions: Sequence[Question]) -> None:
    """A family of one question would adjust nothing: it is a misspelt name."""
    sizes = Counter(q.family for q in questions if q.family is not None)
    for index, q in enumerate(questions):
        if q.family is not None and sizes[q.family] == 1:
            line = key_line(text, q.line, QuestionKey.FAMILY) or q.line
            raise StudyError(
                path,
                line,
                f"question[{index}].family",
                f"{q.family!r} has this question alone; a family is two or more",
            )


def load_study(path: Path) -> Study:
    """Read and check the study file at ``path`` (its structure; ``workers.studies.plan``
    checks each batch against the games and the caps)."""
    text, data = _parse(path)
    if path.stem == LADDER_FOLDER:
        raise StudyError(
            path,
            1,
            "file name",
            f"{LADDER_FOLDER!r} is taken: results/{LADDER_FOLDER}/ holds "
            "the strength ladder's files; name the study otherwise",
        )
    _check_keys(path, text, 1, "study", data, TopKey)
    title_line = key_line(text, 1, TopKey.TITLE) or 1
    title = _text(path, title_line, "title", data.get(TopKey.TITLE, path.stem))
    description = data.get(TopKey.DESCRIPTION, "")
    if not isinstance(description, str):
        line = key_line(text, 1, TopKey.DESCRIPTION) or 1
        raise StudyError(path, line, "description", "should be a text")
    batches = _batches(path, text, data)
    questions, series = _questions(path, text, data, batches)
    half_width = _number(path, text, data, TopKey.HALF_WIDTH, below=0.5)
    budget = _number(path, text, data, TopKey.BUDGET_CPU_HOURS, below=None)
    tune = data.get(TopKey.TUNE)
    if tune is not None and not isinstance(tune, dict):
        line = header_line(text, TopKey.TUNE, 0) or key_line(text, 1, TopKey.TUNE) or 1
        raise StudyError(path, line, "tune", "should be a table")
    return Study(
        path.stem,
        path,
        title,
        description.strip(),
        tuple(batches),
        tuple(questions),
        text,
        tune,
        half_width,
        budget,
        tuple(series),
    )


def _number(
    path: Path, text: str, data: dict[str, Any], key: TopKey, below: float | None
) -> float | None:
    """A positive top-level number (below ``below`` when given), or None when not written."""
    value = data.get(key)
    if value is None:
        return None
    line = key_line(text, 1, key) or 1
    limit = f" and below {below}" if below is not None else ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise StudyError(path, line, str(key), f"should be a number, not {_toml_type(value)}")
    if not (math.isfinite(value) and value > 0 and (below is None or value < below)):
        raise StudyError(path, line, str(key), f"should be above 0{limit}, not {value}")
    return float(value)
