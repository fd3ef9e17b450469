"""Ctrl-C at the awkward moments of ``study run``, ``run`` and ``resume``: while a stop rule is
checked after a chunk (inside the callback SciPy's root finder calls from compiled code, and
while SQLAlchemy returns a connection to its pool), inside a finalizer the garbage collector
runs while a chunk plays, between two batches of a study, and during the final save of a
batch's results. Each time the command must say how to go on, exit 130, print no traceback
(nor an "Exception ignored" report of a swallowed interrupt), leave no results folder
half-written, and the next run must play exactly the matches still missing.

The command runs in a real subprocess through a small harness (``HARNESS``) that, at the chosen
moment, writes a line to stderr and then waits for the signal; the test sends SIGINT to the
process group on reading that line, so the interrupt lands exactly there. The harness also
writes a line for every chunk it starts to play, which is how the test sees what the resumed
run played.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from storage import crud
from storage.archive import read_archive, read_batch
from storage.db import get_engine
from storage.models import BatchStatus

pytestmark = pytest.mark.slow

HARNESS = r"""
import gc, os, signal, sys

moment = os.environ.get("INTERRUPT_AT", "")


def reached(what):
    # The test sends Ctrl-C on reading this line. The wait ends once the signal is handled:
    # with Python's handler it raises KeyboardInterrupt right here; where the command holds
    # Ctrl-C off for a moment, it is noted, and raised when that moment ends.
    heard = []
    previous = signal.getsignal(signal.SIGINT)

    def passed_on(signum, frame):
        heard.append(signum)
        signal.signal(signal.SIGINT, previous)
        previous(signum, frame)

    signal.signal(signal.SIGINT, passed_on)
    print(f"[harness] at {what}", file=sys.stderr, flush=True)
    while not heard:
        signal.pause()


if moment == "startup":
    # While the commands' modules load (SciPy among them), before any command runs.
    import importlib.abc

    class Watch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "scipy.stats":
                sys.meta_path.remove(self)
                reached(moment)
            return None

    sys.meta_path.insert(0, Watch())
    from api.cli import main

    main()

import workers.chunks

play_chunk = workers.chunks.play_chunk


class Finalized:
    # Collected by the garbage collector: Python runs __del__ where no exception can propagate.
    def __init__(self):
        self.cycle = self

    def __del__(self):
        reached(moment)


def logged_play(batch, start, stop):
    print(f"[harness] playing {batch.id} {start} {stop}", file=sys.stderr, flush=True)
    if moment == "finalizer" and start > 0 and not finalized:
        finalized.append(True)  # while the second chunk plays
        Finalized()
        gc.collect()
    return play_chunk(batch, start, stop)


finalized = []


workers.chunks.play_chunk = logged_play


def watch_stop_checks():
    # A list that is non-empty while a stop rule is being checked after a chunk.
    import workers.lifecycle

    decide, checking = workers.lifecycle._stop_decision, []

    def watched_decision(engine, batch):
        checking.append(True)
        try:
            return decide(engine, batch)
        finally:
            checking.pop()

    workers.lifecycle._stop_decision = watched_decision
    return checking


if moment == "stop check":
    # Inside the callback SciPy's root finder calls from compiled code, during the SPRT's
    # check after the first chunk.
    import analysis.sprt

    brentq, checking, done = analysis.sprt.brentq, watch_stop_checks(), []

    def watched_brentq(f, *args, **kwargs):
        def g(x):
            if checking and not done:
                done.append(True)
                reached(moment)
            return f(x)

        return brentq(g, *args, **kwargs)

    analysis.sprt.brentq = watched_brentq
elif moment == "connection reset":
    # While SQLAlchemy returns a connection to its pool during the stop rule's check.
    from sqlalchemy import event
    from sqlalchemy.pool import Pool

    checking, done = watch_stop_checks(), []

    @event.listens_for(Pool, "reset")
    def watched_reset(dbapi_connection, record, reset_state):
        if checking and not done:
            done.append(True)
            reached(moment)

