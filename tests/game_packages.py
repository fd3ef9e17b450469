"""Installed game packages for tests: a real distribution (a ``*.dist-info`` folder with its
``METADATA`` and ``entry_points.txt``, and its modules) written to a folder put on
``sys.path``, which ``importlib.metadata`` finds as pip's own installs are found."""

from __future__ import annotations

import importlib
import sys
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from engines import registry


class Site:
    """A folder on ``sys.path`` that distributions are installed into."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.monkeypatch = monkeypatch
        self.modules: set[str] = set()

    def install(
        self,
        package: str,
        version: str,
        games: Mapping[str, str],
        modules: Mapping[str, str] | None = None,
    ) -> None:
        """Install ``package`` declaring ``games`` (name → module), with ``modules`` (module
        name → source) beside it; the registry then reads the installed games again."""
        info = self.root / f"{package.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = "".join(f"{name} = {module}\n" for name, module in games.items())
        (info / "entry_points.txt").write_text(f"[playtester.games]\n{lines}", encoding="utf-8")
        for name, source in (modules or {}).items():
            (self.root / f"{name}.py").write_text(source, encoding="utf-8")
            self.modules.add(name)
        self.modules.update(games.values())
        importlib.invalidate_caches()
        registry.forget_games()

    def install_example(self, folder: Path) -> None:
        """Install the project in ``folder`` (``examples/<name>``) as ``pip install -e`` would:
        the folder on ``sys.path``, its ``pyproject.toml``'s name, version and games declared;
        every module of its packages forgotten after the test."""
        project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        self.monkeypatch.syspath_prepend(str(folder))
        for path in folder.glob("*/*.py"):
            package = path.parent.name
            if package != "tests":
                self.modules.add(package if path.stem == "__init__" else f"{package}.{path.stem}")
        games = project["entry-points"]["playtester.games"]
        self.install(project["name"], project["version"], games)


@contextmanager
def site_packages(root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    """A fresh installation folder for one test; everything it installed is forgotten after."""
    site = Site(root, monkeypatch)
    already = set(sys.modules)  # a module a test imported itself stays, to compare with
    monkeypatch.syspath_prepend(str(root))
    try:
        yield site
    finally:
        monkeypatch.undo()
        for name in site.modules - already:
            sys.modules.pop(name, None)
        importlib.invalidate_caches()
        registry.forget_games()
