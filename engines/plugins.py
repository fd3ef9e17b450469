"""Games from installed packages: the entry-point group ``playtester.games``.

Every game, ours included, is declared by a distribution's entry point ``name = module`` in
that group (ours in playtester's own ``pyproject.toml``), read through ``importlib.metadata``
(the import system's own record of what is installed; nothing else is read). This module
sorts the declarations into games and refusals without importing any of them; loading one
(``load``) imports its module and checks what it exposes against the contract.

A game's module may also declare its board renderer (``RENDER_BOARD``) and its report section
(``REPORT``), each the object or a ``"module:attribute"`` reference to it (``engines.contract``),
and its strength ladder (``LADDER``, a ``LadderDeclaration``, checked at load).
``load`` checks their kind and keeps them as declared; ``resolve`` imports a reference when the
dashboard or a report first asks for it, so that nothing here imports ``api`` or ``analysis``.

A name is refused when it is not a plain lower-case name, when its entry point names an object
rather than a module, or when it clashes: a package that declares a game playtester itself
declares is refused and ours kept; two packages declaring one name are both refused, since
which one loaded would depend on the order of ``sys.path``. Each refusal names both origins.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

from engines.contract import CONTRACT_VERSION, LadderDeclaration
from engines.core import AgentType, Game
from engines.errors import OptionError

GROUP = "playtester.games"
BUILTIN_PACKAGE = "playtester"
"""The distribution whose games are built in: no package may take their names."""
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
REFERENCE_PATTERN = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
"""``"module:attribute"``, the form of an entry point's object reference."""
REPORT_FIELDS = ("build", "tables")
"""The callables every report section has (``analysis.games.GameReport``); ``html`` and
``shares`` are optional, so may be None."""


@dataclass(frozen=True)
class Origin:
    """The installed distribution a game's entry point comes from."""

    package: str
    version: str

    @property
    def builtin(self) -> bool:
        return _normalised(self.package) == BUILTIN_PACKAGE

    def __str__(self) -> str:
        return f"{self.package} {self.version}"


@dataclass(frozen=True)
class Declared:
    """One game a package declares: its name, the module that holds it, where it comes from."""

    name: str
    module: str
    origin: Origin


@dataclass(frozen=True)
class Refused:
    """A declaration playtester will not load, and why (naming every origin involved)."""

    declared: Declared
    reason: str


@dataclass(frozen=True)
class Loaded:
    """A game's module imported and checked: its ``Game`` class, its own agents, and its board
    renderer and report section as declared (the object, a ``"module:attribute"`` reference
    to it, or None when the game has none)."""

    declared: Declared
    game: type[Game]
    agents: tuple[AgentType, ...]
    board: Any = None
    report: Any = None
    ladder: LadderDeclaration | None = None


class GameLoadError(OptionError):
    """A declared game that cannot be loaded: its package fails to import, exposes no ``GAME``,
    was written against another contract version, or its name is refused. The message names
    the package; the field is ``game``, so the API answers 422."""

    def __init__(self, message: str) -> None:
        super().__init__(message, field="game")


def _normalised(package: str) -> str:
    return re.sub(r"[-_.]+", "-", package).lower()


def declared_games(found: Iterable[EntryPoint] | None = None) -> list[Declared]:
    """Every entry point of the group, as declarations (none imported). ``found`` stands for
    the installed ones (``importlib.metadata.entry_points``) in tests."""
    points = entry_points(group=GROUP) if found is None else found
    out = []
    for point in points:
        dist = point.dist
        origin = Origin(
            package=dist.name if dist is not None else "?",
            version=dist.version if dist is not None else "?",
        )
        out.append(Declared(name=point.name.strip(), module=point.value.strip(), origin=origin))
    return out


def sort_declarations(declared: Iterable[Declared]) -> tuple[dict[str, Declared], list[Refused]]:
    """The games to load by name, and the declarations refused (bad names and clashes)."""
    by_name: dict[str, list[Declared]] = {}
    refused: list[Refused] = []
    for entry in declared:
        problem = _shape_problem(entry)
        if problem:
            refused.append(Refused(entry, problem))
        else:
            by_name.setdefault(entry.name, []).append(entry)
    games: dict[str, Declared] = {}
    for name, entries in sorted(by_name.items()):
        ours = [e for e in entries if e.origin.builtin]
        theirs = [e for e in entries if not e.origin.builtin]
        if ours:
            games[name] = ours[0]
            refused.extend(
                Refused(
                    e,
                    f"game {name!r} from {e.origin} clashes with the built-in game "
                    f"{name!r} of {ours[0].origin}; rename it in the package's entry point",
                )
                for e in theirs
            )
        elif len(theirs) == 1:
            games[name] = theirs[0]
        else:
            origins = " and ".join(str(e.origin) for e in theirs)
            refused.extend(
                Refused(e, f"game {name!r} is declared by both {origins}; uninstall one")
                for e in theirs
            )
    return games, refused


def _shape_problem(entry: Declared) -> str:
    if not NAME_PATTERN.fullmatch(entry.name):
        return (
            f"game name {entry.name!r} from {entry.origin} is not a lower-case name "
            "(letters, digits and underscores, starting with a letter)"
        )
    if ":" in entry.module:
        return (
            f"game {entry.name!r} from {entry.origin} names {entry.module!r}; the entry point "
            "should name the module that exposes GAME"
        )
    return ""


