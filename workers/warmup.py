"""A Celery worker compiles what its chunks need beside its work, never inside a chunk's time.

numba compiles a compiled search on its first call unless its on-disk cache holds it: minutes
on a busy host that joins with an empty cache. Compiled inside a chunk, that time counted
against the chunk's time limits; compiled for every search before the worker took any message,
it kept a host that joined from every chunk for minutes, even chunks of agents that call no
compiled code. So a worker takes work as follows:

- A chunk whose agents call no compiled code is played at once.
- A chunk whose agents call a compiled search (``engines.compiled.warm.needs``: per game and
  search) that this host has ready is played at once.
- Any other chunk is deferred: the worker asks its compiler for what it needs and queues the
  chunk again ``DEFER_SECONDS`` later (``workers.dispatch.defer``), for whichever worker is
  ready first. A deferral is not a delivery: it takes no lease and counts no attempt.

The compiler is a thread of the worker's main process that runs each wanted need in a process
of its own (``python -m workers.warmup game:search``, at a lower priority than the chunks),
which fills numba's on-disk cache; once it exits the need is ready, and the chunk that needed
it loads the compiled code from the cache. What is wanted, compiling, ready or failed is kept
in shared memory made before the pool forks its children, so every child reads it. A need that
fails to compile is not retried: the chunks needing it are stored failed with the error, which
names the search.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing.sharedctypes import RawArray

from engines.compiled.warm import Need, all_needs, needs, warm
from engines.core import GameError
from storage.models import BatchBase

log = logging.getLogger(__name__)

DEFER_SECONDS = 2.0
"""A deferred chunk comes back this long after: soon, but not in a loop."""
NICENESS = 10
"""The compiling process yields the processors to the chunks being played."""
POLL_SECONDS = 0.25
ERROR_BYTES = 400
IDLE, WANTED, COMPILING, READY, FAILED = range(5)


@dataclass(frozen=True)
class Readiness:
    """What a chunk's needs are on this host: ``pending`` still compiling (or about to);
    ``failure`` the error of one that failed."""

    pending: tuple[Need, ...] = ()
    failure: str | None = None

    @property
    def ready(self) -> bool:
        return not self.pending and self.failure is None


@dataclass
class HostCompiler:
    """The compiled searches of one worker host: asked for by the processes that play chunks,
    compiled one at a time by a thread of the worker's main process."""

    needs: Sequence[Need]
    command: Sequence[str] = (sys.executable, "-m", "workers.warmup")
    _states: ctypes.Array[ctypes.c_byte] = field(init=False)
    _errors: list[ctypes.Array[ctypes.c_char]] = field(init=False)
    _thread: threading.Thread | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        # Shared memory, inherited by the pool's children: made before the pool forks them.
        self._states = RawArray(ctypes.c_byte, len(self.needs))
        self._errors = [RawArray(ctypes.c_char, ERROR_BYTES) for _ in self.needs]

    def _slot(self, need: Need) -> int:
        return list(self.needs).index(need)

    def state(self, need: Need) -> int:
        return int(self._states[self._slot(need)])

    def error(self, need: Need) -> str:
        return self._errors[self._slot(need)].value.decode(errors="replace")

    def request(self, wanted: Iterable[Need]) -> Readiness:
        """Where ``wanted`` stands; those not asked for yet are asked for now."""
        pending = []
        for need in sorted(wanted):
            slot = self._slot(need)
            state = self._states[slot]
            if state == FAILED:
                return Readiness(failure=self.error(need))
            if state == IDLE:
                # Only a player moves IDLE to WANTED, only the compiler moves on from WANTED:
                # two players asking at once both write WANTED.
                self._states[slot] = WANTED
            if state != READY:
                pending.append(need)
        return Readiness(pending=tuple(pending))

    def start(self) -> None:
        """Start compiling what is asked for, in a thread of this process."""
        self._thread = threading.Thread(target=self._serve, name="compiler", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            if not self.compile_next():
                time.sleep(POLL_SECONDS)

    def compile_next(self) -> bool:
        """Compile the first need asked for, if any; whether there was one."""
        need = next((n for n in self.needs if self.state(n) == WANTED), None)
        if need is None:
            return False
        slot = self._slot(need)
        self._states[slot] = COMPILING
        cache = os.environ.get("NUMBA_CACHE_DIR") or "numba's default (__pycache__)"
        log.info("compiling %s for the chunks that need it (cache: %s)", need, cache)
        began = time.perf_counter()
        done = subprocess.run(
            [*self.command, str(need)], capture_output=True, text=True, check=False
        )
        seconds = time.perf_counter() - began
        if done.returncode == 0:
            self._states[slot] = READY
            log.info("compiled %s in %.1f s", need, seconds)
            return True
        lines = (done.stderr or done.stdout or "").strip().splitlines()
        reason = lines[-1] if lines else f"exit status {done.returncode}"
        self._errors[slot].value = reason.encode()[: ERROR_BYTES - 1]
        self._states[slot] = FAILED
        log.critical("compiling %s failed after %.1f s: %s", need, seconds, reason)
        return True


_host: HostCompiler | None = None


def install(compiler: HostCompiler | None) -> None:
    """Make ``compiler`` this process's (and its future children's); None: none."""
    global _host
    _host = compiler


def batch_needs(batch: BatchBase) -> frozenset[Need]:
    """The compiled searches a batch's agents call (none when its specs do not build: playing
    the chunk then fails them as bad input)."""
    from workers.play import build_game

    try:
        return needs(build_game(batch), batch.agents)
    except GameError:
        return frozenset()


def readiness(batch: BatchBase) -> Readiness:
    """Whether this host can play a chunk of ``batch`` now without compiling; outside a worker
    (no compiler installed) it always can, compiling on first use as any process does."""
    if _host is None:
        return Readiness()
    return _host.request(batch_needs(batch))


def install_before_work(**_signal: object) -> None:
    """Celery's ``worker_init`` receiver: the shared state, before the pool forks."""
    install(HostCompiler(all_needs()))


def start_compiler(**_signal: object) -> None:
    """Celery's ``worker_ready`` receiver: the compiling thread, once the pool runs."""
    if _host is not None:
        _host.start()


def main(argv: list[str]) -> int:
    """``python -m workers.warmup game:search ...``: compile these at a low priority; 0 once
    done, else 1 with one line naming what failed."""
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    try:
        warm([Need.parse(arg) for arg in argv])
    except (ValueError, RuntimeError) as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
