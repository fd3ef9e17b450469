"""The commands end to end on a SQLite file: run, batches, show, replay, games, db upgrade."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from api.cli import app
from engines.core import replay as replay_moves
from engines.registry import load_game
from storage import crud
from storage.db import current_revision, get_engine, head_revision
from storage.records import split_moves
from workers.play import play_chunk
from workers.request_text import split_agents

runner = CliRunner()


@pytest.fixture
def finished_batch(sqlite_url: str) -> str:
    result = runner.invoke(
        app,
        [
            "run",
            "alquerque",
            "--agents",
            "mcts:iterations=8,random",
            "--matches",
            "6",
            "--seed",
            "7",
            "--workers",
            "1",
            "--db",
            sqlite_url,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Seat balance" in result.stdout and "Agent scores" in result.stdout
    found = re.search(r"batch (\w{12}): done, 6 played, 0 failed", result.stdout)
    assert found, result.stdout
    return found.group(1)


def test_run_creates_the_database_and_stores_the_batch(
    finished_batch: str, sqlite_url: str
) -> None:
    engine = get_engine(sqlite_url)
    assert current_revision(sqlite_url) == head_revision()
    batch = crud.get_batch(engine, finished_batch)
    assert batch is not None
    assert batch.labels == ["mcts(iterations=8)", "random"]
    assert (batch.seed, batch.matches, batch.seat_policy) == (7, 6, "balanced")


def test_batches_and_show(finished_batch: str, sqlite_url: str) -> None:
    listed = runner.invoke(app, ["batches", "--db", sqlite_url])
    assert listed.exit_code == 0 and finished_batch in listed.stdout and "done" in listed.stdout
    shown = runner.invoke(app, ["show", finished_batch[:6], "--db", sqlite_url])
    assert shown.exit_code == 0, shown.output
    for heading in ("Seat balance", "Agent scores", "Game shape", "median", "ended by:"):
        assert heading in shown.stdout


def test_replay_reproduces_the_stored_match(finished_batch: str, sqlite_url: str) -> None:
    engine = get_engine(sqlite_url)
    batch = crud.get_batch(engine, finished_batch)
    assert batch is not None
    index = 3
    result = runner.invoke(app, ["replay", finished_batch, str(index), "--db", sqlite_url])
    assert result.exit_code == 0, result.output
    printed = re.findall(r"^\s*\d+\. seat (\d) \(([^)]*\)?)\): (\S+)$", result.stdout, re.M)
    with engine.connect() as conn:
        stored = conn.execute(
            select(crud.MATCH.c.moves, crud.MATCH.c.seed).where(
                crud.MATCH.c.batch_id == batch.id, crud.MATCH.c.match_index == index
            )
        ).one()
    assert [m for _, _, m in printed] == split_moves(stored.moves)
    # Match 3 is odd, so rotation seats the random agent first.
    assert printed[0][:2] == ("0", "random")
    # Re-run the match from its seed: same moves, same final position as printed.
    again = play_chunk(batch, index, index + 1)[0]
    assert list(again.moves) == split_moves(stored.moves)
    game = load_game(batch.game, players=batch.players, **batch.options)
    final = str(replay_moves(game, again.moves, seed=stored.seed))
    assert final in result.stdout
    assert "re-played from its seed: same moves" in result.stdout


def test_replay_of_a_missing_index(finished_batch: str, sqlite_url: str) -> None:
    result = runner.invoke(app, ["replay", finished_batch, "99", "--db", sqlite_url])
    assert (
        result.exit_code == 2
        and f"match 99 of batch {finished_batch} is not stored" in result.stderr
    )


def test_games_lists_games_options_agents_and_parameters() -> None:
    result = runner.invoke(app, ["games"])
    assert result.exit_code == 0
    assert "alquerque" in result.stdout
    assert "agent mcts" in result.stdout and "iterations" in result.stdout


def test_games_shows_the_budget_bounds_a_batch_is_held_to(monkeypatch: pytest.MonkeyPatch) -> None:
    from storage.settings import get_settings

    monkeypatch.setenv("MAX_AGENT_ITERATIONS", "7000")
    get_settings.cache_clear()
    try:
        listed = runner.invoke(app, ["games"]).stdout
        refused = runner.invoke(
            app, ["run", "alquerque", "--agents", "mcts:iterations=7001", "--db", "sqlite://"]
        )
    finally:
        monkeypatch.delenv("MAX_AGENT_ITERATIONS")
        get_settings.cache_clear()
    # The bound listed is the one a batch is refused at, not the engine's own (10⁶).
    mcts = listed[listed.index("agent mcts") :]
    assert re.search(r"iterations \(int from 1 to 7000,", mcts), mcts[:400]
    assert "1000000" not in mcts[: mcts.index("\n  agent", 1)]
    assert refused.exit_code == 2 and "at most 7000" in refused.stderr


def test_db_upgrade(sqlite_url: str) -> None:
    result = runner.invoke(app, ["db", "upgrade", "--db", sqlite_url])
    assert result.exit_code == 0, result.output
    assert current_revision(sqlite_url) == head_revision()


def test_agents_text_splits_between_agents_not_parameters() -> None:
    assert split_agents("hard,easy") == ["hard", "easy"]
    assert split_agents("mcts:iterations=200,exploration=1.2,random") == [
        "mcts:iterations=200,exploration=1.2",
        "random",
    ]
    assert split_agents(" random , mcts:iterations=5 ") == ["random", "mcts:iterations=5"]


def test_replay_of_a_failed_match_says_why(sqlite_url: str) -> None:
    from storage_rows import make_plan, record

    runner.invoke(app, ["db", "upgrade", "--db", sqlite_url])
    engine = get_engine(sqlite_url)
    batch = crud.create_batch(engine, plan=make_plan(matches=4, chunk_size=4))
    records = [record(i, ok=i != 2) for i in range(4)]
    args = {"batch_id": batch.id, "start": 0, "stop": 4, "duration": 0.1}
    assert crud.write_chunk(engine, records=records, **args)
    result = runner.invoke(app, ["replay", batch.id, "2", "--db", sqlite_url])
    assert result.exit_code == 1
    assert result.stderr.strip() == "error: match 2 failed: RuntimeError: boom"


def test_the_root_command_lists_every_command_in_order() -> None:
    """The commands come from one sub-app per module; none may be dropped on the way."""
    import typer

    root = typer.main.get_command(app)
    assert list(root.commands) == [
        *("run", "resume", "games", "batches", "delete", "show", "replay", "report", "compare"),
        *("export", "import", "verify"),
        *("serve", "worker", "submit", "status", "tune", "check-game", "new-game"),
        *("db", "study", "docs"),
    ]
    db = root.commands["db"]
    assert list(db.commands) == ["upgrade"]
    for name in root.commands:
        shown = runner.invoke(app, [name, "--help"])
        assert shown.exit_code == 0 and "Usage: playtester " + name in shown.stdout, name


def test_run_and_submit_describe_a_batch_with_the_same_options() -> None:
    """The eleven options that describe a batch read and explain the same in both commands."""
    import typer

    root = typer.main.get_command(app)

    def batch_options(command: str) -> dict[str, tuple[tuple[str, ...], str | None]]:
        params = root.commands[command].params  # type: ignore[attr-defined]
        return {p.name: (tuple(p.opts), getattr(p, "help", None)) for p in params}

    run, submit = batch_options("run"), batch_options("submit")
    shared = {
        *("game", "agents", "players", "matches", "seed", "seat_policy", "option"),
        *("option_file", "max_plies", "chunk_size", "stop"),
    }
    assert shared <= set(run) & set(submit)
    assert {name: run[name] for name in shared} == {name: submit[name] for name in shared}


def _words(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def test_every_command_shows_its_summary_as_written() -> None:
    """A help text is printed with rich markup, where ``[name]`` is a style tag and vanishes
    unless escaped: each command's first paragraph must reach its ``--help`` word for word."""
    import typer

    root = typer.main.get_command(app)
    paths = [[name] for name in root.commands]
    paths += [
        [group, name]
        for group, command in root.commands.items()
        for name in getattr(command, "commands", {})
    ]
    for path in paths:
        command = root
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
        summary = (command.help or "").split("\n\n")[0].replace("\\[", "[")
        shown = runner.invoke(app, [*path, "--help"], terminal_width=100)
        assert _words(summary) in _words(shown.stdout), " ".join(path)
