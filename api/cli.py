"""The ``playtester`` command line: run batches locally, list and inspect them, replay matches.

Service commands (``api.cli_service``) and report commands (``api.cli_reports``) register on
the same Typer ``app`` at the end of this module.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from sqlalchemy import Engine, select
from sqlalchemy.exc import SQLAlchemyError

from analysis.report import build_report
from api.cli_tables import agents_table, describe_batch, seat_table, shape_table
from engines.core import GameError, OptionError
from engines.core import replay as replay_moves
from engines.registry import describe_games, load_game
from engines.seating import seat_agents, seating_design
from storage import crud
from storage.db import ensure_schema, get_engine, safe_url, upgrade
from storage.models import BatchStatus

app = typer.Typer(
    name="playtester",
    help="Answer board-game balance questions with large batches of computer-vs-computer matches.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
db_app = typer.Typer(help="Database schema commands.", no_args_is_help=True)
app.add_typer(db_app, name="db")

out = Console()
err = Console(stderr=True)

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Database URL (default: DATABASE_URL, else ./playtester.db)."),
]


# --------------------------------------------------------------------------- errors


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one red ``error:`` line on stderr and exit with ``code``."""
    err.print(f"[red]error:[/red] {message}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(code)


def describe_error(exc: BaseException, url: str | None = None) -> str | None:
    """The one-line message for an error a user can fix, or None for a genuine bug."""
    if isinstance(exc, GameError | crud.NotFound):
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, SQLAlchemyError | ModuleNotFoundError | FileNotFoundError):
        where = safe_url(url)
        if isinstance(exc, ModuleNotFoundError) and "psycopg" in str(exc):
            return f"PostgreSQL needs psycopg: pip install 'playtester[postgres]' ({where})"
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
        try:
            options[key.strip()] = json.loads(Path(path).read_text())
        except OSError as exc:
            raise OptionError(f"cannot read {path!r}: {exc.strerror}", field="options") from exc
        except ValueError as exc:
            raise OptionError(f"{path!r} is not JSON: {exc}", field="options") from exc
    return options


def parse_stop(text: str | None) -> dict[str, Any] | None:
    """``--stop`` text (JSON, or the short form of ``analysis.sprt.parse_stop_rule``)."""
    if text is None:
        return None
    from analysis.sprt import parse_stop_rule

    return parse_stop_rule(text)


# --------------------------------------------------------------------------- rendering


