"""``study check|run|report``: a study file's batches run here or on a server, and its page.

A study (``studies/<name>.toml``, see :mod:`analysis.studies.definition`) is checked whole
before anything runs (on a server, by the server too). ``run`` plays what is missing and
reuses what already ran (found by the content key of each batch's definition); ``report``
writes the page from the stored batches. The work is done by ``workers.studies`` and
``analysis.studies``; this module parses arguments, shows progress and prints.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from analysis.studies.definition import Study, StudyError, load_study
from analysis.studies.page import LocalSource, render_page
from api.cli.common import DbOption, err, fail, open_db, out, settings_for, user_errors
from api.cli.run import progress_runner
from api.cli.service import DEFAULT_SERVER, KeyOption, client_for, service_error
from api.client import ServiceError
from workers.studies.plan import PlannedBatch, check_on_server, plan_study
from workers.studies.remote import find_on_service, run_on_service
from workers.studies.runner import StudyRun, find_here, run_here

app = typer.Typer(help="Study files: named sets of batches and the questions they answer.")

StudyFile = Annotated[Path, typer.Argument(help="A study file, e.g. studies/alquerque.toml.")]
Service = Annotated[
    str | None,
    typer.Option(
        "--service",
        help=f"Run on this playtester server (e.g. {DEFAULT_SERVER}) instead of this machine.",
    ),
]
Workers = Annotated[
    int | None, typer.Option("--workers", "-w", help="Processes here (default: all cores).")
]
OutDir = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Folder for the page (default: docs/studies)."),
]
DEFAULT_PAGES = Path("docs/studies")


def _load(path: Path, db: str | None) -> tuple[Study, list[PlannedBatch]]:
    with user_errors(db):
        study = load_study(path)
        return study, plan_study(study, settings_for(db))


def _announce(run: StudyRun) -> None:
    verb = {True: "new", False: "found", None: "sent"}[run.created]
    err.print(
        f"{run.name}: batch [bold]{run.batch_id}[/bold] ({verb}, {run.status})", highlight=False
    )


def _commands(path: Path, service: str | None) -> list[str]:
    where = f" --service {shlex.quote(service)}" if service else ""
    quoted = shlex.quote(str(path))
    return [f"playtester study run {quoted}{where}", f"playtester study report {quoted}{where}"]


@app.command("check")
def check(path: StudyFile, db: DbOption = None) -> None:
    """Check a study file without running anything: each batch as `playtester run` would."""
    study, planned = _load(path, db)
    total = sum(p.plan.matches for p in planned)
    out.print(
        f"{path}: {len(planned)} batches, {total:,} matches, {len(study.questions)} questions",
        highlight=False,
    )


@app.command("run")
def run(
    path: StudyFile,
    service: Service = None,
    api_key: KeyOption = None,
    workers: Workers = None,
    db: DbOption = None,
) -> None:
    """Run a study's batches (here, or on a server with --service), reusing those that ran."""
    study, planned = _load(path, db)
    if service is None:
        with user_errors(db):
            engine = open_db(db)
            runs = run_here(
                engine,
                planned,
                play=lambda batch_id: progress_runner(batch_id, workers, db),
                announce=_announce,
            )
    else:
        runs = _run_on_service(study, planned, service, api_key)
    failed = [r for r in runs if r.status != "done"]
    out.print(
        f"study {study.name}: {len(runs)} batches, "
        f"{sum(r.created is True for r in runs)} new; "
        f"page: playtester study report {shlex.quote(str(path))}"
        + (f" --service {shlex.quote(service)}" if service else ""),
        highlight=False,
    )
    if failed:
        fail(", ".join(f"{r.name} ({r.batch_id}) is {r.status}" for r in failed))


def _run_on_service(
    study: Study, planned: list[PlannedBatch], service: str, api_key: str | None
) -> list[StudyRun]:
    with client_for(service, api_key) as client:
        try:
            with user_errors():
                check_on_server(study, planned, client)
            columns = (
                TextColumn("[bold]matches"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
            )
            with Progress(*columns, console=err) as bar:
                task = bar.add_task("matches", total=sum(p.plan.matches for p in planned))
                return run_on_service(
                    client,
                    planned,
                    progress=lambda done, _total: bar.update(task, completed=done),
                    announce=_announce,
                )
        except ServiceError as exc:
            service_error(exc)
            raise AssertionError("unreachable") from exc


@app.command("report")
def report(
    path: StudyFile,
    out_dir: OutDir = None,
    service: Service = None,
    api_key: KeyOption = None,
    db: DbOption = None,
) -> None:
    """Write a study's page (Markdown with SVG plots) from its stored batches."""
    study, planned = _load(path, db)
    folder = out_dir or DEFAULT_PAGES
    if service is None:
        with user_errors(db):
            engine = open_db(db)
            ids = find_here(engine, planned)
            _require_all(study, planned, ids)
            page = render_page(study, ids, LocalSource(engine), _commands(path, None))
    else:
        with client_for(service, api_key) as client:
            try:
                ids = find_on_service(client, planned)
                _require_all(study, planned, ids)
                page = render_page(study, ids, client, _commands(path, service))
            except ServiceError as exc:
                service_error(exc)
                raise AssertionError("unreachable") from exc
            except StudyError as exc:
                fail(str(exc))
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{study.name}.md"
    target.write_text(page.markdown, encoding="utf-8")
    for name, svg in page.figures.items():
        (folder / name).write_text(svg, encoding="utf-8")
    out.print(
        f"wrote {target}" + (f" and {len(page.figures)} plots" if page.figures else ""),
        highlight=False,
    )


def _require_all(study: Study, planned: list[PlannedBatch], ids: dict[str, str]) -> None:
    missing = [p.batch.name for p in planned if p.batch.name not in ids]
    if missing:
        raise StudyError(
            study.path,
            study.batch(missing[0]).line,
            missing[0],
            f"not run yet ({len(missing)} of {len(planned)} batches missing); "
            f"run `playtester study run {study.path}` first",
        )
