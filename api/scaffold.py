"""``playtester new-game``: a complete, installable game package written from templates
(``api.scaffold_text``), named after the game."""

from __future__ import annotations

import keyword
from pathlib import Path
from string import Template

from api.scaffold_text import FILES
from engines.errors import OptionError
from engines.plugins import NAME_PATTERN
from engines.registry import broken_games, game_names, game_origin


def write_package(name: str, target: Path) -> list[Path]:
    """Write the package for game ``name`` into ``target`` (new or empty); the paths written.

    The name must be a registry name no installed package already declares; the folder must
    not hold anything, so nobody's work is overwritten.
    """
    if not NAME_PATTERN.fullmatch(name) or keyword.iskeyword(name):
        raise OptionError(
            f"game name {name!r} should be lower-case letters, digits and underscores, "
            "starting with a letter",
            field="name",
        )
    if name in game_names():
        raise OptionError(
            f"game {name!r} already comes from {game_origin(name)}; choose another name",
            field="name",
        )
    taken = [b for b in broken_games() if b["name"] == name]
    if taken:
        origin = f"{taken[0]['package']} {taken[0]['version']}"
        raise OptionError(f"game {name!r} is already declared by {origin}", field="name")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise OptionError(f"{str(target)!r} already exists and is not empty", field="dir")
    values = {
        "name": name,
        "title": name.replace("_", " ").title(),
        "cls": "".join(part.title() for part in name.split("_")),
        "package": f"{name}_game",
        "dist": f"playtester-{name.replace('_', '-')}",
        "letter": name[0].upper(),
    }
    written = []
    for path_template, text in FILES.items():
        path = target / Template(path_template).substitute(values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(text).substitute(values), encoding="utf-8")
        written.append(path)
    return written
