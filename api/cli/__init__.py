"""The ``playtester`` command line: the root Typer app, assembled from one sub-app per module.

- ``run``: ``run``, ``resume`` (play a batch on this machine)
- ``batches``: ``games``, ``batches``, ``show``, ``replay``
- ``reports``: ``report``, ``compare``
- ``archive``: ``export``, ``import`` (batches as files), ``verify`` (replay from seeds)
- ``service``: ``serve``, ``worker``, ``submit``, ``status`` (the HTTP API and its workers)
- ``tune``: ``tune`` (search a game's options for the fairest variant)
- ``authoring``: ``check-game``, ``new-game`` (a designer's own game package)
- ``db``: ``db upgrade``
- ``study``: ``study check``, ``study run``, ``study report`` (study files)
- ``docs``: ``docs serve``, ``docs build`` (the documentation site)

What they share (consoles, ``--db``, error lines, option parsing) is in ``api.cli.common``. A
new command goes in the module of its kind; ``--help`` lists commands in the order below. The
root app is assembled in ``api.cli.root`` (and reachable as ``api.cli.app``), which ``main``
loads only once Ctrl-C is set up to stop cleanly.
"""

from __future__ import annotations

import logging
import signal
import sys
from typing import Any

from workers.interrupts import keep_swallowed_interrupts


def hear_ctrl_c() -> None:
    """Make SIGINT the clean stop even when this process was started with it ignored.

    A shell script's background job (``playtester study run ... &``) inherits SIGINT ignored,
    and Python then never raises ``KeyboardInterrupt``: ``kill -INT`` or a server closing its
    local run would be lost, and the batch played to its end instead of saved and stopped.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


class _NoInterruptTracebacks(logging.Filter):
    """Drop records that log a ``KeyboardInterrupt`` (SQLAlchemy's pool does when one lands
    while it returns a connection, then re-raises it): the command reports the stop itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        kind = record.exc_info[0] if record.exc_info else None
        return not (kind is not None and issubclass(kind, KeyboardInterrupt))


def stop_cleanly_on_ctrl_c() -> None:
    """Ctrl-C wherever it lands ends in the command's own message and exit code 130: one a
    finalizer swallowed stops a local run at the end of its chunk (``workers.interrupts``), and
    no library's traceback of it reaches stderr (logged records do through
    ``logging.lastResort`` when nothing configured logging, as in the command line)."""
    hear_ctrl_c()
    keep_swallowed_interrupts()
    if logging.lastResort is not None:
        logging.lastResort.addFilter(_NoInterruptTracebacks())


def main() -> None:
    """Entry point of the ``playtester`` console script."""
    stop_cleanly_on_ctrl_c()
    try:
        # Loaded here, not at import: a Ctrl-C during the seconds it takes is a clean stop too.
        from api.cli.root import app

        app(prog_name="playtester")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:
        from rich.markup import escape

        from api.cli.common import describe_error, err

        message = describe_error(exc)
        if message is None:
            raise
        err.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
        sys.exit(2)


def __getattr__(name: str) -> Any:
    # ``from api.cli import app``: the root app, loaded on first use.
    if name == "app":
        from api.cli.root import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["app", "main"]
