"""A series: one ``[[question]]`` whose ``batches = [...]`` are read as points along one axis
(board sizes, player counts), with a label each, and on the points where it is known the
exact value of the game that batch plays, read from a committed solved-values file::

    [[question]]
    title = "The first player's edge by board size"
    figure = "first_player_advantage"
    batches = ["2x3", "3x3", "4x4"]
    labels = ["2 × 3", "3 × 3", "4 × 4"]      # one per batch; the batch names by default
    axis = "board, rows × columns"           # what the points run along
    exact = { 2x3 = "results/solved/2x3.json", 3x3 = "results/solved/3x3.json" }

A solved-values file is what ``python -m bench.solve_alveoles`` writes: the start value of
each layout it solved (``classic`` and the ``random`` ones), for ``players`` players and the
options it names at its top level (``square_bonus``). A point takes the value of the entry
whose ``name``, or ``layout`` grid, is its batch's ``layout``; the file must agree with the
batch on the players and on every option it names, or the study is refused where ``exact``
is written. Paths are the study file's folder's, so a page reads the same in any clone.

Beside the point's own value each file's classic start value and its random layouts' values
are kept (``RandomLayouts``), for the page's section on how typical the classic layout is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from analysis.studies.estimates import Estimate

ENTRY_KEYS = ("classic", "random")
"""Where a solved-values file keeps its layouts' values."""


