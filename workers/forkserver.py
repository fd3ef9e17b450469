"""A fork server: one pre-imported Python that forks a fresh child for each isolated call.

Starting a fresh interpreter for every check of an OpenSpiel request costs about a second of
CPU, most of it importing the project (SQLModel, NumPy, OpenSpiel). Instead, a process that
wants isolation starts one server on first use; the server
imports ``PRELOAD`` once and then forks a child per call, which costs milliseconds. The server
(started as ``python -m workers.isolation``, whose ``run_call`` each child runs) is a fresh
interpreter, never a fork of the caller, so a threaded API process forks nothing
itself; the server has a single thread, so its ``fork`` is safe.

Each call gets its own socket pair: the caller keeps one end and hands the other to the server
over the control socket (``SCM_RIGHTS``); the server forks, and the child reads the call from
that end, runs it and answers on it. The server watches each call's socket and each child's
``pidfd``: when the caller hangs up (done, gave up at its wall limit, or died) the child is
killed; when the child ends, the server sends its exit status and the tail of its error
output on the call's socket (``("exit", status, tail)``) and closes it. The server ends when
its control socket closes, that is when the process that started it has gone. A server that
died is started again on the next call.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
HEADER = struct.Struct("!Q")
"""Each message on a call's socket: its length, then a pickle."""
PRELOAD = ("workers.batches", "workers.play", "engines.openspiel.spiel", "pyspiel")
"""Imported by the server once, so that a forked child starts with them (those missing, such
as ``pyspiel`` without the OpenSpiel extra, are skipped)."""
STARTUP_SECONDS = 300.0
"""How long starting the server (its imports) may take, on a loaded machine."""
STDERR_TAIL = 400
"""Bytes of a child's error output sent back with its exit status (an abort's message)."""
READY = b"ready"
SERVER_MODULE = "workers.isolation"
"""The module run as the server: it calls ``server_main`` with the function each child runs."""
QUIET_THREADS = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}
"""One thread per numeric library: the server must stay single-threaded to fork safely, and
each thread would reserve address space a child's memory limit counts."""


class ServerUnavailableError(RuntimeError):
    """The fork server could not be started: isolation is impossible on this machine."""


def frame(message: Any) -> bytes:
    body = pickle.dumps(message)
    return HEADER.pack(len(body)) + body


# --------------------------------------------------------------------------- the caller's side


@dataclass
class _Handle:
    process: subprocess.Popen[bytes]
    control: socket.socket

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        self.control.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(10)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


_handle: _Handle | None = None
_lock = threading.Lock()


def _forget_in_child() -> None:
    # A process forked from a caller (the local pool's workers) starts its own server; the
    # lock may have been held by another thread of the parent at the fork.
    global _handle, _lock
    if _handle is not None:
        _handle.control.close()  # this copy only: the parent's server keeps serving it
    _handle, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


