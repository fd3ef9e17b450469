"""Running a study's batches on a playtester server, finding again the ones it already has.

Each batch is sent with its content key (:mod:`workers.studies.plan`) as ``Idempotency-Key``,
so a server that has the batch answers with it; a finished batch is reused, an unfinished one
waited for, and only a missing one is made. The server is anything with the few calls of
:class:`Server` (``api.client.ServiceClient`` in the command line).

A study's results folders reach a server that lacks their batches as uploads
(:class:`OnService`, a ``results.Destination``), and come back as downloads
(:func:`archive_fetch`, what ``results.Keeper`` saves while the batches are watched).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from storage.models import BatchStatus
from workers.studies.plan import Checker, PlannedBatch
from workers.studies.runner import Restored, StudyRun
from workers.studies.tuning import Runner, TrialOutcome

if TYPE_CHECKING:
    from storage.archive import Archive, ExportSummary

POLL_SECONDS = 2.0


class Server(Checker, Protocol):
    """The calls of a playtester server a study makes (its HTTP routes, by name)."""

    def submit(
        self, body: dict[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]: ...

    def batch(self, batch_id: str) -> dict[str, Any]: ...

    def batches(self, **filters: Any) -> dict[str, Any]: ...

    def cancel(self, batch_id: str) -> dict[str, Any]: ...

    def report(self, batch_id: str, *, compensation: bool = True) -> Any: ...

    def compare(self, batch_a: str, batch_b: str) -> Any: ...

    def archive(self, batch_id: str, folder: Path, *, moves: bool = True) -> None: ...

    def import_archive(
        self, folder: Path, *, idempotency_key: str | None = None
    ) -> dict[str, Any]: ...


def find_on_service(server: Server, planned: Sequence[PlannedBatch]) -> dict[str, str]:
    """Study batch name -> batch id, for the batches the server already has."""
    found = {}
    for p in planned:
        items = server.batches(key=p.key)["items"]
        if items:
            found[p.batch.name] = items[0]["id"]
    return found


class OnService:
    """A server as a ``results.Destination``: a folder whose batch the server lacks is
    uploaded with the batch's key (``POST /batches/import``); one it has is left alone, the
    server being where that batch goes on."""

    merges = False

    def __init__(self, server: Server) -> None:
        self.server = server
        self.where = "the server"

    def held(self, p: PlannedBatch) -> str | None:
        return find_on_service(self.server, [p]).get(p.batch.name)

    def bring(self, p: PlannedBatch, folder: Path, archive: Archive) -> Restored:
        answer = self.server.import_archive(folder, idempotency_key=p.key)
        return Restored(p.batch.name, answer["id"], answer["matches_added"], answer["status"])


def archive_fetch(
    server: Server, *, moves: bool = True
) -> Callable[[str], Callable[[Path], ExportSummary]]:
    """For a batch id, what downloads that batch's archive into a folder and says what it
    holds (checked whole: a download cut short never replaces a saved folder)."""
    from storage.archive import describe

    def fetch_batch(batch_id: str) -> Callable[[Path], ExportSummary]:
        def fetch(folder: Path) -> ExportSummary:
            server.archive(batch_id, folder, moves=moves)
            return describe(folder)

        return fetch

    return fetch_batch


def run_on_service(
    server: Server,
    planned: Sequence[PlannedBatch],
    progress: Callable[[int, int], None] = lambda _done, _total: None,
    announce: Callable[[StudyRun], None] = lambda _run: None,
    poll_seconds: float = POLL_SECONDS,
    polled: Callable[[list[StudyRun]], None] = lambda _runs: None,
) -> list[StudyRun]:
    """Submit every batch with its key (a server that has it answers with it), then wait
    until all are finished, calling ``progress(done, total)`` matches as they come and
    ``polled`` with every batch as it stands after each look (the last one too). Check the
    batches first (``plan.check_on_server``): a refusal here leaves the batches before it."""
    accepted: list[tuple[PlannedBatch, dict[str, Any]]] = []
    # A batch the server holds by the key (one imported from the results folder among them:
    # an import's key never answers a submission) is watched, not submitted.
    held = find_on_service(server, planned)
    for p in planned:
        name = p.batch.name
        if name in held:
            answer = server.batch(held[name])
        else:
            answer = server.submit(p.request, idempotency_key=p.key)
        announce(StudyRun(p.batch.name, answer["id"], None, answer["status"]))
        accepted.append((p, answer))
    total = sum(p.plan.matches for p in planned)
    while True:
        states = [server.batch(answer["id"]) for _, answer in accepted]
        progress(sum(finished_matches(state) for state in states), total)
        runs = [
            StudyRun(p.batch.name, state["id"], None, state["status"])
            for (p, _), state in zip(accepted, states, strict=True)
        ]
        polled(runs)
        if all(run.status in BatchStatus.FINISHED for run in runs):
            return runs
        time.sleep(poll_seconds)


def finished_matches(state: Mapping[str, Any]) -> int:
    """Matches of a batch (as ``GET /batches/{id}`` shows it) played or failed so far."""
    progress = state.get("progress") or {}
    return int(progress.get("finished", 0) or 0)


def trial_on_service(
    server: Server, check_every: int, poll_seconds: float = POLL_SECONDS
) -> Runner:
    """A tuning trial on a server: submitted with its key, watched, read every
    ``check_every`` finished matches, cancelled when ``should_stop`` says so."""

    def run(p: PlannedBatch, should_stop: Callable[[dict[str, Any]], bool]) -> TrialOutcome:
        batch_id = server.submit(p.request, idempotency_key=p.key)["id"]
        checked = 0
        while True:
            state = server.batch(batch_id)
            if state["status"] in BatchStatus.FINISHED:
                break
            done = finished_matches(state)
            if done - checked >= check_every:
                checked = done
                if should_stop(server.report(batch_id)):
                    server.cancel(batch_id)
            time.sleep(poll_seconds)
        return TrialOutcome(
            batch_id, server.report(batch_id), state["status"] == BatchStatus.CANCELLED
        )

    return run
