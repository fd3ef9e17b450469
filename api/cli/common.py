"""What every command of the ``playtester`` command line shares: the two consoles, the
``--db`` option, turning input and database errors into one ``error:`` line, and reading
agents, game options and stop rules from the command line."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from engines.core import GameError, OptionError
from engines.seating import seating_design
from storage import crud
from storage.db import DRIVER_MODULES, ensure_schema, get_engine, safe_url
from storage.settings import Settings, get_settings

out = Console()
err = Console(stderr=True)

MAX_INPUT_FILE_BYTES = 4 * 1024 * 1024
"""Largest file read from the command line (a book, an option file): a book at its line cap
(``engines.variation.MAX_BOOK_LINES``) of long openings is well under it."""

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Database URL (default: DATABASE_URL, else ./playtester.db)."),
]


# --------------------------------------------------------------------------- errors


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one red ``error:`` line on stderr and exit with ``code``."""
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(code)


def describe_error(exc: BaseException, url: str | None = None) -> str | None:
    """The one-line message for an error a user can fix, or None for a genuine bug."""
    if isinstance(exc, GameError | crud.NotFound):
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, ModuleNotFoundError):
        if (exc.name or "").partition(".")[0] not in DRIVER_MODULES:
            return None
        if (exc.name or "").startswith("psycopg"):
            return f"PostgreSQL needs psycopg: pip install 'playtester[postgres]' ({safe_url(url)})"
    if isinstance(exc, SQLAlchemyError | ModuleNotFoundError | FileNotFoundError):
        where = safe_url(url)
        detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        first = detail[0] if detail else type(exc).__name__
        return f"cannot use the database {where}: {first}"
    return None


@contextmanager
def user_errors(url: str | None = None) -> Iterator[None]:
    """Turn input and database errors into one ``error:`` line and exit code 2."""
    try:
        yield
    except (GameError, crud.NotFound, SQLAlchemyError, ModuleNotFoundError, FileNotFoundError) as e:
        message = describe_error(e, url)
        if message is None:
            raise
        fail(message)


def settings_for(url: str | None) -> Settings:
    """The environment's settings, with the database ``--db`` names when it is given: what a
    command passes down."""
    settings = get_settings()
    return settings if url is None else settings.model_copy(update={"database_url": url})


def open_db(url: str | None) -> Engine:
    """The engine for ``url``, with the schema created or upgraded if needed."""
    engine = get_engine(url)
    ensure_schema(url)
    return engine


# --------------------------------------------------------------------------- parsing


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


def parse_value(text: str) -> Any:
    """A command-line value: JSON when it parses (numbers, lists, true), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_options(pairs: list[str], files: list[str]) -> dict[str, Any]:
    """``--option key=value`` and ``--option-file key=path.json`` into one dict."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise OptionError(f"--option {pair!r} should look like key=value", field="options")
        options[key.strip()] = parse_value(value.strip())
    for pair in files:
        key, eq, path = pair.partition("=")
        if not eq or not key.strip():
            raise OptionError(
                f"--option-file {pair!r} should look like key=path.json", field="options"
            )
        text = read_input_file(path, "the option file", "options")
        try:
            options[key.strip()] = json.loads(text)
        except ValueError as exc:
            raise OptionError(f"{path!r} is not JSON: {exc}", field="options") from exc
    return options


def parse_stop(text: str | None) -> dict[str, Any] | None:
    """``--stop`` text (JSON, or the short form of ``analysis.sprt.parse_stop_rule``)."""
    if text is None:
        return None
    from analysis.sprt import parse_stop_rule

    return parse_stop_rule(text)


def read_input_file(path: str, what: str, field: str, limit: int = MAX_INPUT_FILE_BYTES) -> str:
    """The UTF-8 text of a file a person named on the command line (``what``: how messages
    name it). A device, FIFO or folder is refused before it is read (``/dev/zero`` would never
    end, a FIFO may never answer), and at most ``limit`` bytes are read: a larger file is
    refused rather than held in memory."""
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


# --------------------------------------------------------------------------- warnings


def warn_incomplete_seating(players: int, policy: str, matches: int) -> None:
    """One warning line when the batch's size leaves its seating design incomplete."""
    design = seating_design(players, policy, matches)
    if not design.complete:
        err.print(f"[yellow]warning:[/yellow] {design.note}", highlight=False)
