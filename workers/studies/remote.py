"""Running a study's batches on a playtester server, finding again the ones it already has.

Each batch is sent with its content key (:mod:`workers.studies.plan`) as ``Idempotency-Key``,
so a server that has the batch answers with it; a finished batch is reused, an unfinished one
waited for, and only a missing one is made. The server is anything with the few calls of
:class:`Server` (``api.client.ServiceClient`` in the command line).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from storage.models import BatchStatus
from workers.studies.plan import Checker, PlannedBatch
from workers.studies.runner import StudyRun
from workers.studies.tuning import Runner, TrialOutcome

POLL_SECONDS = 2.0


class Server(Checker, Protocol):
    """The calls of a playtester server a study makes (its HTTP routes, by name)."""

    def submit(
        self, body: dict[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]: ...

    def batch(self, batch_id: str) -> dict[str, Any]: ...

    def batches(self, **filters: Any) -> dict[str, Any]: ...

    def cancel(self, batch_id: str) -> dict[str, Any]: ...

    def report(self, batch_id: str) -> Any: ...

    def compare(self, batch_a: str, batch_b: str) -> Any: ...


def find_on_service(server: Server, planned: Sequence[PlannedBatch]) -> dict[str, str]:
    """Study batch name -> batch id, for the batches the server already has."""
    found = {}
    for p in planned:
        items = server.batches(key=p.key)["items"]
        if items:
            found[p.batch.name] = items[0]["id"]
    return found


def run_on_service(
    server: Server,
    planned: Sequence[PlannedBatch],
    progress: Callable[[int, int], None] = lambda _done, _total: None,
    announce: Callable[[StudyRun], None] = lambda _run: None,
    poll_seconds: float = POLL_SECONDS,
) -> list[StudyRun]:
    """Submit every batch with its key (a server that has it answers with it), then wait
    until all are finished, calling ``progress(done, total)`` matches as they come. Check the
    batches first (``plan.check_on_server``): a refusal here leaves the batches before it."""
    accepted: list[tuple[PlannedBatch, dict[str, Any]]] = []
    for p in planned:
        answer = server.submit(p.request, idempotency_key=p.key)
        announce(StudyRun(p.batch.name, answer["id"], None, answer["status"]))
        accepted.append((p, answer))
    total = sum(p.plan.matches for p in planned)
    while True:
        states = [server.batch(answer["id"]) for _, answer in accepted]
        progress(sum(finished_matches(state) for state in states), total)
        if all(state["status"] in BatchStatus.FINISHED for state in states):
            return [
                StudyRun(p.batch.name, state["id"], None, state["status"])
                for (p, _), state in zip(accepted, states, strict=True)
            ]
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
