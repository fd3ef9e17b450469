"""THE chunk function: the local process pool and the Celery task both call ``run_chunk``."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from analysis.stopping import SprtRule, of_batch
from engines.core import Ending
from storage import crud
from storage.db import get_engine
from storage.models import Batch, BatchStatus
from storage.records import MatchRecord
from workers.interrupts import interrupt_held
from workers.lifecycle import after_chunk
from workers.play import failed_record, play_chunk
from workers.timelimit import soft_limit_held


@dataclass(frozen=True)
class ChunkOutcome:
    """What one call of ``run_chunk`` did. ``skipped``: nothing played (already written,
    batch cancelled or finished); ``written`` False after playing means another delivery of
    the same chunk won the race and this one's results were discarded. ``played`` matches were
    started in ``seconds`` of play: what the next chunk's size is measured from."""

    batch_id: str
    start: int
    stop: int
    done: int
    failed: int
    skipped: bool
    written: bool
    batch_status: str
    played: int = 0
    seconds: float = 0.0


def default_worker_name() -> str:
    """``host:pid``, stored with each chunk to show who played it."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _stop_counts(
    batch: Batch, start: int, stop: int, records: list[MatchRecord]
) -> list[int] | None:
    """The stop rule's outcome counts over this chunk, stored with it so the rule's check
    sums chunk rows; None without a rule, or when a seat-swapped pair would straddle this
    chunk's edge (the check then counts from the seat results)."""
    rule = of_batch(batch)
    if not isinstance(rule, SprtRule):
        return None
    # Imported here: NumPy and SciPy load only for batches that carry a stop rule.
    from analysis.sprt import chunk_outcomes, uses_pairs

    pairs = uses_pairs(batch)
    if pairs and (start % 2 or (stop % 2 and stop != batch.matches)):
        return None
    a, b = rule.agents
    return chunk_outcomes(records, a, b, pairs=pairs)


def run_chunk(
    batch_id: str,
    start: int,
    stop: int,
    *,
    database_url: str | None = None,
    worker: str | None = None,
    give_up: str | None = None,
    give_up_as: Ending = Ending.ABANDONED,
    then: Callable[[ChunkOutcome], object] | None = None,
) -> ChunkOutcome:
    """Play matches [start, stop) of a batch and store them in one idempotent transaction.

    ``give_up``: play nothing and store every match of the range as failed
    (``give_up_as``) with this reason, so that a chunk no worker can finish still ends.
    Matches cut short by the soft time limit are stored as failed by ``play_chunk``.
    ``then`` is called with the outcome once the chunk is stored, still shielded from the soft
    time limit (the Celery task queues the next chunk there). A Ctrl-C while the chunk is
    stored and checked is raised once that is done (``workers.interrupts``).
    """
    engine = get_engine(database_url)
    batch = crud.get_batch(engine, batch_id)
    if batch is None:
        raise crud.NotFound(f"no batch {batch_id!r}")
    if not 0 <= start < stop <= batch.matches:
        raise ValueError(f"chunk [{start}, {stop}) is outside batch {batch_id} of {batch.matches}")

    def skipped(status: str) -> ChunkOutcome:
        return ChunkOutcome(batch_id, start, stop, 0, 0, True, False, status)

    if batch.status in BatchStatus.FINISHED:
        return skipped(batch.status)
    if crud.range_written(engine, batch_id, start, stop):
        return skipped(batch.status)
    if batch.status == BatchStatus.QUEUED:
        crud.set_status(engine, batch_id, BatchStatus.RUNNING, only_from={BatchStatus.QUEUED})
    began = time.perf_counter()
    if give_up is None:
        records = play_chunk(batch, start, stop)
        # Only the matches a time limit left unstarted carry no playing time.
        played = sum(1 for r in records if r.ok or r.duration > 0)
    else:
        records = [failed_record(batch, i, give_up_as, give_up) for i in range(start, stop)]
        played = 0
    seconds = time.perf_counter() - began
    # The matches are played: from here on the soft time limit must not undo their write, and
    # a Ctrl-C waits until the chunk is stored and its batch's stop rule checked.
    with soft_limit_held(), interrupt_held():
        written = crud.write_chunk(
            engine,
            batch_id=batch_id,
            start=start,
            stop=stop,
            records=records,
            duration=seconds,
            worker=worker or default_worker_name(),
            stop_counts=_stop_counts(batch, start, stop, records),
        )
        status = after_chunk(engine, batch_id)
        done = sum(1 for r in records if r.ok)
        failed = len(records) - done
        outcome = ChunkOutcome(
            batch_id, start, stop, done, failed, False, written, status, played, seconds
        )
        if then is not None:
            then(outcome)
    return outcome
