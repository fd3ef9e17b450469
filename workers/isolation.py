"""Native game code in a child process, where a crash costs nothing.

OpenSpiel is C++: a bad parameter can segfault it, abort it on ``std::bad_alloc``, or send it
into a loop that never returns. None of that may take down the API or a worker, so such code
runs in a child process under limits the child sets on itself before it runs the call: address
space (``RLIMIT_AS``), CPU time (``RLIMIT_CPU``, armed again before each item of a stream) and
no core file; the caller adds a wall-clock limit and hangs up when it passes, which kills the
child. Whatever happens there (a signal, an exception, a limit) reaches the caller as
``ChildFailedError`` with a one-line reason, or, when the child's code refused its input with
an ``OptionError``, as that same ``OptionError``.

Each child is forked by this process's fork server (``workers.forkserver``; this module is
the server's program), which has the project imported already, so a call costs milliseconds,
not the second a fresh interpreter takes to import it. The caller itself never forks: that is
safe in a threaded API process and allowed inside a Celery prefork child.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import math
import pickle
import resource
import select
import signal
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engines.core import OptionError
from workers.forkserver import HEADER, frame, open_call, server_main


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
    """One call's child: the socket it answers on."""

    def __init__(self, target: str, args: tuple[Any, ...], limits: Limits) -> None:
        self.limits = limits
        self.call = open_call()
        with contextlib.suppress(OSError):  # it died at once: the read below says why
            self.call.sendall(frame((target, args, limits)))

    def _read_exactly(self, size: int, deadline: float) -> bytes | None:
        data = b""
        while len(data) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChildFailedError(
                    f"took longer than {self.limits.wall_seconds:g} s (wall time)"
                )
            ready, _, _ = select.select([self.call], [], [], left)
            if not ready:
                continue
            chunk = self.call.recv(min(size - len(data), 1 << 20))
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
            raise ChildFailedError("was lost with the server that forked it")
        message: tuple[Any, ...] = pickle.loads(body)
        if message[0] == "exit":  # sent by the server: the child ended without answering
            raise ChildFailedError(death_reason(message[1], message[2], self.limits))
        return message

    def close(self) -> None:
        # Hanging up is what ends a child still running (the server kills it).
        self.call.close()


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


def run_call(call: socket.socket, target: str, args: tuple[Any, ...], limits: Limits) -> None:
    """In a forked child: ``target(*args)`` under ``limits``, its answer (or each item of a
    generator, then the end) sent on ``call``; any failure sent as a reason."""
    _apply(limits)
    try:
        module, _, name = target.partition(":")
        result = getattr(importlib.import_module(module), name)(*args)
        if not inspect.isgenerator(result):
            call.sendall(frame(("done", result)))
            return
        while True:
            _arm_cpu(limits.cpu_seconds)
            try:
                item = next(result)
            except StopIteration:
                break
            call.sendall(frame(("item", item)))
        call.sendall(frame(("done", None)))
    except OptionError as exc:
        call.sendall(frame(("refused", str(exc), exc.field)))
    except MemoryError:
        memory = f"ran out of memory (limit {limits.memory_bytes // 2**20} MiB)"
        call.sendall(frame(("error", memory)))
    except Exception as exc:  # the child's whole point: any failure becomes a reason
        text = " ".join(str(exc).split())[:300]
        call.sendall(frame(("error", f"{type(exc).__name__}: {text}")))


if __name__ == "__main__":
    # The module proper, not this ``__main__`` copy, so that children and callers share types.
    from workers import isolation

    server_main(int(sys.argv[1]), isolation.run_call)
