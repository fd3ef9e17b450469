"""Service commands: ``serve`` (the HTTP API), ``submit`` and ``status`` (talk to a server),
``worker`` (a Celery worker for distributed mode)."""

from __future__ import annotations

import sys
import time
from typing import Annotated, Any, NoReturn

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from api.cli import batch_options as opts
from api.cli.common import err, fail, out, user_errors, warn_incomplete_seating
from api.cli_tables import chunking
from api.client import ServiceClient, ServiceError
from storage.models import BatchStatus
from storage.settings import Settings, get_settings

app = typer.Typer()

DEFAULT_SERVER = "http://127.0.0.1:8000"

ServerOption = Annotated[
    str, typer.Option("--server", "-s", help="Base URL of the playtester API.")
]
KeyOption = Annotated[
    str | None,
    typer.Option("--api-key", help="Bearer key for writes (default: API_KEY).", show_default=False),
]


def client_for(server: str, api_key: str | None) -> ServiceClient:
    return ServiceClient(server, api_key=api_key or get_settings().api_key)


def service_error(exc: ServiceError) -> NoReturn:
    where = f" ({exc.field})" if exc.field else ""
    fail(f"{exc}{where}")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    processes: Annotated[int, typer.Option(help="uvicorn worker processes.")] = 1,
    migrate: Annotated[
        bool, typer.Option(help="Create or upgrade the database schema first.")
    ] = True,
) -> None:
    """Run the HTTP API (uvicorn). With BROKER_URL unset, batches run in local processes."""
    import uvicorn

    from storage.db import upgrade

    if migrate:
        with user_errors():
            upgrade()
    uvicorn.run(
        "api.app:app",
        host=host,
        port=port,
        workers=processes,
        log_level="info",
        **uvicorn_options(get_settings()),
    )


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """How uvicorn treats X-Forwarded-* headers: believed only from ``TRUSTED_PROXIES``.

    uvicorn's own default believes any proxy on 127.0.0.1, which is any local process.
    """
    if not settings.trusted_proxies:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": settings.trusted_proxies}


@app.command()
def worker(
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", "-c", help="Processes (default: all cores).")
    ] = None,
    loglevel: Annotated[str, typer.Option(help="Celery log level.")] = "info",
) -> None:
    """Start a Celery worker (same as `celery -A workers worker`); needs BROKER_URL."""
    if not get_settings().broker_url:
        fail("a worker needs BROKER_URL (e.g. redis://host:6379/0) and DATABASE_URL")
    from workers.celery_app import app as celery_app

    argv = ["worker", f"--loglevel={loglevel}"]
    if concurrency is not None:
        argv.append(f"--concurrency={concurrency}")
    celery_app.worker_main(argv)


@app.command()
def submit(
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
    stop: opts.Stop = None,
    openings: opts.Openings = None,
    book: opts.Book = None,
    noise: opts.Noise = None,
    no_variation: opts.NoVariation = False,
    book_units: opts.BookUnits = None,
    wait: Annotated[bool, typer.Option(help="Show progress until the batch ends.")] = False,
    idempotency_key: Annotated[
        str | None,
        typer.Option(
            help="Key sent with the submission (default: a fresh one); the same key and request "
            "again return the first batch instead of making another.",
            show_default=False,
        ),
    ] = None,
    server: ServerOption = DEFAULT_SERVER,
    api_key: KeyOption = None,
) -> None:
    """Submit a batch to a playtester server and print its id.

    Failures that may pass (no answer, 502/503/504) are retried a few times with the same
    Idempotency-Key, so a retry never makes a second batch.
    """
    with user_errors():
        body = opts.batch_request(ctx.params).body()
    with client_for(server, api_key) as client:
        try:
            batch = client.submit(body, idempotency_key=idempotency_key)
        except ServiceError as exc:
            service_error(exc)
        out.print(batch["id"])
        err.print(
            f"batch {batch['id']} queued: {batch['matches']} matches of {batch['game']}, "
            f"{chunking(batch['chunk_size'])}; follow it with "
            f"`playtester status {batch['id']} --server {server}`",
            highlight=False,
        )
        warn_incomplete_seating(batch["players"], batch["seat_policy"], batch["matches"])
        if wait:
            _follow(client, batch["id"])


def _status_text(batch: dict[str, Any]) -> str:
    """The batch's status, with why it waits when no worker can play it."""
    waiting = batch.get("waiting")
    return f"{batch['status']} — {waiting}" if waiting else str(batch["status"])


def _follow(client: ServiceClient, batch_id: str, interval: float = 1.0) -> dict[str, Any]:
    """Poll a batch and draw a progress bar (rate, ETA) until it ends."""
    batch = client.batch(batch_id)
    columns = (
        TextColumn("[bold]{task.fields[batch]}[/bold] {task.fields[status]}"),
        BarColumn(),
        TextColumn("{task.completed:,.0f}/{task.total:,.0f}"),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err, transient=not sys.stderr.isatty()) as bar:
        task = bar.add_task("", total=batch["matches"], batch=batch["id"], status="", rate="")
        while True:
            progress = batch.get("progress") or {}
            rate = progress.get("rate")
            bar.update(
                task,
                completed=progress.get("finished", 0),
                status=_status_text(batch),
                rate=f"{rate:,.0f} matches/s" if rate else "",
            )
            if batch["status"] in BatchStatus.FINISHED:
                break
            time.sleep(interval)
            batch = client.batch(batch_id)
    progress = batch.get("progress") or {}
    line = (
        f"batch {batch['id']} {batch['status']}: {progress.get('done', 0)} played, "
        f"{progress.get('failed', 0)} failed"
    )
    if batch.get("error"):
        line += f" — {batch['error']}"
    out.print(line, highlight=False)
    return batch


@app.command()
def status(
    batch_id: Annotated[str, typer.Argument(help="Batch id (or a unique prefix).")],
    server: ServerOption = DEFAULT_SERVER,
    api_key: KeyOption = None,
    follow: Annotated[bool, typer.Option(help="Show a progress bar until the batch ends.")] = True,
    interval: Annotated[float, typer.Option(help="Seconds between polls.")] = 1.0,
) -> None:
    """Progress of a batch on a server: a bar with rate and ETA until it is done."""
    with client_for(server, api_key) as client:
        try:
            if follow:
                batch = _follow(client, batch_id, interval)
            else:
                batch = client.batch(batch_id)
                progress = batch.get("progress") or {}
                line = f"{batch['id']} {batch['status']} {progress.get('finished', 0)}/"
                line += str(batch["matches"])
                if batch.get("waiting"):
                    line += f" — {batch['waiting']}"
                out.print(line, highlight=False)
        except ServiceError as exc:
            service_error(exc)
    if batch["status"] == "failed":
        raise typer.Exit(1)
