"""Native game code in a child process, where a crash costs nothing.

OpenSpiel is C++: a bad parameter can segfault it, abort it on ``std::bad_alloc``, or send it
into a loop that never returns. None of that may take down the API or a worker, so such code
runs in a child Python (``python -m workers.isolation``) under limits the child sets on itself
before it imports anything of the game: address space (``RLIMIT_AS``), CPU time
(``RLIMIT_CPU``, armed again before each item of a stream) and no core file; the parent adds a
wall-clock limit and kills the child when it passes. Whatever happens there — a signal, an
exception, a limit — reaches the caller as ``ChildFailedError`` with a one-line reason, or, when the
child's code refused its input with an ``OptionError``, as that same ``OptionError``.

The child is a fresh interpreter started with ``subprocess`` (no ``fork`` of a threaded API
process, and allowed inside a Celery prefork child, which may not use ``multiprocessing``).
Requests and answers are pickles over pipes between the two processes of one program.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import math
import os
import pickle
import resource
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from engines.core import OptionError

ROOT = Path(__file__).resolve().parent.parent
HEADER = struct.Struct("!Q")
STDERR_TAIL = 400
"""Bytes of the child's error output kept for a reason (an abort's message)."""
QUIET_THREADS = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}
"""One thread per numeric library: each thread reserves address space the memory limit counts."""


@dataclass(frozen=True)
class Limits:
    """What a child may use: ``memory_bytes`` of address space, ``cpu_seconds`` of CPU per item
    (per call for a plain call), ``wall_seconds`` of wall time per item."""

    memory_bytes: int
    cpu_seconds: float
    wall_seconds: float

    def describe(self) -> str:
        mib = self.memory_bytes // 2**20
        return f"{mib} MiB of memory, {self.cpu_seconds:g} s of CPU, {self.wall_seconds:g} s"


class ChildFailedError(Exception):
    """The child crashed, passed a limit or raised; ``reason`` says which, in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------- the parent


class _Child:
    """One running child: its process, the pipe it answers on, its error output."""

    def __init__(self, target: str, args: tuple[Any, ...], limits: Limits) -> None:
        self.limits = limits
        self.errors: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        env = {**os.environ, **QUIET_THREADS}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "workers.isolation"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            env=env,
            cwd=ROOT,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.out = self.process.stdout
        try:
            self.process.stdin.write(pickle.dumps((target, args, limits)))
            self.process.stdin.close()
        except BrokenPipeError:
            pass  # it died at once: the read below reports why

    def _read_exactly(self, size: int, deadline: float) -> bytes | None:
        data = b""
        fd = self.out.fileno()
        while len(data) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChildFailedError(
                    f"took longer than {self.limits.wall_seconds:g} s (wall time)"
                )
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, size - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def receive(self) -> tuple[Any, ...]:
        """The child's next message; ``ChildFailedError`` when it died or ran out of time first."""
        deadline = time.monotonic() + self.limits.wall_seconds
        header = self._read_exactly(HEADER.size, deadline)
        body = None if header is None else self._read_exactly(HEADER.unpack(header)[0], deadline)
        if body is None:
            raise ChildFailedError(self._death())
        message: tuple[Any, ...] = pickle.loads(body)
        return message

    def _death(self) -> str:
        """Why the child ended without answering."""
        try:
            code = self.process.wait(5)
        except subprocess.TimeoutExpired:
            return "closed its answer without ending"
        self.errors.seek(0, os.SEEK_END)
        self.errors.seek(max(0, self.errors.tell() - STDERR_TAIL))
        tail = self.errors.read().decode("utf-8", "replace")
        return death_reason(code, tail, self.limits)

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(10)
        self.out.close()
        self.errors.close()


def death_reason(code: int, stderr_tail: str, limits: Limits) -> str:
    """One line saying how a child with exit status ``code`` ended."""
    memory = f"ran out of memory (limit {limits.memory_bytes // 2**20} MiB)"
    if "bad_alloc" in stderr_tail or "MemoryError" in stderr_tail:
        return memory
    if code < 0:
        number = -code
        if number == signal.SIGXCPU:
            return f"used more than {limits.cpu_seconds:g} s of CPU time"
        name = signal.Signals(number).name if number in signal.valid_signals() else str(number)
        last = stderr_tail.strip().splitlines()[-1:] if stderr_tail.strip() else []
        said = f": {last[0][:160]}" if last else ""
        return f"crashed with {name}{said}"
    return f"exited with status {code} without an answer"


def _answer(message: tuple[Any, ...]) -> Any:
    kind = message[0]
    if kind == "refused":
        raise OptionError(message[1], field=message[2])
    if kind == "error":
        raise ChildFailedError(message[1])
    return message[1]


def call_isolated(target: str, args: tuple[Any, ...], limits: Limits) -> Any:
    """``target(*args)`` (``"module:function"``) run in a child under ``limits``; its value.

    Raises the child's ``OptionError`` as it was, and ``ChildFailedError`` for anything else.
    """
    child = _Child(target, args, limits)
    try:
        return _answer(child.receive())
    finally:
        child.close()


def stream_isolated(target: str, args: tuple[Any, ...], limits: Limits) -> Iterator[Any]:
    """The items of the generator ``target(*args)`` run in a child, each under ``limits``.

    ``ChildFailedError`` ends the stream where the child failed; the items before it were yielded.
    Closing the iterator early (or an exception in the caller, e.g. a soft time limit) kills
    the child.
    """
    child = _Child(target, args, limits)
    try:
        while True:
            message = child.receive()
            if message[0] == "item":
                yield message[1]
            else:
                _answer(message)
                return
    finally:
        child.close()


# --------------------------------------------------------------------------- the child


def _arm_cpu(seconds: float) -> None:
    """Let the child use ``seconds`` more of CPU time from now (SIGXCPU ends it after)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + seconds)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))


def _apply(limits: Limits) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    _arm_cpu(limits.cpu_seconds)


def _send(channel: IO[bytes], message: tuple[Any, ...]) -> None:
    body = pickle.dumps(message)
    channel.write(HEADER.pack(len(body)) + body)
    channel.flush()


def _run(channel: IO[bytes], target: str, args: tuple[Any, ...], limits: Limits) -> None:
    try:
        module, _, name = target.partition(":")
        result = getattr(importlib.import_module(module), name)(*args)
        if not inspect.isgenerator(result):
            _send(channel, ("done", result))
            return
        while True:
            _arm_cpu(limits.cpu_seconds)
            try:
                item = next(result)
            except StopIteration:
                break
            _send(channel, ("item", item))
        _send(channel, ("done", None))
    except OptionError as exc:
        _send(channel, ("refused", str(exc), exc.field))
    except MemoryError:
        _send(channel, ("error", f"ran out of memory (limit {limits.memory_bytes // 2**20} MiB)"))
    except Exception as exc:  # the child's whole point: any failure becomes a reason
        text = " ".join(str(exc).split())[:300]
        _send(channel, ("error", f"{type(exc).__name__}: {text}"))


def _child_main() -> None:
    # The answer goes on a private copy of stdout; what native code prints goes to stderr.
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    target, args, limits = pickle.load(sys.stdin.buffer)
    _apply(limits)
    _run(channel, target, args, limits)
    channel.close()


if __name__ == "__main__":
    _child_main()
