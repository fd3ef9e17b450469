"""``workers.interrupts``: a Ctrl-C held off while a chunk is stored and checked, and one a
finalizer swallowed, are both raised later, once, at the point the local runner chooses."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator

import pytest

from workers.interrupts import interrupt_held, keep_swallowed_interrupts, raise_swallowed_interrupt

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signal handlers are set from the main thread only",
)


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """Python's own SIGINT handler (the one a command line process has) for the test."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    hook = sys.unraisablehook
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = hook


@pytest.mark.usefixtures("python_sigint")
def test_a_ctrl_c_in_a_held_block_is_raised_when_the_block_ends() -> None:
    done = []
    with pytest.raises(KeyboardInterrupt), interrupt_held():
        signal.raise_signal(signal.SIGINT)
        done.append("rest of the block")
    assert done == ["rest of the block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with interrupt_held():
        done.append("a block without Ctrl-C ends quietly")
    assert len(done) == 2


@pytest.mark.usefixtures("python_sigint")
def test_a_ctrl_c_a_finalizer_swallowed_is_raised_once_when_asked() -> None:
    class Finalized:
        def __del__(self) -> None:
            raise KeyboardInterrupt  # as when SIGINT lands while a finalizer runs

    keep_swallowed_interrupts()
    Finalized()  # dropped at once: Python cannot raise from __del__
    with pytest.raises(KeyboardInterrupt):
        raise_swallowed_interrupt()
    raise_swallowed_interrupt()  # raised once: nothing is left to raise


@pytest.mark.usefixtures("python_sigint")
def test_other_errors_in_finalizers_are_still_reported(capsys: pytest.CaptureFixture[str]) -> None:
    class Broken:
        def __del__(self) -> None:
            raise RuntimeError("boom in a finalizer")

    keep_swallowed_interrupts()
    Broken()
    assert "boom in a finalizer" in capsys.readouterr().err
    raise_swallowed_interrupt()


@pytest.mark.usefixtures("python_sigint")
def test_the_command_line_prints_no_library_traceback_of_a_ctrl_c(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import logging

    from api.cli import stop_cleanly_on_ctrl_c

    stop_cleanly_on_ctrl_c()
    # A logger with no handler anywhere, as SQLAlchemy's pool has in the command line: records
    # reach stderr through logging.lastResort.
    pool = logging.getLogger("test_interrupts.pool")
    pool.propagate = False
    for kind in (KeyboardInterrupt, RuntimeError):
        try:
            raise kind("while returning a connection")
        except BaseException:
            pool.error("Exception during reset or similar (%s)", kind.__name__, exc_info=True)
    err = capsys.readouterr().err
    assert "(RuntimeError)" in err and "Traceback" in err
    assert "KeyboardInterrupt" not in err
