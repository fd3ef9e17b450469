"""What happens after a chunk is written: finishing a batch exactly once, stopping rules."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import Engine

from storage import crud
from storage.models import Batch, BatchStatus

log = logging.getLogger(__name__)
ACTIVE = {BatchStatus.QUEUED, BatchStatus.RUNNING}


def _stop_decision(engine: Engine, batch: Batch) -> dict[str, Any] | None:
    """The stopping rule's decision, or None to go on."""
    # Imported here: pandas and SciPy load only for batches that carry a stop rule.
    from analysis.stop_rule import check_stop_rule

    decision = check_stop_rule(engine, batch)
    return dict(decision) if decision else None


def after_chunk(engine: Engine, batch_id: str) -> str:
    """Finish the batch if it is complete (or its stopping rule decided); return its status.

    Completion is a conditional update from queued/running, so when several workers write the
    last chunks at once exactly one of them finishes the batch. A batch where every match
    failed becomes ``failed`` with the first error; otherwise ``done``.

    A stopping rule is checked after every chunk; once it decides, the batch is ``done`` with
    the decision (which records ``decided_at_matches``) and no further chunk starts.
    ``stopped_early`` is set only while matches are missing: should chunks already running
    complete the batch after all, it is cleared again.
    """
    batch = crud.get_batch(engine, batch_id)
    if batch is None:
        raise crud.NotFound(f"no batch {batch_id!r}")
    if batch.status in BatchStatus.FINISHED:
        if batch.stopped_early:
            _unmark_if_complete(engine, batch_id)
        return batch.status
    if batch.stop_rule:
        decision = _stop_decision(engine, batch)
        if decision is not None:
            at = int(decision["decided_at_matches"])
            if crud.set_status(
                engine,
                batch_id,
                BatchStatus.DONE,
                only_from=ACTIVE,
                stopped_early=at < batch.matches,
                decision=decision,
            ):
                log.info("batch %s decided at %d matches: %s", batch_id, at, decision["verdict"])
            else:
                # Another worker finished it first, perhaps stopped early with fewer matches
                # written than this chunk now completes.
                _unmark_if_complete(engine, batch_id)
            return _status(engine, batch_id)
    prog = crud.progress(engine, batch_id)
    # Chunk rows never overlap, so their counts reach the batch size only when every match
    # index is stored, whatever sizes the chunks had.
    if prog.finished_matches < prog.matches:
        return batch.status
    if prog.done == 0 and prog.failed > 0:
        crud.set_status(
            engine,
            batch_id,
            BatchStatus.FAILED,
            error=crud.first_error(engine, batch_id) or "every match failed",
            only_from=ACTIVE,
        )
    else:
        crud.set_status(engine, batch_id, BatchStatus.DONE, only_from=ACTIVE)
    return _status(engine, batch_id)


def _unmark_if_complete(engine: Engine, batch_id: str) -> None:
    """Clear ``stopped_early`` once every chunk is written: no match was left out after all."""
    prog = crud.progress(engine, batch_id)
    if prog.chunks_written >= prog.chunks_total:
        crud.clear_stopped_early(engine, batch_id)


def _status(engine: Engine, batch_id: str) -> str:
    batch = crud.get_batch(engine, batch_id)
    return batch.status if batch is not None else BatchStatus.FAILED
