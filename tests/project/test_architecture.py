"""The layout's rules, checked on the code itself (see ARCHITECTURE.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO

PACKAGES = ("api", "workers", "analysis", "storage", "engines")
MAX_MODULE_LINES = 600


def test_imports_keep_the_layers_and_make_no_cycles() -> None:
    # import-linter reads its contracts from pyproject.toml: the layers api -> workers ->
    # analysis -> storage | engines (storage and engines import nothing of the project), and
    # no cycle among the modules of any package.
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    "module",
    sorted(str(p.relative_to(REPO)) for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")),
)
def test_no_module_is_a_drawer(module: str) -> None:
    lines = (REPO / module).read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_MODULE_LINES, f"{module} has {lines} lines; split it by job"
