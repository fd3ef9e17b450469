"""A Celery worker compiles the compiled search before it takes any work.

numba compiles the compiled search on its first call unless its on-disk cache holds it: tens
of seconds on a host that joins with an empty cache (a new machine, a fresh container without
the image's cache, another CPU). Inside a chunk that time counts against the chunk's time
limits: the first compiled match spent its whole soft time limit compiling, and a soft limit
that arrived inside numba's compiler was swallowed there and came out later as an unrelated
error. So the worker warms the cache on Celery's ``worker_init``, in its main process, before
its pool forks the children that run tasks and before its consumer takes a message: the
children start with the compiled code in memory, and the cache on disk serves the next start.

A compilation that fails stops the worker, with the error naming the function: a worker that
cannot compile never takes work it would fail.
"""

from __future__ import annotations

import logging
import os
import time

log = logging.getLogger(__name__)


def warm_compiled() -> float:
    """Compile, or load from numba's cache, every compiled function an agent calls; return the
    seconds it took. Raises ``engines.compiled.agent_base.KernelCompileError`` naming a function
    that failed to compile."""
    # Imported here: loading numba and the kernels is the work this function is for.
    from engines.compiled.warm import warm

    began = time.perf_counter()
    warm()
    return time.perf_counter() - began


def warm_before_work(**_signal: object) -> None:
    """Celery's ``worker_init`` receiver: warm up, or stop the worker saying why."""
    cache = os.environ.get("NUMBA_CACHE_DIR") or "numba's default (__pycache__)"
    try:
        seconds = warm_compiled()
    except Exception as exc:
        log.critical("the compiled search could not be compiled: %s", exc)
        # SystemExit passes through Celery's signal dispatch (which logs and swallows any
        # Exception), so the worker stops before it takes a task.
        raise SystemExit(f"playtester worker not started: {exc}") from exc
    log.info("compiled search ready in %.1f s (cache: %s)", seconds, cache)
