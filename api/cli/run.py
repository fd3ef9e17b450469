"""``run`` and ``resume``: play a batch on this machine with a progress bar, then print its
seat balance and agent scores."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Annotated, NoReturn

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from sqlalchemy import Engine

from analysis.report import build_report
from api.cli import batch_options as opts
from api.cli.common import (
    DbOption,
    err,
    open_db,
    out,
    settings_for,
    user_errors,
    warn_incomplete_seating,
)
from api.cli_tables import agents_table, describe_batch, seat_table
from engines.core import OptionError
from storage import crud
from storage.db import safe_url
from storage.models import BatchStatus

app = typer.Typer()


@app.command()
def run(
    ctx: typer.Context,
    game: opts.Game,
    agents: opts.Agents,
    players: opts.Players = None,
    matches: opts.Matches = opts.DEFAULT_MATCHES,
    seed: opts.Seed = None,
    seat_policy: opts.SeatPolicy = None,
    option: opts.Options = None,
    option_file: opts.OptionFiles = None,
    max_plies: opts.MaxPlies = None,
    time_control: opts.TimeControl = None,
    chunk_size: opts.ChunkSize = None,
    workers: Annotated[
        int | None, typer.Option("--workers", "-w", help="Processes (default: all cores).")
    ] = None,
    stop: opts.Stop = None,
    openings: opts.Openings = None,
    book: opts.Book = None,
    noise: opts.Noise = None,
    no_variation: opts.NoVariation = False,
    book_units: opts.BookUnits = None,
    db: DbOption = None,
) -> None:
    """Play a batch of matches on this machine and print the seat balance."""
    from workers.batches import plan_batch

    made: list[str] = []
    try:
        with user_errors(db):
            if workers is not None and workers < 1:
                raise OptionError("--workers must be at least 1", field="workers")
            plan = plan_batch(opts.batch_request(ctx.params), settings=settings_for(db))
            engine = open_db(db)
            batch = crud.create_batch(engine, plan=plan)
            made.append(batch.id)
            err.print(f"batch [bold]{batch.id}[/bold] — {describe_batch(batch)}", highlight=False)
            warn_incomplete_seating(batch.players, batch.seat_policy, batch.matches)
            _play(engine, batch.id, workers, db)
    except KeyboardInterrupt:
        _interrupted(made[0] if made else None, db)


@app.command()
def resume(
    batch_id: Annotated[str, typer.Argument(help="Batch id or a unique prefix of it.")],
    workers: Annotated[
        int | None, typer.Option("--workers", "-w", help="Processes (default: all cores).")
    ] = None,
    db: DbOption = None,
) -> None:
    """Play only the missing matches of an interrupted batch."""
    found: list[str] = []
    try:
        with user_errors(db):
            engine = open_db(db)
            batch = crud.find_batch(engine, batch_id)
            found.append(batch.id)
            if batch.status in BatchStatus.FINISHED:
                err.print(f"batch {batch.id} is already {batch.status}; nothing to resume")
            else:
                err.print(f"resuming batch [bold]{batch.id}[/bold] — {describe_batch(batch)}")
            _play(engine, batch.id, workers, db)
    except KeyboardInterrupt:
        _interrupted(found[0] if found else None, db)


def _play(engine: Engine, batch_id: str, workers: int | None, url: str | None) -> None:
    progress_runner(batch_id, workers, url)
    finish_report(engine, batch_id, url)


def _interrupted(batch_id: str | None, url: str | None) -> NoReturn:
    """Ctrl-C anywhere in ``run`` or ``resume``: each chunk is stored whole or not at all, so
    say how to go on (or that nothing was played yet) and exit 130."""
    if batch_id is None:
        err.print("\ninterrupted; nothing was played")
    else:
        db_hint = f" --db '{safe_url(url)}'" if url else ""
        err.print(
            f"\ninterrupted; finished chunks are saved. Continue with:\n"
            f"  playtester resume {batch_id}{db_hint}"
        )
    raise typer.Exit(130)


def progress_runner(
    batch_id: str,
    workers: int | None,
    url: str | None,
    also: Callable[[crud.Progress], None] | None = None,
) -> crud.Progress:
    """``run_local`` with a rich progress bar (done/failed, rate, ETA); ``also`` is called
    with each progress too."""
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
            if also is not None:
                also(p)

        return run_local(batch_id, settings=settings_for(url), workers=workers, progress=show)


def finish_report(engine: Engine, batch_id: str, url: str | None) -> None:
    """Status line, seat balance, agent scores, and how to look further."""
    batch = crud.find_batch(engine, batch_id)
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
