"""``scripts/cluster``, as the docs' "Across machines" page tells a person to use it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO
from server_support import server_missing

from harness.cluster import Unavailable, check_available

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(300)]


def section(page: str) -> str:
    start = page.index("## On one box: `scripts/cluster`")
    return page[start : page.index("\n## ", start)]


def orphaned_segments() -> set[int]:
    """System V shared memory segments no process has attached: what a PostgreSQL killed
    outright leaves behind for good."""
    rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return {int(row.split()[1]) for row in rows if int(row.split()[6]) == 0}


def test_the_documented_cluster_comes_up_runs_a_batch_and_goes(tmp_path: Path) -> None:
    try:
        check_available()
    except Unavailable as exc:
        server_missing(f"no test cluster here: {exc}")
    documented = section((REPO / "docs" / "across-machines.md").read_text())
    for line in (
        "scripts/cluster up --workers 3",
        "set -a; . /tmp/playtester-cluster/<tag>/connection.env; set +a",
        "playtester submit alquerque --agents random,random --matches 2000 "
        "--server http://198.18.<x>.4:8000 --wait",
        "scripts/cluster down",
    ):
        assert line in documented, line
    script = str(REPO / "scripts" / "cluster")
    orphaned = orphaned_segments()
    up = subprocess.run(
        [script, "up", "--workers", "1"], capture_output=True, text=True, timeout=180
    )
    tag = re.search(r"cluster (\w+) is up", up.stdout)
    try:
        assert up.returncode == 0 and tag, up.stdout + up.stderr
        env_file = re.search(r"\. (\S+/connection\.env);", up.stdout)
        server = re.search(r"--server (http://198\.18\.\d+\.4:8000)", up.stdout)
        assert env_file and server, up.stdout
        values = dict(
            line.split("=", 1) for line in Path(env_file.group(1)).read_text().splitlines()
        )
        assert set(values) == {"DATABASE_URL", "BROKER_URL", "API_KEY"}
        # The secrets sit in the file, never on the terminal.
        for secret in values.values():
            assert secret not in up.stdout + up.stderr
        playtester = Path(sys.executable).parent / "playtester"
        submitted = subprocess.run(
            [
                *(str(playtester), "submit", "alquerque", "--agents", "random,random"),
                *("--matches", "40", "--server", server.group(1), "--wait"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **values},
        )
        assert "done: 40 played, 0 failed" in submitted.stdout, submitted.stdout
    finally:
        # Only this cluster: one a person keeps up stays.
        mine = [tag.group(1)] if tag else []
        down = subprocess.run([script, "down", *mine], capture_output=True, text=True, timeout=120)
    assert tag is not None and f"cluster {tag.group(1)} removed" in down.stdout
    left = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"ptc{tag.group(1)}" not in left + namespaces
    # Its PostgreSQL was shut down, not killed: it left no shared memory behind.
    assert orphaned_segments() <= orphaned
