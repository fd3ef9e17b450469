"""The fork server behind ``workers.isolation``: each call runs in its own forked child, whose
answer, refusal or death comes back to the caller; a child the caller gave up on is killed;
a server that died is started again."""

from __future__ import annotations

import math
import os
import signal
import time
from pathlib import Path

import pytest

from engines.core import OptionError
from workers import forkserver
from workers.isolation import ChildFailedError, Limits, call_isolated, stream_isolated

LIMITS = Limits(memory_bytes=1024 * 2**20, cpu_seconds=10.0, wall_seconds=60.0)


def server_pid() -> int:
    assert forkserver._handle is not None
    return forkserver._handle.process.pid


def children_of(pid: int) -> set[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return {int(child) for child in text.split()}


def test_a_call_answers_in_a_child_of_the_server() -> None:
    assert call_isolated("math:factorial", (10,), LIMITS) == math.factorial(10)
    child = call_isolated("os:getpid", (), LIMITS)
    assert child not in (os.getpid(), server_pid())
    assert call_isolated("os:getppid", (), LIMITS) == server_pid()


def test_a_refusal_comes_back_as_the_same_option_error() -> None:
    with pytest.raises(OptionError) as refused:
        call_isolated("engines.registry:game_class", ("no_such_game",), LIMITS)
    assert refused.value.field == "game"


def test_a_crash_and_an_exception_are_reasons() -> None:
    with pytest.raises(ChildFailedError, match="crashed with SIGABRT"):
        call_isolated("os:abort", (), LIMITS)
    with pytest.raises(ChildFailedError, match="ValueError: math domain error"):
        call_isolated("math:sqrt", (-1,), LIMITS)


def test_a_stream_yields_each_item_of_a_generator_then_ends(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "c.txt").write_text("c")
    walked = list(stream_isolated("os:walk", (str(tmp_path),), LIMITS))
    assert walked == list(os.walk(tmp_path))
    assert len(walked) == 3


def test_a_child_past_its_wall_limit_is_killed() -> None:
    quick = Limits(memory_bytes=1024 * 2**20, cpu_seconds=10.0, wall_seconds=0.5)
    with pytest.raises(ChildFailedError, match="wall time"):
        call_isolated("time:sleep", (600,), quick)
    # The caller hung up; the server kills the sleeping child and reaps it.
    server = server_pid()
    for _ in range(600):
        if not children_of(server):
            break
        time.sleep(0.05)
    assert children_of(server) == set()


def test_a_server_that_died_is_started_again() -> None:
    call_isolated("os:getpid", (), LIMITS)
    first = server_pid()
    os.kill(first, signal.SIGKILL)
    assert forkserver._handle is not None
    forkserver._handle.process.wait()
    assert call_isolated("os:getppid", (), LIMITS) != first
    assert server_pid() != first


def test_a_forked_copy_of_the_caller_starts_its_own_server() -> None:
    parents_server = call_isolated("os:getppid", (), LIMITS)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: as a worker of the local pool forked from the API
        status = 1
        try:
            server = call_isolated("os:getppid", (), LIMITS)
            os.write(write, str(server).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read) as answer:
        copys_server = int(answer.read())
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert copys_server != parents_server
    assert call_isolated("os:getppid", (), LIMITS) == parents_server
