"""A virtual environment laid over the test's own: a fresh venv whose ``.pth`` line adds this
environment's site-packages (playtester's editable install included), so a test can pip-install
a game package into it, or leave one out, without touching the project's environment."""

from __future__ import annotations

import subprocess
import sysconfig
import venv
from pathlib import Path


def plain_venv(folder: Path) -> Path:
    """A virtual environment in ``folder`` that sees this one's packages; its ``python``."""
    venv.EnvBuilder(with_pip=False).create(folder)
    python = folder / "bin" / "python"
    site_dir = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    (Path(site_dir) / "_playtester_base.pth").write_text(
        f"import site; site.addsitedir({ours!r})\n", encoding="utf-8"
    )
    return python
