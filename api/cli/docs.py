"""``docs serve`` and ``docs build``: this documentation site (MkDocs, Material theme) from the
repository's ``docs/`` folder and ``mkdocs.yml``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from api.cli.common import fail

app = typer.Typer(help="The documentation site: serve it here or build it.")

CONFIG = Path(__file__).resolve().parents[2] / "mkdocs.yml"
"""The site's configuration, at the top of the repository beside ``docs/``."""


def _mkdocs(*args: str) -> None:
    if not CONFIG.is_file():
        fail(f"no {CONFIG.name} beside this installation; the site is built from a clone")
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ModuleNotFoundError:
        fail("the documentation needs MkDocs: pip install -e '.[docs]'")
    # The theme's notice about its successor says nothing about this site.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", *args, "--config-file", str(CONFIG)]
    code = subprocess.call(command, env=env)
    if code:
        raise typer.Exit(code)


@app.command("serve")
def serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.", min=1, max=65535)] = 8000,
) -> None:
    """Serve the documentation at http://127.0.0.1:PORT/, rebuilt as its files change."""
    _mkdocs("serve", "--dev-addr", f"127.0.0.1:{port}")


@app.command("build")
def build(
    site_dir: Annotated[Path, typer.Option(help="Where the built site goes.")] = Path("site"),
) -> None:
    """Build the documentation site, every warning an error (as the test suite does)."""
    _mkdocs("build", "--strict", "--site-dir", str(site_dir.resolve()))
