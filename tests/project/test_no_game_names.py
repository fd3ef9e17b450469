"""A game lives in its own code: the service's code names no game.

Two checks. An installed package's game (the example packages under ``examples/``, and any
other installed package's) is never named anywhere in playtester's packages, prose included:
a designer's game joins with no edit to playtester. A built-in game is named in code (names
and strings; docstrings are prose and may cite a game) only where that game's own code
lives: ``engines/<game>/``, ``analysis/games/<game>.py`` (and ``<game>_*.py``),
``api/web/boards/<game>.py``; its entry point in ``pyproject.toml`` declares it.

The files that name a built-in game elsewhere today are listed in ``KNOWN``, each with why:
a new one fails, and so does one that no longer names a game (take it off the list).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

from repo_paths import REPO

PACKAGES = ("api", "workers", "analysis", "storage", "engines")
SERVICE = ("api", "workers", "analysis", "storage")
GROUP = "playtester.games"
TEXT_FILES = {".py", ".html", ".js", ".css", ".ini", ".mako", ".txt", ".json", ".csv"}

KNOWN = {
    "api/schemas.py": "the example request in the published schema",
    "api/cli/study.py": "a study file's example path in the command's help",
    "analysis/ladder/ladders.py": "each built-in game's strength ladder is declared here",
    "analysis/studies/definition.py": "the study figures only Les Alvéoles offers",
    "analysis/studies/perfect.py": "the game's rules document cited in a message",
    "engines/compiled/__init__.py": "the compiled levels of each game",
    "engines/compiled/dispatch.py": "one branch per game kernel",
    "engines/compiled/dispatch_alphabeta.py": "one branch per game kernel",
    "engines/compiled/kernels.py": "the declaration of the games with a kernel",
    "engines/compiled/levels_abalone.py": "Abalone's compiled levels",
    "engines/compiled/levels_alhambra.py": "Alhambra's compiled levels",
    "engines/compiled/levels_alquerque.py": "Alquerque's compiled levels",
    "engines/compiled/levels_alveoles.py": "Les Alvéoles' compiled levels",
    "engines/openspiel/actions.py": "the OpenSpiel bridge's action ids per game",
    "engines/openspiel/adapters.py": "the OpenSpiel bridge's adapters per game",
    "engines/openspiel_agent.py": "the games bridged to OpenSpiel",
}
"""Files outside a game's own code that name a built-in game, and why."""


def builtin_games() -> set[str]:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return set(pyproject["project"]["entry-points"][GROUP])


def package_games() -> set[str]:
    """Games declared by packages other than playtester: the examples, and any installed."""
    names = set()
    for path in REPO.glob("examples/*/pyproject.toml"):
        project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
        names |= set(project.get("entry-points", {}).get(GROUP, {}))
    for point in entry_points(group=GROUP):
        if point.dist is not None and point.dist.name != "playtester":
            names.add(point.name)
    return names


def files(packages: tuple[str, ...], suffixes: set[str]) -> list[Path]:
    return sorted(
        path
        for package in packages
        for path in (REPO / package).rglob("*")
        if path.suffix in suffixes and "__pycache__" not in path.parts
    )


def own_code(relative: str, game: str) -> bool:
    return (
        relative.startswith(f"engines/{game}/")
        or relative in (f"analysis/games/{game}.py", f"api/web/boards/{game}.py")
        or (relative.startswith(f"analysis/games/{game}_") and relative.endswith(".py"))
    )


def prose_lines(source: str) -> set[int]:
    """Lines of docstrings and of other string statements (attribute docstrings)."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def code_mentions(path: Path, games: set[str]) -> list[str]:
    """``line: token`` for each name or string, outside prose, holding a game's name."""
    source = path.read_text(encoding="utf-8")
    prose = prose_lines(source)
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in (tokenize.NAME, tokenize.STRING) or token.start[0] in prose:
            continue
        lowered = token.string.lower()
        if any(game in lowered for game in games):
            found.append(f"{token.start[0]}: {token.string[:60]}")
    return found


def test_no_package_s_game_is_named_in_playtester() -> None:
    games = package_games()
    assert "kalah" in games  # the example package is seen, so the check checks something
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(games))) + r")\b", re.I)
    offenders = []
    for path in files(PACKAGES, TEXT_FILES):
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:80]}")
    assert not offenders, (
        "playtester's code names a game that an installed package declares; a package's game "
        "must join with no edit to playtester:\n" + "\n".join(offenders)
    )


def test_built_in_games_are_named_in_code_only_where_their_own_code_lives() -> None:
    games = builtin_games()
    assert games == {"abalone", "alhambra", "alquerque", "alveoles"}
    naming: dict[str, list[str]] = {}
    for path in files(PACKAGES, {".py"}):
        relative = path.relative_to(REPO).as_posix()
        others = {g for g in games if not own_code(relative, g)}
        mentions = code_mentions(path, others)
        if mentions:
            naming[relative] = mentions
    new = {p: m for p, m in naming.items() if p not in KNOWN}
    assert not new, (
        "code outside a game's own files names a built-in game (move it into "
        "engines/<game>/, analysis/games/<game>.py or api/web/boards/<game>.py, or reach the "
        "game through the registry):\n"
        + "\n".join(f"{p}:{m}" for p, mentions in new.items() for m in mentions)
    )
    gone = sorted(set(KNOWN) - set(naming))
    assert not gone, f"these files no longer name a built-in game; take them off KNOWN: {gone}"


def test_the_service_s_packages_hold_no_game_s_own_module() -> None:
    """No file named after a game sits in the service's packages outside its own places."""
    games = builtin_games() | package_games()
    misplaced = [
        path.relative_to(REPO).as_posix()
        for path in files(SERVICE, {".py"})
        if any(g in path.stem for g in games)
        and not any(own_code(path.relative_to(REPO).as_posix(), g) for g in games)
    ]
    assert not misplaced, f"modules named after a game outside its own code: {misplaced}"
