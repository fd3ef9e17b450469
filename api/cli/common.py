"""What every command of the ``playtester`` command line shares: the two consoles, the
``--db`` option, turning input and database errors into one ``error:`` line, and reading
game options from the command line (the rest of a batch's text: :mod:`workers.request_text`)."""

from __future__ import annotations

import json
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
from storage.soundness import UnsoundBatch
from workers.native_games import ChecksBusyError
from workers.request_text import read_input_file

out = Console()
err = Console(stderr=True)


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
    if isinstance(exc, GameError | crud.NotFound | UnsoundBatch | ChecksBusyError):
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
    except (
        GameError,
        crud.NotFound,
        UnsoundBatch,
        ChecksBusyError,
        SQLAlchemyError,
        ModuleNotFoundError,
        FileNotFoundError,
    ) as e:
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


# --------------------------------------------------------------------------- warnings


def warn_incomplete_seating(players: int, policy: str, matches: int) -> None:
    """One warning line when the batch's size leaves its seating design incomplete."""
    design = seating_design(players, policy, matches)
    if not design.complete:
        err.print(f"[yellow]warning:[/yellow] {design.note}", highlight=False)
