"""Game-specific report sections: each game's own, declared by its game module.

A game's module (the one its ``playtester.games`` entry point names) declares its section as
``REPORT`` (``engines.contract``): a ``GameReport`` — how to compute the section from the
database, the tables that sum it up (the terminal and the HTML page show the same ones) and,
optionally, the HTML with its figures — or a ``"module:attribute"`` reference to one. Our
games' sections live here (``analysis/games/<game>.py``, each exposing ``REPORT``) and their
game modules name them by reference, since ``engines`` may not import ``analysis``. The generic
report modules ask ``game_report(name)`` and never name a game.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from analysis.formatting import TextTable
from analysis.stats import UnitSums
from analysis.tidy import Wide
from engines.plugins import GameLoadError
from engines.registry import game_names, game_origin, report_section

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


def game_report(name: str) -> GameReport | None:
    """The report section game ``name`` declares, or None when it declares none (or is not
    an installed game, as an OpenSpiel game or a batch's game since uninstalled).

    Raises ``GameLoadError`` (naming the package) when the declared section does not resolve
    or is not a ``GameReport``.
    """
    section = report_section(name)
    if section is None or isinstance(section, GameReport):
        return section
    origin = game_origin(name)
    raise GameLoadError(
        f"game {name!r} from {origin}: its REPORT is a {type(section).__name__}; it should be "
        "an analysis.games.GameReport"
    )


def registered() -> list[str]:
    """Names of every installed game that declares a report section."""
    return [name for name in game_names() if report_section(name) is not None]
