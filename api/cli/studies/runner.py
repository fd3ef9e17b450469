"""Running a study's batches here or on a server, finding again the ones that already ran.

Each batch is stored with its content key (:mod:`api.cli.studies.plan`) as its idempotency key:
in this machine's database by :func:`run_here`, on a server by :func:`run_on_service`, which
sends the key as ``Idempotency-Key`` so the server answers with the batch it already has. A
finished batch is reused as it is, an unfinished one is resumed (here) or waited for (on a
server), and only a missing one is made.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import Engine

from api.cli.studies.plan import PlannedBatch
from api.client import ServiceClient
from storage import crud
from storage.models import BatchStatus
from storage.submissions import Idempotency, earlier_submission, fingerprint, submit_batch

LOCAL_SCOPE = ""
"""Whose keys study batches are in a local database: nobody's in particular, as with a
server that has no API key."""
POLL_SECONDS = 2.0


@dataclass(frozen=True)
class StudyRun:
    """One study batch as it stands: its stored id, whether it was made by this run, its status."""

    name: str
    batch_id: str
    created: bool | None
    """Made by this run; None on a server, which alone knows whether it had the batch."""
    status: str


class Source(Protocol):
    """Where a study's batches are read back from: this machine's database or a server."""

    def report(self, batch_id: str) -> dict[str, Any]: ...

    def compare(self, batch_a: str, batch_b: str) -> dict[str, Any]: ...


class LocalSource:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def report(self, batch_id: str) -> dict[str, Any]:
        from analysis.report import build_report

        return build_report(self.engine, batch_id)

    def compare(self, batch_a: str, batch_b: str) -> dict[str, Any]:
        from analysis.compare import compare

        return compare(self.engine, batch_a, batch_b)


class ServiceSource:
    def __init__(self, client: ServiceClient) -> None:
        self.client = client

    def report(self, batch_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self.client.report(batch_id)
        return result

    def compare(self, batch_a: str, batch_b: str) -> dict[str, Any]:
        result: dict[str, Any] = self.client.compare(batch_a, batch_b)
        return result


def _idempotency(p: PlannedBatch) -> Idempotency:
    return Idempotency(scope=LOCAL_SCOPE, key=p.key, fingerprint=fingerprint(p.request))


def find_here(engine: Engine, planned: Sequence[PlannedBatch]) -> dict[str, str]:
    """Study batch name -> stored batch id, for the batches this database already has."""
    found = {}
    for p in planned:
        earlier = earlier_submission(engine, _idempotency(p))
        if earlier is not None:
            found[p.batch.name] = earlier.batch.id
    return found


def find_on_service(client: ServiceClient, planned: Sequence[PlannedBatch]) -> dict[str, str]:
    """Study batch name -> batch id, for the batches the server already has."""
    found = {}
    for p in planned:
        items = client.batches(key=p.key)["items"]
        if items:
            found[p.batch.name] = items[0]["id"]
    return found


def run_here(
    engine: Engine,
    planned: Sequence[PlannedBatch],
    play: Callable[[str], object],
    announce: Callable[[StudyRun], None] = lambda _run: None,
) -> list[StudyRun]:
    """Make the missing batches in ``engine``'s database and ``play`` (a batch id) every one
    not yet finished; a finished batch is reused untouched."""
    runs = []
    for p in planned:
        submission = submit_batch(
            engine, plan=p.plan, idempotency=_idempotency(p), start_request=False
        )
        batch = submission.batch
        run = StudyRun(p.batch.name, batch.id, submission.created, batch.status)
        announce(run)
        if batch.status not in BatchStatus.FINISHED:
            play(batch.id)
            run = StudyRun(
                run.name, run.batch_id, run.created, crud.find_batch(engine, batch.id).status
            )
        runs.append(run)
    return runs


def run_on_service(
    client: ServiceClient,
    planned: Sequence[PlannedBatch],
    progress: Callable[[int, int], None] = lambda _done, _total: None,
    announce: Callable[[StudyRun], None] = lambda _run: None,
    poll_seconds: float = POLL_SECONDS,
) -> list[StudyRun]:
    """Submit every batch with its key (a server that has it answers with it), then wait
    until all are finished, calling ``progress(done, total)`` matches as they come."""
    accepted: list[tuple[PlannedBatch, dict[str, Any]]] = []
    for p in planned:
        answer = client.submit(p.request, idempotency_key=p.key)
        run = StudyRun(p.batch.name, answer["id"], None, answer["status"])
        announce(run)
        accepted.append((p, answer))
    total = sum(p.plan.matches for p in planned)
    while True:
        states = [client.batch(answer["id"]) for _, answer in accepted]
        done = sum(_finished_matches(state) for state in states)
        progress(done, total)
        if all(state["status"] in BatchStatus.FINISHED for state in states):
            return [
                StudyRun(p.batch.name, state["id"], None, state["status"])
                for (p, _), state in zip(accepted, states, strict=True)
            ]
        time.sleep(poll_seconds)


def _finished_matches(state: dict[str, Any]) -> int:
    progress = state.get("progress") or {}
    return int(progress.get("finished", 0) or 0)


def trial_here(
    engine: Engine,
    play: Callable[[str, Callable[[crud.Progress], None]], object],
    check_every: int,
) -> Callable[[PlannedBatch, Callable[[dict[str, Any]], bool]], Any]:
    """A tuning trial run on this machine: the batch is made (or found again by its key), and
    ``play(batch_id, progress)`` plays it; every ``check_every`` finished matches its report is
    read, and the batch is cancelled when ``should_stop`` says so."""
    from analysis.report import build_report
    from api.cli.studies.tuning import TrialOutcome

    def run(p: PlannedBatch, should_stop: Callable[[dict[str, Any]], bool]) -> TrialOutcome:
        submission = submit_batch(
            engine, plan=p.plan, idempotency=_idempotency(p), start_request=False
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


def trial_on_service(
    client: ServiceClient, check_every: int, poll_seconds: float = POLL_SECONDS
) -> Callable[[PlannedBatch, Callable[[dict[str, Any]], bool]], Any]:
    """A tuning trial on a server: submitted with its key, watched, read every
    ``check_every`` finished matches, cancelled when ``should_stop`` says so."""
    from api.cli.studies.tuning import TrialOutcome

    def run(p: PlannedBatch, should_stop: Callable[[dict[str, Any]], bool]) -> TrialOutcome:
        batch_id = client.submit(p.request, idempotency_key=p.key)["id"]
        checked = 0
        while True:
            state = client.batch(batch_id)
            if state["status"] in BatchStatus.FINISHED:
                break
            done = _finished_matches(state)
            if done - checked >= check_every:
                checked = done
                if should_stop(client.report(batch_id)):
                    client.cancel(batch_id)
            time.sleep(poll_seconds)
        return TrialOutcome(
            batch_id, client.report(batch_id), state["status"] == BatchStatus.CANCELLED
        )

    return run