def load(entry: Declared) -> Loaded:
    """Import a declared game's module and check it against the contract.

    Raises ``GameLoadError`` naming the package for an import that fails (with its error),
    a missing or wrong ``GAME``, a ``CONTRACT_VERSION`` other than ours (both versions
    named), a ``GAME`` whose ``short_name`` is not the declared name, a ``RENDER_BOARD``
    that is neither a function nor a reference, or a ``REPORT`` that is neither a report
    section of this game nor a reference. A package's agents play its own game only, whatever
    they declare.
    """
    where = f"game {entry.name!r} from {entry.origin}"
    try:
        module = importlib.import_module(entry.module)
    except Exception as exc:  # any failure of a package's code is that package's to fix
        raise GameLoadError(
            f"{where} failed to import {entry.module}: {type(exc).__name__}: {exc}"
        ) from exc
    game = _checked_game(module, entry, where)
    agents = tuple(getattr(module, "AGENTS", ()))
    for agent in agents:
        if not isinstance(agent, AgentType):
            raise GameLoadError(f"{where}: AGENTS holds {agent!r}, not an AgentType")
    if not entry.origin.builtin:
        agents = tuple(replace(a, games=(entry.name,)) for a in agents)
    board = getattr(module, "RENDER_BOARD", None)
    if board is not None and not isinstance(board, str) and not callable(board):
        raise GameLoadError(
            f"{where}: RENDER_BOARD is {_kind(board)}; it should be a function "
            "(state, last_move) -> SVG text, or a 'module:attribute' reference to one"
        )
    report = getattr(module, "REPORT", None)
    if report is not None and not isinstance(report, str):
        _check_report(report, entry, where)
    for member, value in (("RENDER_BOARD", board), ("REPORT", report)):
        if isinstance(value, str) and not REFERENCE_PATTERN.fullmatch(value.strip()):
            raise GameLoadError(
                f"{where}: {member} is {value!r}; a reference is written 'module:attribute'"
            )
    ladder = getattr(module, "LADDER", None)
    if ladder is not None:
        _check_ladder(ladder, game, where)
    return Loaded(
        declared=entry, game=game, agents=agents, board=board, report=report, ladder=ladder
    )


def _check_ladder(ladder: object, game: type[Game], where: str) -> None:
    if not isinstance(ladder, LadderDeclaration):
        raise GameLoadError(
            f"{where}: LADDER is {_kind(ladder)}; it should be an "
            "engines.contract.LadderDeclaration"
        )
    game_type = game.game_type
    problem = ladder.problem(game_type.min_players, game_type.max_players)
    if problem:
        raise GameLoadError(f"{where}: its LADDER's {problem}")


def _kind(value: object) -> str:
    return f"{value!r:.60}, of type {type(value).__name__}"


def _check_report(report: object, entry: Declared, where: str, subject: str = "REPORT") -> None:
    """A report section's shape, read without importing ``analysis`` (whose ``GameReport`` it
    should be; ``analysis.games`` checks the class itself when it uses it)."""
    missing = [f for f in REPORT_FIELDS if not callable(getattr(report, f, None))]
    if missing:
        raise GameLoadError(
            f"{where}: {subject} is {_kind(report)}, with no {' or '.join(missing)}; it should "
            "be an analysis.games.GameReport, or a 'module:attribute' reference to one"
        )
    name = getattr(report, "name", None)
    if name != entry.name:
        raise GameLoadError(
            f"{where}: the name of its {subject} is {name!r}; it should be the game's name "
            f"{entry.name!r}"
        )


def resolve(loaded: Loaded, member: str) -> Any:
    """The object a loaded game declares as ``member`` (``"board"`` or ``"report"``): itself,
    or what its reference names, imported now. None when the game declares none.

    Raises ``GameLoadError`` naming the package and the reference when the reference's module
    fails to import, has no such attribute, or it is of the wrong kind (as ``load`` checks an
    object given directly).
    """
    value = getattr(loaded, member)
    if not isinstance(value, str):
        return value
    entry = loaded.declared
    module_name, _, attribute = value.strip().partition(":")
    label = "RENDER_BOARD" if member == "board" else "REPORT"
    where = f"game {entry.name!r} from {entry.origin}: its {label} {value!r}"
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # the package's code failing is the package's to fix
        raise GameLoadError(
            f"{where} failed to import {module_name}: {type(exc).__name__}: {exc}"
        ) from exc
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise GameLoadError(f"{where} names nothing: {module_name} has no {attribute}")
        target = getattr(target, part)
    if member == "board" and not callable(target):
        raise GameLoadError(f"{where} names {_kind(target)}, not a function")
    if member == "report":
        _check_report(
            target, entry, f"game {entry.name!r} from {entry.origin}", f"{label} {value!r}"
        )
    return target


def _checked_game(module: ModuleType, entry: Declared, where: str) -> type[Game]:
    if not entry.origin.builtin:
        # Our own games ship with the contract they are written against; a package states it.
        version = getattr(module, "CONTRACT_VERSION", None)
        if version is None:
            raise GameLoadError(
                f"{where}: {entry.module} declares no CONTRACT_VERSION; this playtester "
                f"provides version {CONTRACT_VERSION} of the engine contract"
            )
        if version != CONTRACT_VERSION:
            raise GameLoadError(
                f"{where} is written against version {version!r} of the engine contract; "
                f"this playtester provides version {CONTRACT_VERSION}"
            )
    game = getattr(module, "GAME", None)
    if not (isinstance(game, type) and issubclass(game, Game)):
        raise GameLoadError(f"{where}: {entry.module}.GAME should be a Game subclass")
    declared_type = getattr(game, "game_type", None)
    short_name = getattr(declared_type, "short_name", None)
    if short_name != entry.name:
        raise GameLoadError(
            f"{where}: its GAME's game_type.short_name is {short_name!r}; it should be the "
            f"entry point's name {entry.name!r}"
        )
    return game
