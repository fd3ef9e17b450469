"""``playtester new-game``'s package installs with pip and plays at once.

A virtual environment made in the test's folder sees this environment's packages (a ``.pth``
line adds its site-packages, playtester's editable install included) and installs the new
package with ``pip install -e`` (build requirements from the configured indexes, no
dependencies); then ``playtester games`` lists it with its package, ``check-game`` passes,
``run NAME --agents random`` plays a batch, and the package's own tests pass.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from overlay_venv import plain_venv

CLI = "import sys; from api.cli import main; sys.argv[0] = 'playtester'; main()"


def _run(python: Path, *arguments: str, cwd: Path) -> str:
    done = subprocess.run(
        [str(python), *arguments], cwd=cwd, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return " ".join(done.stdout.split())


@pytest.mark.slow
def test_a_new_game_installs_with_pip_and_plays(tmp_path: Path) -> None:
    env = tmp_path / "venv"
    python = plain_venv(env)
    assert Path(sys.prefix) != env
    package = tmp_path / "playtester-kayles"
    _run(python, "-c", CLI, "new-game", "kayles", "--dir", str(package), cwd=tmp_path)
    _run(python, "-m", "pip", "install", "-q", "--no-deps", "-e", str(package), cwd=tmp_path)

    listed = _run(python, "-c", CLI, "games", cwd=tmp_path)
    assert "kayles — Kayles (2 players) from playtester-kayles 0.1.0" in listed
    checked = _run(python, "-c", CLI, "check-game", "kayles", "--games", "300", cwd=tmp_path)
    assert "ok: 300 games met every check" in checked
    database = f"sqlite:///{tmp_path / 'batches.db'}"
    ran = _run(
        python,
        "-c",
        CLI,
        "run",
        "kayles",
        "--agents",
        "random",
        "--matches",
        "12",
        "--workers",
        "1",
        "--seed",
        "7",
        "--db",
        database,
        cwd=tmp_path,
    )
    assert "12 matches" in ran
    tested = _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=package)
    assert "3 passed" in tested