class SeriesError(ValueError):
    """A series that cannot be read: ``key`` (``batches``, ``exact.3x3``...) and why; the
    study file's reader turns it into a ``file:line: field: message`` error."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


@dataclass(frozen=True)
class RandomLayouts:
    """The exact start values of a solved board's randomly drawn value layouts, each drawn on
    its own (the page's figures over them: ``analysis.studies.series_page``)."""

    values: tuple[int, ...]
    draw: str | None = None
    """How the solver drew them, in its file's words (``random_draw``), where it says."""

    @property
    def count(self) -> int:
        return len(self.values)

    @property
    def first_ahead(self) -> int:
        return sum(v > 0 for v in self.values)

    @property
    def even(self) -> int:
        return sum(v == 0 for v in self.values)

    @property
    def second_ahead(self) -> int:
        return sum(v < 0 for v in self.values)


@dataclass(frozen=True)
class ExactValue:
    """A point's exact value: the margin the first player can force from the start, in the
    file's own unit (``meaning`` says which), read from ``source``."""

    start_value: int
    meaning: str
    source: str
    """The file from the study file's folder's parent: ``studies/results/solved/3x3.json``."""
    classic: int | None = None
    """The file's classic layout's start value (the batch's own when it plays the classic)."""
    random: RandomLayouts | None = None
    """The file's random layouts, where it holds any."""

    @property
    def outcome(self) -> str:
        """Who wins under perfect play, in words: perfect self-play is one game."""
        if self.start_value > 0:
            return f"first player wins by {self.start_value:,} points"
        if self.start_value < 0:
            return f"first player loses by {-self.start_value:,} points"
        return "a draw, 0 points apart"


@dataclass(frozen=True)
class Series:
    """A question asked of several batches in order: the points of one figure."""

    title: str
    figure: str
    batches: tuple[str, ...]
    labels: tuple[str, ...]
    axis: str
    line: int
    exact: Mapping[str, ExactValue] = field(default_factory=dict)

    def label(self, batch: str) -> str:
        return self.labels[self.batches.index(batch)]


def _texts(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise SeriesError(key, "should be a list of non-empty texts")
    return tuple(v.strip() for v in value)


def read_series(
    raw: Mapping[str, Any],
    default_title: str,
    figure: str,
    line: int,
    batches: Mapping[str, Mapping[str, Any]],
    folder: Path,
) -> Series:
    """The series of a ``[[question]]`` that has ``batches`` (``batches``: each study batch's
    keys, defaults applied; ``folder``: the study file's); a ``SeriesError`` names the key."""
    for key in ("batch", "against", "family"):
        if key in raw:
            raise SeriesError(key, "a series (batches = [...]) has none")
    title = raw.get("title", default_title)
    if not isinstance(title, str) or not title.strip():
        raise SeriesError("title", "should be a non-empty text")
    names = _texts("batches", raw["batches"])
    if len(names) < 2:
        raise SeriesError("batches", "a series needs two batches or more")
    for name in names:
        if name not in batches:
            raise SeriesError("batches", f"no batch named {name!r}")
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise SeriesError("batches", f"{twice!r} is listed twice")
    labels = _texts("labels", raw["labels"]) if "labels" in raw else names
    if len(labels) != len(names):
        raise SeriesError(
            "labels", f"gives {len(labels)} labels for {len(names)} batches; give one each"
        )
    if len(set(labels)) != len(labels):
        raise SeriesError("labels", "two points share a label")
    axis = raw.get("axis", "batch")
    if not isinstance(axis, str) or not axis.strip():
        raise SeriesError("axis", "should be a non-empty text")
    exact = raw.get("exact", {})
    if not isinstance(exact, dict):
        raise SeriesError("exact", "should be a table: batch name = solved-values file")
    values = {}
    for name, written in exact.items():
        if name not in names:
            raise SeriesError(f"exact.{name}", "not a batch of this series")
        values[name] = read_exact(f"exact.{name}", written, batches[name], folder)
    return Series(title.strip(), figure, names, labels, axis.strip(), line, values)


def _relative(key: str, written: Any) -> PurePosixPath:
    if not isinstance(written, str) or not written.strip():
        raise SeriesError(key, "should be the path of a solved-values file")
    path = PurePosixPath(written.strip())
    if path.is_absolute() or ".." in path.parts:
        raise SeriesError(key, f"{written!r}: give a path inside the study file's folder")
    return path


def read_exact(key: str, written: Any, batch: Mapping[str, Any], folder: Path) -> ExactValue:
    """The exact value a solved-values file holds for ``batch`` (its keys); a file that is
    missing, unreadable or about another game is a ``SeriesError`` on ``key``."""
    path = _relative(key, written)
    try:
        data = json.loads((folder / path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SeriesError(key, f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SeriesError(key, f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("value"), str):
        raise SeriesError(key, f"{path} is not a solved-values file (no 'value' text)")
    stated = _effective(key, batch)
    for name in ("players", *sorted(k for k in data if k in stated and k != "players")):
        if data.get(name) != stated[name]:
            raise SeriesError(
                key,
                f"{path} holds values for {name} = {data.get(name)!r}; the batch plays "
                f"{name} = {stated[name]!r}",
            )
    entry = _entry(data, stated.get("layout"))
    if entry is None:
        raise SeriesError(
            key, f"{path} holds no value for the batch's layout {stated.get('layout')!r}"
        )
    # Named from the study file's folder (``studies/...``), as the repository names it, so the
    # page reads the same in any clone.
    source = (PurePosixPath(folder.name) / path).as_posix()
    classic = data.get("classic")
    classic_value = classic.get("start_value") if isinstance(classic, dict) else None
    return ExactValue(
        int(entry["start_value"]),
        data["value"],
        source,
        classic_value if _integer(classic_value) else None,
        _random(key, path, data),
    )


def _integer(value: Any) -> bool:
    # JSON's true and false read as Python's bools, which are ints too.
    return isinstance(value, int) and not isinstance(value, bool)


def _random(key: str, path: PurePosixPath, data: Mapping[str, Any]) -> RandomLayouts | None:
    """The file's random layouts' start values; a list the page would miscount is refused."""
    held = data.get("random")
    if not held:
        return None
    if not isinstance(held, list):
        raise SeriesError(key, f"{path}: 'random' should be a list of solved layouts")
    for index, entry in enumerate(held):
        if not isinstance(entry, dict) or not _integer(entry.get("start_value")):
            raise SeriesError(key, f"{path}: random layout {index} has no integer start_value")
    draw = data.get("random_draw")
    return RandomLayouts(
        tuple(int(e["start_value"]) for e in held), draw if isinstance(draw, str) else None
    )


def _effective(key: str, batch: Mapping[str, Any]) -> dict[str, Any]:
    """The players and every game option of ``batch`` as it plays them: the values it states,
    else the game's defaults."""
    from engines.registry import game_class

    try:
        game_type = game_class(str(batch.get("game"))).game_type
    except ValueError as exc:
        raise SeriesError(key, f"cannot read the batch's game: {exc}") from None
    options = batch.get("options") or {}
    stated: dict[str, Any] = {o.name: options.get(o.name, o.default) for o in game_type.options}
    stated["players"] = batch.get("players", game_type.min_players)
    return stated


def _entry(data: Mapping[str, Any], layout: Any) -> Mapping[str, Any] | None:
    """The file's entry for ``layout``: the one whose name, or grid, it is."""
    if layout is None:
        return None
    found: list[Any] = []
    for key in ENTRY_KEYS:
        held = data.get(key)
        found += held if isinstance(held, list) else [held]
    for entry in found:
        if not isinstance(entry, dict) or not isinstance(entry.get("start_value"), int):
            continue
        if entry.get("name") == layout or entry.get("layout") == layout:
            return entry
    return None


@dataclass(frozen=True)
class SeriesPoint:
    """One point of the series: its batch and label, its figure where it has results, how far
    its interval is from the precision aimed at, and its exact value where it is known."""

    batch: str
    label: str
    level: str
    advantage: Estimate | None
    games: int
    target: float | None
    """The half-width aimed at: the batch's precision stop's, else the study's."""
    state: str
    exact: ExactValue | None

    @property
    def played(self) -> bool:
        return self.advantage is not None

    @property
    def half_width(self) -> float | None:
        return None if self.advantage is None else self.advantage.interval.half_width
