"""A local ``playtester study run`` stopped by Ctrl-C (issue 43, point 10): the checkpoint it
saves states the batch as the database holds it once the run has stopped (``queued``: the
local runner puts an interrupted batch back, and ``study run`` plays it on), holds every match
the database holds, and the next ``study run`` resumes from it to done."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from storage_rows import wait_for_a_chunk

from storage import crud
from storage.archive import read_archive, read_batch
from storage.db import get_engine
from storage.models import BatchStatus

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-c", "from api.cli import main; main()"]
MATCHES = 1500
STUDY = f"""title = "Stopped midway"
half_width = 0.05
budget_cpu_hours = 1

[[batch]]
name = "random"
game = "alquerque"
agents = "random"
matches = {MATCHES}
seed = 3

[[question]]
figure = "first_player_advantage"
batch = "random"
"""


def study_run(path: Path, url: str) -> subprocess.Popen[str]:
    # A new session stands in for the terminal's process group, which Ctrl-C signals whole.
    return subprocess.Popen(
        [*CLI, "study", "run", str(path), "--db", url, "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=path.parent.parent,
    )


def test_an_interrupted_study_run_saves_the_batch_as_stored_and_resumes_from_it(
    migrated_sqlite_url: str, tmp_path: Path
) -> None:
    url = migrated_sqlite_url
    path = tmp_path / "studies" / "stopped.toml"
    path.parent.mkdir()
    path.write_text(STUDY)
    folder = path.parent / "results" / "stopped" / "random"
    engine = get_engine(url)

    proc = study_run(path, url)
    written = wait_for_a_chunk(engine, proc)
    # The first chunk measures the batch: the rest, seconds of play, is still to come.
    assert written >= 1 and proc.poll() is None, "no chunk was stored while the study ran"
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "interrupted; results saved" in stderr

    (batch,) = crud.list_batches(engine)
    saved = read_batch(folder)
    assert saved["id"] == batch.id
    assert saved["status"] == batch.status == BatchStatus.QUEUED
    stored = crud.progress(engine, batch.id).finished_matches
    assert len(read_archive(folder).matches["match_index"]) == stored < MATCHES

    again = study_run(path, url)
    _, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, stderr
    assert f"random: batch {batch.id} (found, queued)" in stderr
    saved = read_batch(folder)
    assert saved["status"] == crud.find_batch(engine, batch.id).status == BatchStatus.DONE
    assert read_archive(folder).matches["match_index"] == list(range(MATCHES))
