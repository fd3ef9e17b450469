"""The documentation site builds with every warning an error, and names every command, every
setting and every HTTP route the code has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from repo_paths import REPO
from typer.testing import CliRunner

from api.app import app as web
from api.cli import app
from storage.settings import Settings

DOCS = REPO / "docs"
runner = CliRunner()


def command_paths(group: Any, prefix: tuple[str, ...] = ()) -> list[str]:
    paths = []
    for name, command in group.commands.items():
        if hasattr(command, "commands"):  # a group of commands
            paths += command_paths(command, (*prefix, name))
        else:
            paths.append(" ".join((*prefix, name)))
    return paths


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    result = runner.invoke(app, ["docs", "build", "--site-dir", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "site" / "rules" / "alhambra" / "index.html").is_file()
    assert (tmp_path / "site" / "statistics" / "index.html").is_file()


def test_every_command_has_its_section_in_the_cli_page() -> None:
    page = (DOCS / "cli.md").read_text()
    commands = command_paths(typer.main.get_command(app))
    assert len(commands) > 15
    missing = [c for c in commands if f"### `playtester {c}`" not in page]
    assert not missing, f"commands without a section in docs/cli.md: {missing}"


def test_every_setting_is_in_the_settings_page() -> None:
    page = (DOCS / "settings.md").read_text()
    missing = [n.upper() for n in Settings.model_fields if f"| `{n.upper()}` |" not in page]
    assert not missing, f"settings missing from docs/settings.md: {missing}"


def test_every_route_is_in_the_http_page() -> None:
    page = (DOCS / "http-api.md").read_text()
    routes = [
        (method.upper(), path)
        for path, operations in web.openapi()["paths"].items()
        for method in operations
    ]
    assert len(routes) > 10
    missing = [r for r in routes if f"| `{r[0]}` | `{r[1]}` |" not in page]
    assert not missing, f"routes missing from docs/http-api.md: {missing}"