def progress_runner(batch_id: str, workers: int | None, url: str | None) -> crud.Progress:
    """``run_local`` with a rich progress bar (done/failed, rate, ETA)."""
    from workers.local import run_local

    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("failed {task.fields[failed]}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err, transient=False) as bar:
        task = bar.add_task("matches", total=None, failed=0, rate="")

        first: list[tuple[float, int]] = []

        def show(p: crud.Progress) -> None:
            # The rate of this session: a resumed batch's stored start may be days old.
            now = time.monotonic()
            if not first:
                first.append((now, p.finished_matches))
            since, base = first[0]
            played = p.finished_matches - base
            rate = f"{played / (now - since):.1f}/s" if played and now > since else ""
            bar.update(task, total=p.matches, completed=p.finished_matches, failed=p.failed)
            bar.update(task, rate=rate)

        return run_local(batch_id, workers=workers, database_url=url, progress=show)


def finish_report(engine: Engine, batch_id: str, url: str | None) -> None:
    """Status line, seat balance, agent scores, and how to look further."""
    batch = crud.get_batch(engine, batch_id)
    assert batch is not None
    p = crud.progress(engine, batch_id)
    out.print(
        f"batch [bold]{batch.id}[/bold]: {batch.status}, {p.done} played, {p.failed} failed"
        + (f" — first error: {batch.error}" if batch.error else "")
    )
    report = build_report(engine, batch.id)
    out.print(seat_table(report))
    if len({json.dumps(a, sort_keys=True) for a in batch.agents}) > 1:
        out.print(agents_table(report))
    db_hint = f" --db '{safe_url(url)}'" if url else ""
    out.print(
        f"More: playtester show {batch.id}{db_hint}  ·  playtester replay {batch.id} 0{db_hint}"
        f"\nSQL: seat_result / match / chunk tables, WHERE batch_id = '{batch.id}'"
    )


def warn_incomplete_seating(players: int, policy: str, matches: int) -> None:
    """One warning line when the batch's size leaves its seating design incomplete."""
    design = seating_design(players, policy, matches)
    if not design.complete:
        err.print(f"[yellow]warning:[/yellow] {design.note}", highlight=False)


# --------------------------------------------------------------------------- commands


@app.command()
def run(
    game: Annotated[str, typer.Argument(help="Game name (see `playtester games`).")],
    agents: Annotated[
        str,
        typer.Option(
            "--agents",
            "-a",
            help="Agents by seat, comma-separated; parameters after a colon: "
            "hard,mcts:iterations=200,exploration=1.2. One agent plays every seat.",
        ),
    ],
    players: Annotated[
        int | None,
        typer.Option(help="Players (default: number of agents if >1, else the game minimum)."),
    ] = None,
    matches: Annotated[int, typer.Option("--matches", "-n", help="Matches to play.")] = 100,
    seed: Annotated[int | None, typer.Option(help="Batch seed (default: random).")] = None,
    seat_policy: Annotated[
        str | None,
        typer.Option(help="balanced (default when agents differ), rotate or fixed."),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="Game option key=value (JSON values allowed)."),
    ] = None,
    option_file: Annotated[
        list[str] | None,
        typer.Option("--option-file", help="Game option key=path.json (value read from file)."),
    ] = None,
    max_plies: Annotated[
        int | None, typer.Option(help="Ply cap; a match reaching it is a draw.")
    ] = None,
    chunk_size: Annotated[
        int | None,
        typer.Option(help="Matches per chunk (default: measured, ~CHUNK_SECONDS of work)."),
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", "-w", help="Processes (default: all cores).")
    ] = None,
    stop: Annotated[
        str | None,
        typer.Option(help="Stopping rule: sprt:A,B,elo0=0,elo1=5[,alpha=0.05,beta=0.05] or JSON."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Play a batch of matches on this machine and print the seat balance."""
    from workers.batches import plan_batch

    with user_errors(db):
        if workers is not None and workers < 1:
            raise OptionError("--workers must be at least 1", field="workers")
        plan = plan_batch(
            game=game,
            players=players,
            options=parse_options(option or [], option_file or []),
            agents=split_agents(agents),
            matches=matches,
            seed=seed,
            seat_policy=seat_policy,
            chunk_size=chunk_size,
            max_plies=max_plies,
            stop_rule=parse_stop(stop),
        )
        engine = open_db(db)
        batch = crud.create_batch(engine, plan=plan)
        err.print(f"batch [bold]{batch.id}[/bold] — {describe_batch(batch)}", highlight=False)
        warn_incomplete_seating(batch.players, batch.seat_policy, batch.matches)
        _play(engine, batch.id, workers, db)


@app.command()
def resume(
    batch_id: Annotated[str, typer.Argument(help="Batch id or a unique prefix of it.")],
    workers: Annotated[
        int | None, typer.Option("--workers", "-w", help="Processes (default: all cores).")
    ] = None,
    db: DbOption = None,
) -> None:
    """Play only the missing matches of an interrupted batch."""
    with user_errors(db):
        engine = open_db(db)
        full = crud.resolve_batch_id(engine, batch_id)
        batch = crud.get_batch(engine, full)
        assert batch is not None
        if batch.status in BatchStatus.FINISHED:
            err.print(f"batch {full} is already {batch.status}; nothing to resume")
        else:
            err.print(f"resuming batch [bold]{full}[/bold] — {describe_batch(batch)}")
        _play(engine, full, workers, db)


def _play(engine: Engine, batch_id: str, workers: int | None, url: str | None) -> None:
    try:
        progress_runner(batch_id, workers, url)
    except KeyboardInterrupt:
        db_hint = f" --db '{safe_url(url)}'" if url else ""
        err.print(
            f"\ninterrupted; finished chunks are saved. Continue with:\n"
            f"  playtester resume {batch_id}{db_hint}"
        )
        raise typer.Exit(130) from None
    finish_report(engine, batch_id, url)


@app.command()
def games() -> None:
    """List games, their options, and the agents (with parameters) that can play them."""
    with user_errors():
        for g in describe_games():
            lo, hi = g["players"]
            span = str(lo) if lo == hi else f"{lo}–{hi}"
            out.print(f"[bold]{g['name']}[/bold] — {g['long_name']} ({span} players)")
            if g["description"]:
                out.print(f"  {g['description']}", highlight=False)
            for o in g["options"]:
                choices = f" one of {o['choices']}" if "choices" in o else ""
                out.print(
                    f"  option {o['name']} ({o['type']}, default {o['default']!r}{choices}): "
                    f"{o['doc']}",
                    highlight=False,
                )
            for a in g["agents"]:
                out.print(f"  agent [cyan]{a['name']}[/cyan]: {a['description']}", highlight=False)
                for p in a["params"]:
                    out.print(
                        f"      {p['name']} ({p['type']}, default {p['default']!r}): {p['doc']}",
                        highlight=False,
                    )


@app.command()
def batches(
    game: Annotated[str | None, typer.Option(help="Only batches of this game.")] = None,
    status: Annotated[str | None, typer.Option(help="Only batches in this status.")] = None,
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 50,
    db: DbOption = None,
) -> None:
    """List batches with their status and progress."""
    with user_errors(db):
        engine = open_db(db)
        found = crud.list_batches(engine, game=game, status=status, limit=limit)
        if not found:
            out.print("no batches yet; start one with `playtester run`")
            return
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        for name in ("id", "created", "game", "status", "progress"):
            table.add_column(name, no_wrap=True)
        table.add_column("agents", overflow="fold", ratio=1, min_width=12)
        for b in found:
            p = crud.progress(engine, b.id)
            failed = f", {p.failed} failed" if p.failed else ""
            table.add_row(
                b.id,
                b.created_at.strftime("%m-%d %H:%M"),
                f"{b.game}/{b.players}",
                b.status,
                f"{p.done + p.failed}/{b.matches}{failed}",
                " vs ".join(b.labels),
            )
        out.print(table)


@app.command()
def show(
    batch_id: Annotated[str, typer.Argument(help="Batch id or a unique prefix of it.")],
    db: DbOption = None,
) -> None:
    """Seat balance, agent scores, game length and how games ended, for one batch."""
    with user_errors(db):
        engine = open_db(db)
        batch = crud.get_batch(engine, crud.resolve_batch_id(engine, batch_id))
        assert batch is not None
        p = crud.progress(engine, batch.id)
        out.print(f"batch [bold]{batch.id}[/bold] — {describe_batch(batch)}", highlight=False)
        rate = f", {p.rate:.1f} matches/s" if p.rate else ""
        out.print(f"status {batch.status}: {p.done} played, {p.failed} failed of {p.matches}{rate}")
        if batch.error:
            out.print(f"first error: {batch.error}", highlight=False)
        if batch.stopped_early:
            out.print(f"stopped early: {json.dumps(batch.decision)}", highlight=False)
        report = build_report(engine, batch.id)
        out.print(seat_table(report))
        out.print(agents_table(report))
        out.print(shape_table(report))


@app.command()
def replay(
    batch_id: Annotated[str, typer.Argument(help="Batch id or a unique prefix of it.")],
    match_index: Annotated[int, typer.Argument(help="Match index within the batch (from 0).")],
    check: Annotated[
        bool,
        typer.Option(help="Also re-play the match from its seed and compare the moves."),
    ] = True,
    db: DbOption = None,
) -> None:
    """Print a stored match's moves (numbered, with who moved) and its final position."""
    from workers.play import play_chunk

    with user_errors(db):
        engine = open_db(db)
        batch = crud.get_batch(engine, crud.resolve_batch_id(engine, batch_id))
        assert batch is not None
        with engine.connect() as conn:
            t = crud.MATCH
            row = conn.execute(
                select(t).where(t.c.batch_id == batch.id, t.c.match_index == match_index)
            ).first()
        if row is None:
            raise crud.NotFound(f"batch {batch.id} has no stored match {match_index}")
        if not row.ok:
            fail(f"match {match_index} failed: {row.error}", code=1)
        game = load_game(batch.game, players=batch.players, **batch.options)
        moves = row.moves.split() if row.moves else []
        order = seat_agents(len(batch.agents), batch.seat_policy, match_index)
        seats = [batch.labels[a] for a in order]
        out.print(
            f"match {match_index} of batch {batch.id}, seed {row.seed}: "
            + ", ".join(f"seat {s} {label}" for s, label in enumerate(seats)),
            highlight=False,
        )
        state = replay_moves(game, [], seed=row.seed)
        for ply, text in enumerate(moves, start=1):
            seat = state.current_player()
            state.apply_string(text)  # checked: raises IllegalActionError if not legal
            out.print(f"{ply:4d}. seat {seat} ({seats[seat]}): {text}", highlight=False)
        out.print(f"ended by {row.ended_by} after {row.plies} plies; final position:")
        out.print(str(state), highlight=False, markup=False)
        if check:
            again = play_chunk(batch, match_index, match_index + 1)[0]
            if list(again.moves) != moves:
                fail("re-playing the match from its seed gives different moves", code=1)
            out.print("re-played from its seed: same moves")


@db_app.command("upgrade")
def db_upgrade(db: DbOption = None) -> None:
    """Create the tables or upgrade them to the newest schema (Alembic migrations)."""
    with user_errors(db):
        upgrade(db)
        out.print(f"database {safe_url(db)} is at the newest schema")


def main() -> None:
    """Entry point of the ``playtester`` console script."""
    try:
        app(prog_name="playtester")
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except Exception as exc:
        message = describe_error(exc)
        if message is None:
            raise
        err.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
        sys.exit(2)


from api import cli_reports, cli_service  # noqa: E402,F401  (commands register on `app`)
