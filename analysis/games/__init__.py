"""Game-specific report sections: one module per game, found by the game's short name.

A game's module (``analysis/games/<game>.py``) builds one ``GameReport`` and passes it to
``register``: how to compute its section of the report from the database, the tables that sum
it up (the terminal and the HTML page show the same ones) and, optionally, the HTML with its
figures. The generic report modules ask ``game_report(name)`` and never name a game; adding a
game's section means adding its module here, nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from analysis.formatting import TextTable
from analysis.stats import UnitSums
from analysis.tidy import Wide

Section = dict[str, Any]


@dataclass(frozen=True)
class GameReport:
    """How one game adds its own section to a batch's report.

    ``build(engine, batch, wide)`` returns the JSON-able section (with ``"name"``) or None when
    there is nothing to show; ``tables(section)`` its summary tables; ``html(section)`` the
    section's HTML, figures included (by default the tables alone). ``shares(engine, batch,
    wide)``, optional, names per-match shares of the game (values in [0, 1] summed over units
    of sampling) that ``analysis.compare`` sets side by side for two batches.
    """

    name: str
    title: str
    build: Callable[[Engine, Any, Wide], Section | None]
    tables: Callable[[Mapping[str, Any]], list[TextTable]]
    html: Callable[[Mapping[str, Any]], str] | None = None
    shares: Callable[[Engine, Any, Wide], Mapping[str, UnitSums]] | None = None


_REGISTRY: dict[str, GameReport] = {}
_LOADED = False


def register(report: GameReport) -> GameReport:
    """Make ``report`` the section of its game (one per game)."""
    if report.name in _REGISTRY and _REGISTRY[report.name] is not report:
        raise ValueError(f"game section {report.name!r} is registered twice")
    _REGISTRY[report.name] = report
    return report


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    _LOADED = True


def game_report(name: str) -> GameReport | None:
    """The registered section of game ``name``, or None when the game has none."""
    _load_all()
    return _REGISTRY.get(name)


def registered() -> list[str]:
    """Names of every game with a report section."""
    _load_all()
    return sorted(_REGISTRY)
