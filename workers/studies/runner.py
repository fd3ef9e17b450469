"""Running a study's batches in this machine's database, finding again the ones that ran.

Each batch is stored with its content key (:mod:`workers.studies.plan`) as its idempotency
key, so a finished batch is reused as it is, an unfinished one is resumed, and only a missing
one is made. The same on a server: :mod:`workers.studies.remote`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from storage import crud
from storage.models import BatchStatus
from storage.submissions import Idempotency, earlier_submission, fingerprint, submit_batch
from workers.studies.plan import PlannedBatch
from workers.studies.tuning import Runner, TrialOutcome

LOCAL_SCOPE = ""
"""Whose keys study batches are in a local database: nobody's in particular, as with a
server that has no API key."""


@dataclass(frozen=True)
class StudyRun:
    """One study batch as it stands: its stored id, whether it was made by this run, its status."""

    name: str
    batch_id: str
    created: bool | None
    """Made by this run; None on a server, which alone knows whether it had the batch."""
    status: str


@dataclass(frozen=True)
class Restored:
    """A study batch brought in from its results folder: what the import added."""

    name: str
    batch_id: str
    matches_added: int
    status: str


def idempotency(p: PlannedBatch) -> Idempotency:
    """The key a study batch is stored under in a local database."""
    return Idempotency(scope=LOCAL_SCOPE, key=p.key, fingerprint=fingerprint(p.request))


def find_here(engine: Engine, planned: Sequence[PlannedBatch]) -> dict[str, str]:
    """Study batch name -> stored batch id, for the batches this database already has."""
    found = {}
    for p in planned:
        earlier = earlier_submission(engine, idempotency(p))
        if earlier is not None:
            found[p.batch.name] = earlier.batch.id
    return found


def run_here(
    engine: Engine,
    planned: Sequence[PlannedBatch],
    play: Callable[[StudyRun], object],
    announce: Callable[[StudyRun], None] = lambda _run: None,
) -> list[StudyRun]:
    """Make the missing batches in ``engine``'s database and ``play`` every one not yet
    finished (given its ``StudyRun``: name and batch id); a finished batch is reused
    untouched."""
    runs = []
    for p in planned:
        submission = submit_batch(
            engine, plan=p.plan, idempotency=idempotency(p), start_request=False
        )
        batch = submission.batch
        run = StudyRun(p.batch.name, batch.id, submission.created, batch.status)
        announce(run)
        if batch.status not in BatchStatus.FINISHED:
            play(run)
            run = StudyRun(
                run.name, run.batch_id, run.created, crud.find_batch(engine, batch.id).status
            )
        runs.append(run)
    return runs


def trial_here(
    engine: Engine,
    play: Callable[[str, Callable[[crud.Progress], None]], object],
    check_every: int,
) -> Runner:
    """A tuning trial run on this machine: the batch is made (or found again by its key), and
    ``play(batch_id, progress)`` plays it; every ``check_every`` finished matches its report is
    read, and the batch is cancelled when ``should_stop`` says so."""
    from analysis.report import build_report

    def run(p: PlannedBatch, should_stop: Callable[[dict[str, Any]], bool]) -> TrialOutcome:
        submission = submit_batch(
            engine, plan=p.plan, idempotency=idempotency(p), start_request=False
        )
        batch_id = submission.batch.id
        checked = [0]
        stopped = [False]

        def progress(state: crud.Progress) -> None:
            if stopped[0] or state.finished_matches - checked[0] < check_every:
                return
            checked[0] = state.finished_matches
            if state.finished_matches < state.matches and should_stop(
                build_report(engine, batch_id)
            ):
                stopped[0] = True
                crud.cancel_batch(engine, batch_id)

        if submission.batch.status not in BatchStatus.FINISHED:
            play(batch_id, progress)
        batch = crud.find_batch(engine, batch_id)
        return TrialOutcome(
            batch_id, build_report(engine, batch_id), batch.status == BatchStatus.CANCELLED
        )

    return run
