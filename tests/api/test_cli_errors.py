"""Bad input and unreachable databases: one ``error:`` line, exit code 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from api.cli import app
from api.cli.common import describe_error, user_errors
from workers.request_text import MAX_INPUT_FILE_BYTES

runner = CliRunner()


def check_one_line_error(exit_code: int, stderr: str, expected: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert exit_code == 2, stderr
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    assert expected in lines[0]
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "chess", "--agents", "random"], "unknown game 'chess'"),
        (["run", "alquerque", "--agents", "random,nobody"], "unknown agent 'nobody'"),
        (
            ["run", "alquerque", "--agents", "mcts:iterations=lots"],
            "agents[0].iterations must be of type int, not str ('lots')",
        ),
        (
            ["run", "alquerque", "--agents", "hard:nodes=5000000"],
            "agents[0].nodes must be at most 1000000 (MAX_AGENT_NODES)",
        ),
        (["run", "alquerque", "--agents", "random", "-o", "colour=red"], "unknown option 'colour'"),
        (["run", "alquerque", "--agents", "random", "--players", "3"], "2 players, not 3"),
        (["run", "alquerque", "--agents", "random,random,random"], "2 players, not 3"),
        (
            ["run", "alquerque", "--agents", "random", "--matches", "0"],
            "matches: Input should be greater than or equal to 1",
        ),
        (["run", "alquerque", "--agents", "random", "-o", "nonsense"], "key=value"),
        (
            ["run", "alquerque", "--agents", "random", "--option-file", "x=/nope.json"],
            "cannot read",
        ),
        (["show", "feedbeef"], "no batch 'feedbeef'"),
        (["replay", "feedbeef", "0"], "no batch 'feedbeef'"),
        (["resume", "ab"], "at least 4"),
        (["run", "alquerque", "--agents", "mcts:exploration=nan"], "finite number"),
        (["run", "alquerque", "--agents", "mcts:exploration=-inf"], "finite number"),
        (["run", "alquerque", "--agents", "mcts:exploration=1e999"], "finite number"),
        (["run", "alquerque", "--agents", "mcts:exploration=1000"], "at most 100"),
        (["run", "alquerque", "--agents", "random", "-o", "players=3"], "unknown option 'players'"),
        (["run", "alquerque", "--agents", "random", "-o", "name=x"], "unknown option 'name'"),
        (
            ["run", "alveoles", "--agents", "greedy", "-o", f"layout={[[10**7] * 8] * 8}"],
            "at most 1000000",
        ),
    ],
)
def test_bad_input_gives_one_line(args: list[str], expected: str, sqlite_url: str) -> None:
    result = runner.invoke(app, [*args, "--db", sqlite_url])
    check_one_line_error(result.exit_code, result.stderr, expected)
    # The command exited on purpose (typer.Exit): no exception escaped it.
    assert isinstance(result.exception, SystemExit) and result.exception.code == 2


def test_the_installed_entry_point_prints_no_traceback(tmp_path: object) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from api.cli import main; main()", "run", "chess", "-a", "random"],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        timeout=120,
    )
    check_one_line_error(done.returncode, done.stderr, "unknown game 'chess'")


def test_an_unreachable_database_is_named() -> None:
    # Port 1 on localhost refuses connections at once.
    url = "postgresql+psycopg://postgres@127.0.0.1:1/nowhere"
    result = runner.invoke(app, ["batches", "--db", url])
    check_one_line_error(result.exit_code, result.stderr, "cannot use the database")
    assert "127.0.0.1:1" in result.stderr


@pytest.mark.parametrize(
    ("url", "expected"),
    [("nonsense", "cannot use the database"), ("mysql://h/d", "unsupported database 'mysql'")],
)
def test_a_bad_database_url_is_named(url: str, expected: str) -> None:
    result = runner.invoke(app, ["batches", "--db", url])
    check_one_line_error(result.exit_code, result.stderr, expected)


def test_a_sqlite_file_in_a_missing_folder_is_named(tmp_path: object) -> None:
    result = runner.invoke(app, ["batches", "--db", f"sqlite:///{tmp_path}/no/such/dir/x.db"])
    check_one_line_error(result.exit_code, result.stderr, "does not exist")


@pytest.mark.parametrize("option", ["--book", "--option-file"])
def test_a_device_or_a_fifo_is_refused_before_it_is_read(
    option: str, sqlite_url: str, tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, expected in (
        ("/dev/zero", "is not a regular file"),
        (str(fifo), "is not a regular file"),
        (str(tmp_path), "Is a directory"),
    ):
        value = path if option == "--book" else f"layout={path}"
        args = ["run", "alquerque", "--agents", "random,easy", option, value, "--db", sqlite_url]
        result = runner.invoke(app, args)
        check_one_line_error(result.exit_code, result.stderr, expected)


def test_a_book_larger_than_the_cap_is_refused_unread(sqlite_url: str, tmp_path: Path) -> None:
    book = tmp_path / "book.txt"
    with book.open("wb") as f:
        f.truncate(MAX_INPUT_FILE_BYTES + 1)  # sparse: no disk used
    args = ["run", "alquerque", "--agents", "random,easy", "--book", str(book), "--db", sqlite_url]
    result = runner.invoke(app, args)
    check_one_line_error(result.exit_code, result.stderr, f"larger than {MAX_INPUT_FILE_BYTES:,}")


def test_only_a_missing_database_driver_is_a_database_error() -> None:
    # A module that is no database driver missing is a broken installation: it surfaces as
    # itself, not as "cannot use the database".
    with pytest.raises(ModuleNotFoundError), user_errors("sqlite:///x.db"):
        raise ModuleNotFoundError("No module named 'scipy'", name="scipy")
    with pytest.raises(typer.Exit), user_errors("postgresql+psycopg://h/d"):
        raise ModuleNotFoundError("No module named 'psycopg'", name="psycopg")
    assert describe_error(ModuleNotFoundError(name="psycopg.pq"), None) is not None
    assert describe_error(ModuleNotFoundError(name="numba"), None) is None