elif moment == "between batches":
    import api.cli.study

    announce, seen = api.cli.study._announce, []

    def watched_announce(run):
        announce(run)
        seen.append(run)
        if len(seen) == 2:  # the first batch is played and saved, the second not started
            reached(moment)

    api.cli.study._announce = watched_announce
elif moment == "final save":
    import workers.studies.results as results

    keep, done = results.keep, []

    def watched_keep(fetch, folder):
        def fetch_then_wait(staged):
            summary = fetch(staged)
            if not done:  # the export is written beside the folder, not yet moved in
                done.append(True)
                reached(moment)
            return summary

        return keep(fetch_then_wait, folder)

    results.keep = watched_keep

from api.cli import main

main()
"""

MATCHES = 120
SPRT = "sprt:random,random#2,elo0=0,elo1=10"
# Elsewhere a precision rule that cannot be met in MATCHES games: its check is a fraction of a
# second where the SPRT's root finding takes seconds, and it still runs after every chunk.
PRECISION = "precision:first_player_advantage,half_width=0.001"
BATCH = """[[batch]]
name = "{name}"
game = "alquerque"
agents = "random,random"
matches = {matches}
seed = {seed}
seat_policy = "balanced"
stop = "{stop}"
"""
HEAD = 'title = "Stopped anywhere"\nhalf_width = 0.05\nbudget_cpu_hours = 1\n\n'
QUESTION = '\n[[question]]\nfigure = "first_player_advantage"\nbatch = "first"\n'


def study_text(names: list[str], stop: str = PRECISION) -> str:
    batches = "\n".join(
        BATCH.format(name=n, matches=MATCHES, seed=3 + i, stop=stop) for i, n in enumerate(names)
    )
    return HEAD + batches + QUESTION


def start(args: list[str], cwd: Path, moment: str = "") -> subprocess.Popen[str]:
    # A new session stands in for the terminal's process group, which Ctrl-C signals whole.
    return subprocess.Popen(
        [sys.executable, "-c", HARNESS, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=cwd,
        env={**os.environ, "INTERRUPT_AT": moment},
    )


def interrupt_at(proc: subprocess.Popen[str], moment: str) -> tuple[int, str]:
    """Read ``proc``'s stderr up to the harness's line for ``moment``, send Ctrl-C to its
    process group, and return its exit code and whole stderr."""
    assert proc.stderr is not None
    before = []
    for line in proc.stderr:
        before.append(line)
        if line.strip() == f"[harness] at {moment}":
            break
    else:
        proc.wait(timeout=60)
        raise AssertionError(f"the command never reached {moment}:\n{''.join(before)}")
    os.killpg(proc.pid, signal.SIGINT)
    _, rest = proc.communicate(timeout=120)
    return proc.returncode, "".join(before) + rest


def played(stderr: str, batch_id: str) -> set[int]:
    """The match indices of the chunks of ``batch_id`` the harness saw started."""
    out: set[int] = set()
    for line in stderr.splitlines():
        if line.startswith(f"[harness] playing {batch_id} "):
            a, b = map(int, line.split()[3:])
            out.update(range(a, b))
    return out


def stored(url: str, batch_id: str) -> set[int]:
    with get_engine(url).connect() as conn:
        rows = conn.execute(
            select(crud.MATCH.c.match_index).where(crud.MATCH.c.batch_id == batch_id)
        )
        return {int(i) for (i,) in rows}


def assert_clean(code: int, stderr: str, message: str) -> None:
    assert code == 130, stderr
    assert message in stderr, stderr
    assert "Traceback" not in stderr, stderr
    assert "Exception ignored" not in stderr, stderr


def assert_no_half_written(results: Path) -> None:
    # A save stopped midway leaves its export beside the folder (.<batch>.new) or the old
    # folder moved aside (.<batch>.old); neither may outlive the command.
    leftovers = [p.name for p in results.iterdir() if p.name.startswith(".")]
    assert leftovers == []


def study_run(path: Path, url: str, moment: str = "") -> subprocess.Popen[str]:
    args = ["study", "run", str(path), "--db", url, "--workers", "1"]
    return start(args, path.parent.parent, moment)


@pytest.mark.parametrize(
    "moment", ["stop check", "connection reset", "finalizer", "between batches", "final save"]
)
def test_ctrl_c_anywhere_in_study_run_stops_cleanly_and_resumes_what_is_missing(
    moment: str, migrated_sqlite_url: str, tmp_path: Path
) -> None:
    url = migrated_sqlite_url
    names = ["first", "second"] if moment == "between batches" else ["first"]
    path = tmp_path / "studies" / "anywhere.toml"
    path.parent.mkdir()
    path.write_text(study_text(names, SPRT if moment == "stop check" else PRECISION))
    results = path.parent / "results" / "anywhere"
    engine = get_engine(url)

    code, stderr = interrupt_at(study_run(path, url, moment), moment)
    assert_clean(code, stderr, "interrupted; results saved in")
    assert "Continue (here or elsewhere) with:\n  playtester study run" in stderr
    assert_no_half_written(results)
    made = sorted(crud.list_batches(engine), key=lambda b: b.created_at)
    batches = dict(zip(names, made, strict=True))  # a study makes its batches in order
    first = batches["first"]
    kept = {n: stored(url, b.id) for n, b in batches.items()}
    # The first batch's folder holds what the database holds, in the state it was left in.
    saved = read_batch(results / "first")
    assert saved["status"] == first.status
    assert set(read_archive(results / "first").matches["match_index"]) == kept["first"]
    if moment in {"stop check", "connection reset", "finalizer"}:
        assert first.status == BatchStatus.QUEUED and 0 < len(kept["first"]) < MATCHES
    else:
        assert first.status == BatchStatus.DONE
    if moment == "between batches":
        assert not (results / "second").exists() and kept["second"] == set()

    again = study_run(path, url)
    _, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, stderr
    for name, before in kept.items():
        batch_id = batches[name].id
        after = stored(url, batch_id)
        # Played now: exactly what was missing (neither rule decides early here).
        assert after == set(range(MATCHES))
        assert played(stderr, batch_id) == after - before
        assert set(read_archive(results / name).matches["match_index"]) == after


def test_ctrl_c_in_a_stop_check_of_run_stops_cleanly_and_resume_plays_what_is_missing(
    migrated_sqlite_url: str, tmp_path: Path
) -> None:
    url = migrated_sqlite_url
    moment = "stop check"
    args = ["run", "alquerque", "--agents", "random,random", "--matches", str(MATCHES)]
    args += ["--seed", "3", "--seat-policy", "balanced", "--stop", SPRT]
    code, stderr = interrupt_at(start([*args, "--workers", "1", "--db", url], tmp_path, moment),
                                moment)  # fmt: skip
    (batch,) = crud.list_batches(get_engine(url))
    assert_clean(code, stderr, f"interrupted; finished chunks are saved. Continue with:\n"
                               f"  playtester resume {batch.id}")  # fmt: skip
    assert batch.status == BatchStatus.QUEUED
    before = stored(url, batch.id)
    assert 0 < len(before) < MATCHES

    again = start(["resume", batch.id, "--workers", "1", "--db", url], tmp_path)
    _, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, stderr
    assert played(stderr, batch.id) == set(range(MATCHES)) - before
    assert stored(url, batch.id) == set(range(MATCHES))
    assert crud.find_batch(get_engine(url), batch.id).status == BatchStatus.DONE


def test_ctrl_c_while_the_command_line_loads_stops_cleanly(
    migrated_sqlite_url: str, tmp_path: Path
) -> None:
    moment = "startup"
    path = tmp_path / "studies" / "anywhere.toml"
    path.parent.mkdir()
    path.write_text(study_text(["first"]))
    code, stderr = interrupt_at(study_run(path, migrated_sqlite_url, moment), moment)
    assert_clean(code, stderr, "interrupted")
    assert crud.list_batches(get_engine(migrated_sqlite_url)) == []
