"""Local mode: a process pool runs a batch's missing chunks through ``run_chunk``.

The missing ranges are cut as they are handed out (``workers.sizing.RangePlanner``): by the
batch's fixed chunk size, or, without one, first one small chunk that measures the batch and
then chunks of about ``chunk_seconds`` each, sized from the chunks that finish, smaller toward
the end so that the pool's processes finish together.

Ctrl-C stops submitting, cancels the chunks not yet started, lets the running ones finish and
be written (a second Ctrl-C abandons them), sets the batch back to queued and re-raises
``KeyboardInterrupt``. Nothing half-written is left: each chunk is one transaction, so
``run_local`` on the same batch later plays exactly the missing matches. A Ctrl-C while a chunk
is stored and its stop rule checked stops the run just after (``workers.interrupts``), as does
one a finalizer swallowed, at the end of the chunk it landed in.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

from storage import crud
from storage.crud import Progress
from storage.db import forget_inherited_engines, get_engine
from storage.models import BatchStatus
from storage.settings import Settings
from workers.chunks import ChunkOutcome, run_chunk
from workers.interrupts import interrupt_held, raise_swallowed_interrupt
from workers.lifecycle import after_chunk
from workers.sizing import RangePlanner

ProgressCallback = Callable[[Progress], None]
IN_FLIGHT_PER_WORKER = 2
"""Chunks queued per worker: enough to keep workers busy, few enough to stop quickly."""


def default_workers() -> int:
    """Every core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _init_worker() -> None:
    # Ctrl-C goes to the whole process group; only the parent decides what it means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    forget_inherited_engines()


def _pool_context() -> multiprocessing.context.BaseContext:
    # fork starts workers in milliseconds with the engines already imported; the initializer
    # drops the inherited database pools.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _terminate(pool: ProcessPoolExecutor) -> None:
    # ProcessPoolExecutor has no public way to stop busy workers before Python 3.14.
    for process in list(getattr(pool, "_processes", {}).values()):
        process.terminate()


def run_local(
    batch_id: str,
    *,
    settings: Settings,
    workers: int | None = None,
    progress: ProgressCallback | None = None,
) -> Progress:
    """Play every missing chunk of a batch (its full id) in ``settings``' database on
    ``workers`` processes (default: all cores), chunks sized to ``settings.chunk_seconds``.

    ``progress`` is called with the batch's progress at the start and after every chunk.
    Returns the final progress; raises ``KeyboardInterrupt`` after a clean stop on Ctrl-C.
    """
    database_url = settings.database_url
    engine = get_engine(database_url)
    batch = crud.get_batch(engine, batch_id)
    if batch is None:
        raise crud.NotFound(f"no batch {batch_id!r}")
    report = progress or (lambda _p: None)
    report(crud.progress(engine, batch_id))
    if batch.status in BatchStatus.FINISHED:
        return crud.progress(engine, batch_id)
    ranges = crud.missing_chunks(engine, batch)
    # No more processes than there can be chunks: a fixed size says how many are missing;
    # measured sizes could be as small as one match.
    most = len(ranges) if batch.chunk_size else sum(b - a for a, b in ranges)
    count = max(1, min(workers or default_workers(), most or 1))
    planner = RangePlanner(batch, ranges, settings=settings, workers=count)
    # Everything from here on is in the try: a Ctrl-C while the stop rule is checked (after a
    # chunk, or once more at the end) must put the batch back to queued as well.
    try:
        if batch.stop_rule:
            # Loaded once here, so forked workers inherit it instead of each importing NumPy
            # and SciPy on its first check of the rule.
            import analysis.sprt  # noqa: F401
        if count == 1:
            while (chunk := planner.take()) is not None:
                outcome = run_chunk(batch_id, *chunk, database_url=database_url)
                planner.measured(outcome.played, outcome.seconds)
                report(crud.progress(engine, batch_id))
                raise_swallowed_interrupt()
                if outcome.batch_status in BatchStatus.FINISHED:
                    break  # done, cancelled elsewhere, or its stopping rule decided
        else:
            _run_pool(
                batch_id,
                planner,
                count,
                database_url,
                lambda: report(crud.progress(engine, batch_id)),
            )
        with interrupt_held():  # the last check of the stop rule, whole (workers.interrupts)
            after_chunk(engine, batch_id)
        final = crud.progress(engine, batch_id)
        report(final)
    except KeyboardInterrupt:
        crud.set_status(engine, batch_id, BatchStatus.QUEUED, only_from={BatchStatus.RUNNING})
        raise
    return final


def _run_pool(
    batch_id: str,
    planner: RangePlanner,
    count: int,
    database_url: str,
    tick: Callable[[], None],
) -> None:
    """Keep ``count`` workers busy with the chunks ``planner`` hands out; see the module
    docstring."""
    # The parent's idle connections must not be shared with forked children.
    get_engine(database_url).dispose()
    pool = ProcessPoolExecutor(
        max_workers=count, mp_context=_pool_context(), initializer=_init_worker
    )
    running: set[Future[ChunkOutcome]] = set()
    stopped = False
    try:
        while running or not (stopped or planner.exhausted):
            while not stopped and len(running) < count * IN_FLIGHT_PER_WORKER:
                chunk = planner.take()
                if chunk is None:
                    break
                running.add(pool.submit(run_chunk, batch_id, *chunk, database_url=database_url))
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                outcome = future.result()
                planner.measured(outcome.played, outcome.seconds)
                if outcome.batch_status in BatchStatus.FINISHED:
                    # Cancelled elsewhere, or its stopping rule decided: start nothing more.
                    # Queued chunks are withdrawn; running ones finish and are written.
                    stopped = True
                    running = {f for f in running if not f.cancel()}
            tick()
            raise_swallowed_interrupt()
    except KeyboardInterrupt:
        for future in running:
            future.cancel()
        try:
            pool.shutdown(wait=True, cancel_futures=True)
        except KeyboardInterrupt:
            _terminate(pool)
            pool.shutdown(wait=True, cancel_futures=True)
        raise
    except BaseException:
        for future in running:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
