"""A batch request written as text: agents as typed on a command line, a stop rule (read by
``analysis.stopping``), a variation (``--openings``, ``--book``, ``--noise``) and a book of
openings. One reading for ``playtester run``/``submit`` and for study files."""

from __future__ import annotations

import os
import stat
from typing import Any

from analysis.stopping import StopRule, parse
from engines.core import OptionError

DEFAULT_MATCHES = 100
"""Matches in a batch that does not say."""
MAX_INPUT_FILE_BYTES = 4 * 1024 * 1024
"""The most a file named in a request (a book, an option file) may hold."""


def split_agents(text: str) -> list[str]:
    """``hard,mcts:iterations=200,exploration=1.2,random`` -> one spec text per agent.

    A comma-separated piece with ``=`` but no ``:`` continues the previous agent's parameters.
    """
    pieces = [p.strip() for p in text.split(",")]
    specs: list[str] = []
    for piece in pieces:
        if not piece:
            continue
        if "=" in piece and ":" not in piece and specs:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    if not specs:
        raise OptionError("give at least one agent, e.g. --agents hard,easy", field="agents")
    return specs


def parse_stop(text: str | None) -> StopRule | None:
    """``--stop`` text: JSON or a short form (``analysis.stopping``, the one parser)."""
    return None if text is None else parse(text)


def read_input_file(path: str, what: str, field: str, limit: int = MAX_INPUT_FILE_BYTES) -> str:
    """The UTF-8 text of a file a person named (``what``: how messages name it). A device,
    FIFO or folder is refused before it is read (``/dev/zero`` would never end, a FIFO may
    never answer), and at most ``limit`` bytes are read: a larger file is refused rather than
    held in memory."""
    try:
        # Opened without blocking: opening a FIFO would otherwise wait for a writer.
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                raise OptionError(f"{what} {path!r} is not a regular file", field=field)
            data = stream.read(limit + 1)
    except OSError as exc:
        raise OptionError(f"cannot read {what} {path!r}: {exc.strerror}", field=field) from exc
    if len(data) > limit:
        raise OptionError(f"{what} {path!r} is larger than {limit:,} bytes", field=field)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OptionError(f"{what} {path!r} is not UTF-8 text", field=field) from exc


def read_book(path: str) -> list[list[str]]:
    """A book of openings: one line per opening, its moves separated by commas or spaces;
    blank lines and text after ``#`` are ignored."""
    text = read_input_file(path, "the book", "variation.book")
    lines = []
    for raw in text.splitlines():
        line = raw.partition("#")[0].replace(",", " ").split()
        if line:
            lines.append(line)
    return lines


def parse_variation(
    openings: int | None, book: str | None, noise: str | None, no_variation: bool
) -> dict[str, Any] | None:
    """``--openings K``, ``--book FILE`` (with ``--openings K`` to cut its lines),
    ``--noise M[:MARGIN]`` or ``--noise M:temperature=T``, ``--no-variation``: the request's
    ``variation``, or None for the default."""
    asked = [
        name
        for name, given in (
            ("--openings/--book", openings is not None or book is not None),
            ("--noise", noise is not None),
            ("--no-variation", no_variation),
        )
        if given
    ]
    if len(asked) > 1:
        raise OptionError(f"give one variation, not {' and '.join(asked)}", field="variation")
    if no_variation:
        return {"kind": "none"}
    if book is not None:
        request: dict[str, Any] = {"kind": "openings", "source": "book", "book": read_book(book)}
        if openings is not None:
            request["plies"] = openings
        return request
    if openings is not None:
        return {"kind": "openings", "source": "random", "plies": openings}
    if noise is not None:
        return _noise_request(noise)
    return None


def _noise_request(text: str) -> dict[str, Any]:
    plies, _, how = text.partition(":")
    request: dict[str, Any] = {"kind": "noise", "plies": _cli_number(plies, "variation.plies")}
    if how:
        key, eq, value = how.partition("=")
        key = key.strip() if eq else "margin"
        if key not in ("margin", "temperature"):
            raise OptionError(
                f"--noise {text!r}: after the plies give MARGIN, margin=X or temperature=X",
                field="variation",
            )
        request[key] = _cli_number(value if eq else how, f"variation.{key}")
    return request


def _cli_number(text: str, field: str) -> int | float:
    """A number typed after ``--noise``: whole when written as one (NaN and infinities are
    left for the planner to refuse by name); ASCII digits only."""
    try:
        if not text.isascii():
            raise ValueError(text)
        number = float(text)
    except ValueError:
        raise OptionError(f"{field} must be a number, not {text.strip()!r}", field=field) from None
    return int(text) if text.strip().lstrip("+-").isdigit() else number