def _start() -> _Handle:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env = {**os.environ, **QUIET_THREADS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with theirs:
        process = subprocess.Popen(
            [sys.executable, "-m", SERVER_MODULE, str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            env=env,
            cwd=ROOT,
        )
    ours.settimeout(STARTUP_SECONDS)
    try:
        said = ours.recv(16)
    except OSError:
        said = b""
    ours.settimeout(None)
    handle = _Handle(process, ours)
    if said != READY:
        handle.stop()
        raise ServerUnavailableError(
            f"the isolating fork server did not start (exit status {process.returncode})"
        )
    return handle


def open_call() -> socket.socket:
    """A socket connected to a freshly forked child, which waits for its call (a ``frame`` of
    ``(target, args, limits)``); the server is started, or started again, as needed."""
    global _handle
    with _lock:
        for _attempt in range(2):
            if _handle is None or not _handle.alive():
                if _handle is not None:
                    _handle.stop()
                _handle = _start()
            ours, theirs = socket.socketpair()
            try:
                socket.send_fds(_handle.control, [b"c"], [theirs.fileno()])
            except OSError:
                ours.close()
                _handle.process.kill()  # it is gone or stuck: the next round starts another
                continue
            finally:
                theirs.close()
            return ours
    raise ServerUnavailableError("the isolating fork server keeps dying")


def stop_server() -> None:
    """End this process's fork server, if it runs (tests, shutdown)."""
    global _handle
    with _lock:
        if _handle is not None:
            _handle.stop()
        _handle = None


# --------------------------------------------------------------------------- the server


@dataclass
class _Job:
    pid: int
    pidfd: int
    call: socket.socket
    errors: IO[bytes]
    killed: bool = field(default=False)


def _child(
    call: socket.socket, errors: IO[bytes], run: Callable[..., None], others: list[int]
) -> None:
    """In the forked child: read the call, then run it; never returns. ``others`` are the
    server's descriptors (the control socket, the other calls), closed here so that a caller
    sees its call end when the server closes it, not when its siblings end."""
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        for fd in others:
            os.close(fd)
        # What native code prints, on either stream, is kept for the reason of a crash.
        os.dup2(errors.fileno(), 1)
        os.dup2(errors.fileno(), 2)
        reader = call.makefile("rb")
        size = reader.read(HEADER.size)
        if len(size) == HEADER.size:
            target, args, limits = pickle.loads(reader.read(HEADER.unpack(size)[0]))
            run(call, target, args, limits)
            status = 0
    finally:
        os._exit(status)


def _tail(errors: IO[bytes]) -> str:
    errors.seek(0, os.SEEK_END)
    errors.seek(max(0, errors.tell() - STDERR_TAIL))
    return errors.read().decode("utf-8", "replace")


def _finish(job: _Job) -> None:
    _, status = os.waitpid(job.pid, 0)
    with contextlib.suppress(OSError):
        job.call.sendall(frame(("exit", os.waitstatus_to_exitcode(status), _tail(job.errors))))
    job.call.close()
    job.errors.close()
    os.close(job.pidfd)


def _kill(job: _Job) -> None:
    job.killed = True
    with contextlib.suppress(ProcessLookupError):
        signal.pidfd_send_signal(job.pidfd, signal.SIGKILL)


def _fork(call: socket.socket, run: Callable[..., None], others: list[int]) -> _Job:
    errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed in _finish
    pid = os.fork()
    if pid == 0:
        _child(call, errors, run, others)
    return _Job(pid, os.pidfd_open(pid), call, errors)


def serve(control: socket.socket, run: Callable[..., None]) -> None:
    """Fork a child per socket received on ``control`` until it closes, then kill them all."""
    jobs: dict[int, _Job] = {}  # by pidfd
    calls: dict[int, _Job] = {}  # by the call socket's fd, while it is watched
    poller = select.poll()
    poller.register(control, select.POLLIN)
    while True:
        for fd, _event in poller.poll():
            if fd == control.fileno():
                try:
                    _, fds, _, _ = socket.recv_fds(control, 16, 1)
                except OSError:
                    fds = []
                if not fds:  # the caller has gone
                    for job in jobs.values():
                        _kill(job)
                    for job in list(jobs.values()):
                        _finish(job)
                    return
                others = [control.fileno()]
                for other in jobs.values():
                    others += [other.pidfd, other.call.fileno(), other.errors.fileno()]
                job = _fork(socket.socket(fileno=fds[0]), run, others)
                jobs[job.pidfd] = job
                calls[job.call.fileno()] = job
                poller.register(job.pidfd, select.POLLIN)
                poller.register(job.call, select.POLLRDHUP)
            elif fd in jobs:  # a child ended
                job = jobs.pop(fd)
                poller.unregister(fd)
                if calls.pop(job.call.fileno(), None) is not None:
                    poller.unregister(job.call)
                _finish(job)
            elif fd in calls:  # the caller hung up (or broke the protocol): the child goes
                job = calls.pop(fd)
                poller.unregister(fd)
                _kill(job)


def server_main(control_fd: int, run: Callable[..., None]) -> None:
    """The server process: import ``PRELOAD``, say it is ready, then ``serve``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C is for the caller
    control = socket.socket(fileno=control_fd)
    for module in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    control.send(READY)
    serve(control, run)
