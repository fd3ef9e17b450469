"""``study check|plan|run|verify|report``: a study file's batches planned, run here or on a
server, checked, and its page.

A study (``studies/<name>.toml``, see :mod:`analysis.studies.definition`) is checked whole
before anything runs (on a server, by the server too). ``run`` imports the study's results
files, plays what is missing and saves the results as it goes (``workers.studies.results``);
``verify`` replays a sample of them; ``report`` writes the page and its JSON twin from them
alone; ``plan`` times a short calibration (``workers.studies.calibrate``). The work is done by
``workers.studies`` and ``analysis.studies``; this module parses arguments, shows progress and
prints.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy import Engine

from analysis.formatting import counted
from analysis.ladder.results import LadderFileError
from analysis.studies.definition import Study, StudyError, load_study
from analysis.studies.index import update_index
from analysis.studies.levels import LevelsInput
from analysis.studies.page import LocalSource, render_page
from api.cli.common import DbOption, err, fail, open_db, out, settings_for, user_errors
from api.cli.run import progress_runner
from api.cli.service import DEFAULT_SERVER, KeyOption, client_for, service_error
from api.client import ServiceError
from engines.core import OptionError
from storage import crud
from storage.queries import play_seconds
from workers.studies.plan import PlannedBatch, check_on_server, plan_study
from workers.studies.remote import OnService, archive_fetch, find_on_service, run_on_service
from workers.studies.results import (
    CHECKPOINT_MINUTES,
    Checkpoints,
    Keeper,
    batch_folder,
    committed_ladder,
    exporter,
    has_results,
    recover,
    restore,
    restore_to,
    results_folder,
    save,
    throwaway_engine,
)
from workers.studies.runner import Restored, StudyRun, find_here, run_here
from workers.studies.tune_results import KEPT_PREFIX, read_search, search_input

if TYPE_CHECKING:
    from storage.archive import ExportSummary
    from workers.studies.calibrate import Estimate
    from workers.studies.search_plan import SearchEstimate

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
MKDOCS = Path("mkdocs.yml")
"""The site whose Studies section ``report`` keeps in step with the pages written to
``DEFAULT_PAGES`` (both relative to where the command runs: the repository's root)."""


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
    commands = [f"playtester study run {quoted}{where}", f"playtester study report {quoted}{where}"]
    return commands if service else [*commands, f"playtester study verify {quoted}"]


@app.command("check")
def check(path: StudyFile, db: DbOption = None) -> None:
    """Check a study file without running anything: each batch as `playtester run` would."""
    study, planned = _load(path, db)
    total = sum(p.plan.matches for p in planned)
    out.print(
        f"{path}: {counted(len(planned), 'batch', 'batches')}, "
        f"{counted(total, 'match', 'matches')}, {counted(len(study.questions), 'question')}",
        highlight=False,
    )


@app.command("plan")
def plan(
    path: StudyFile,
    calibration: Annotated[
        int,
        typer.Option(
            "--calibration",
            "-n",
            min=2,
            help="Matches played and timed per batch (its first ones, in this process).",
        ),
    ] = 4,
    cores: Annotated[
        int | None,
        typer.Option(min=1, help="Cores to turn CPU time into wall time (default: all here)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Time a short calibration of each batch and print the matches and CPU time each needs
    to reach its precision target (and, for a study that searches, each stage of the search),
    and the study's total against its CPU budget."""
    from workers.local import default_workers
    from workers.studies.calibrate import calibrate

    def timed(e: Estimate) -> None:
        compiled = f" (compiled in {e.compile_seconds:.0f} s)" if e.compile_seconds > 1 else ""
        err.print(
            f"{e.name}: {e.calibration} matches, {e.cpu_per_match:.3f} CPU s a match{compiled}",
            highlight=False,
        )

    study, planned = _load(path, db)
    with user_errors(db):
        estimates = calibrate(study, planned, calibration, announce=timed)
    for p, e in zip(planned, estimates, strict=True):
        out.print(plan_line(p, e), highlight=False, soft_wrap=True)
    seconds = sum(e.cpu_seconds for e in estimates)
    matches = sum(e.matches for e in estimates)
    if study.tune is not None:
        from workers.studies.search_plan import estimate_search

        with user_errors(db):
            searched = estimate_search(study, settings_for(db), calibration, announce=timed)
        for line in search_lines(searched):
            out.print(line, highlight=False, soft_wrap=True)
        seconds += searched.cpu_seconds
        matches += searched.matches
    total = seconds / 3600
    width = cores or default_workers()
    budget = study.budget_cpu_hours
    verdict = (
        "no budget stated (budget_cpu_hours)"
        if budget is None
        else f"{'within' if total <= budget else 'OVER'} its budget of {budget:g} CPU hours"
    )
    out.print(
        f"study {study.name}: {matches:,} matches, "
        f"{total:.2f} CPU hours ({total / width:.2f} hours on {width} cores): {verdict}",
        highlight=False,
        soft_wrap=True,
    )


def search_lines(searched: SearchEstimate) -> list[str]:
    """The search's plan, a line a stage: its batches, their matches and CPU time."""
    from workers.studies.search_plan import StageKind

    lines = []
    for stage in searched.stages:
        if stage.kind is StageKind.TRIALS:
            level = searched.spec.screen_agents or "the base batch's agents"
            how = f"at most {stage.matches:,} matches each, at {level}"
        elif stage.kind is StageKind.CONFIRMATIONS:
            target = searched.confirm.target
            how = (
                f"{stage.matches:,} matches each (±{target.half_width * 100:.1f} pt, "
                "its precision stop)"
                if target.stops and target.half_width is not None
                else f"{stage.matches:,} matches each"
            )
        else:
            how = f"{stage.matches:,} matches each"
        lines.append(
            f"search {stage.kind}: {stage.batches} × {how}; {stage.cpu_per_match:.3f} CPU s "
            f"a match, {stage.cpu_seconds / 3600:.2f} CPU hours"
        )
    return lines


def plan_line(p: PlannedBatch, e: Estimate) -> str:
    """One batch's plan: its calibration, its target, the matches it needs and will play."""
    target = e.target
    wanted = (
        "no target"
        if target.half_width is None
        else f"±{target.half_width * 100:.1f} pt needs {e.needed:,} matches"
    )
    rule = "its precision stop" if target.stops else "its matches"
    short = " (short of the target)" if e.reaches is False else ""
    return (
        f"{p.batch.name} ({' vs '.join(p.plan.labels)}): {e.cpu_per_match:.3f} CPU s a match, "
        f"sd {e.sd:.3f} a match; {target.figure} {wanted}; plays {e.matches:,} ({rule}) "
        f"→ ±{e.half_width * 100:.1f} pt{short}, {e.cpu_seconds / 3600:.2f} CPU hours"
    )


Checkpoint = Annotated[
    float,
    typer.Option(
        "--checkpoint",
        min=0.1,
        help="Minutes between saves of the batch being played to its results folder "
        "(it is saved too when it ends and on Ctrl-C).",
    ),
]
Moves = Annotated[
    bool,
    typer.Option(
        help="Keep each match's moves in the results. Without them the files are smaller "
        "and the matches still replay from their seeds, but the page cannot count distinct "
        "games."
    ),
]


@app.command("run")
def run(
    path: StudyFile,
    service: Service = None,
    api_key: KeyOption = None,
    workers: Workers = None,
    checkpoint: Checkpoint = CHECKPOINT_MINUTES,
    moves: Moves = True,
    db: DbOption = None,
) -> None:
    """Run a study's batches (here, or on a server with --service), reusing those that ran.

    The results go to studies/results/<study>/<batch>/ as they are played (partial batches
    too), and what is there is brought in first (imported here; with --service, uploaded to
    a server that lacks the batch): a study stopped anywhere goes on from those files, on this
    machine, another or a server, with a new database.
    """
    study, planned = _load(path, db)
    if service is None:
        runs = _run_here(study, planned, path, workers, checkpoint * 60, moves, db)
    else:
        runs = _run_on_service(study, planned, path, service, api_key, checkpoint * 60, moves)
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


def _saved(summary: ExportSummary) -> None:
    err.print(
        f"saved {summary.matches:,} matches to {summary.path} ({summary.bytes:,} bytes)",
        highlight=False,
    )


def _run_here(
    study: Study,
    planned: list[PlannedBatch],
    path: Path,
    workers: int | None,
    every: float,
    moves: bool,
    db: str | None,
) -> list[StudyRun]:
    with user_errors(db):
        if workers is not None and workers < 1:
            raise OptionError("--workers must be at least 1", field="workers")
        engine = open_db(db)
        # The batch being played, saved once more on Ctrl-C wherever it lands: in a chunk, a
        # stop rule's check, a checkpoint, between batches or in the final saves.
        playing: list[Checkpoints] = []
        try:
            _restored(restore(engine, study, planned), "read from its results")

            def play(run: StudyRun) -> None:
                folder = batch_folder(study, run.name)
                points = Checkpoints(
                    exporter(engine, run.batch_id, moves=moves), folder, every=every, saved=_saved
                )
                playing[:] = [points]
                progress_runner(run.batch_id, workers, db, also=points.tick)
                points.save()

            runs = run_here(engine, planned, play=play, announce=_announce)
            for r in runs:
                folder = batch_folder(study, r.name)
                if not has_results(folder):
                    _saved(save(engine, r.batch_id, folder, moves=moves))
        except KeyboardInterrupt:
            saved = _save_interrupted(playing, [batch_folder(study, p.batch.name) for p in planned])
            _interrupted(study, path, None, saved=saved)
        return runs


def _save_interrupted(playing: list[Checkpoints], folders: list[Path]) -> bool:
    """Save the batch that was playing (if any) after Ctrl-C; False when a second Ctrl-C
    stopped that save. Either way no results folder is left half-written: a save stopped
    midway is finished or undone (``recover``), so each holds its last whole save."""
    try:
        for points in playing:
            points.save()
        return True
    except KeyboardInterrupt:
        return False
    finally:
        for folder in folders:
            recover(folder)


def _restored(restored: list[Restored], how: str) -> None:
    for got in restored:
        err.print(
            f"{got.name}: batch [bold]{got.batch_id}[/bold] {how} "
            f"({got.matches_added:,} matches added, {got.status})",
            highlight=False,
        )


def _interrupted(study: Study, path: Path, service: str | None, *, saved: bool = True) -> NoReturn:
    where = f" --service {shlex.quote(service)}" if service else ""
    playing = " (the server goes on playing)" if service else ""
    how = "results saved in" if saved else "stopped before the last save; earlier results are in"
    err.print(
        f"\ninterrupted; {how} {results_folder(study)}{playing}. Continue "
        f"(here or elsewhere) with:\n  playtester study run {shlex.quote(str(path))}{where}"
    )
    raise typer.Exit(130)


def _run_on_service(
    study: Study,
    planned: list[PlannedBatch],
    path: Path,
    service: str,
    api_key: str | None,
    every: float,
    moves: bool,
) -> list[StudyRun]:
    """The study on a server: its batches checked there, the results folders of the batches
    it lacks uploaded, the batches submitted and watched, and each saved to its folder as it
    plays (every ``every`` seconds, when it ends, on Ctrl-C)."""
    from storage.archive import ArchiveError

    with client_for(service, api_key) as client:
        try:
            with user_errors():
                check_on_server(study, planned, client)
                _restored(restore_to(OnService(client), study, planned), "sent from its results")
            keeper = Keeper(study, archive_fetch(client, moves=moves), every=every, saved=_saved)
            columns = (
                TextColumn("[bold]matches"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
            )
            with user_errors(), Progress(*columns, console=err) as bar:
                task = bar.add_task("matches", total=sum(p.plan.matches for p in planned))
                try:
                    return run_on_service(
                        client,
                        planned,
                        progress=lambda done, _total: bar.update(task, completed=done),
                        announce=_announce,
                        polled=keeper.polled,
                    )
                except KeyboardInterrupt:
                    bar.stop()
                    keeper.save_all()
                    _interrupted(study, path, service)
        except ServiceError as exc:
            service_error(exc)
        except ArchiveError as exc:
            fail(f"a batch's archive from {service} was not saved: {exc}")
        raise AssertionError("unreachable")


def _levels(study: Study) -> LevelsInput | None:
    """The game's committed ladder for the page; a file that is not a ladder's is one error."""
    try:
        return committed_ladder(study)
    except LadderFileError as exc:
        fail(f"the strength ladder's file: {exc}")
        raise AssertionError("unreachable") from exc


@app.command("report")
def report(
    path: StudyFile,
    out_dir: OutDir = None,
    service: Service = None,
    api_key: KeyOption = None,
) -> None:
    """Write a study's page (Markdown with SVG plots) and its JSON twin from its results.

    The results in studies/results/<study>/ are read into a temporary database of the
    command's own: no database is needed, and the same results always give the same files.
    With --service, the page is written from the server's batches instead.
    """
    study, planned = _load(path, None)
    folder = out_dir or DEFAULT_PAGES
    commands = _commands(path, service)
    if service is None:
        with user_errors(), throwaway_engine() as engine:
            ids = _from_results(engine, study, planned)
            _require_all(study, planned, ids)
            seconds = {name: play_seconds(engine, batch_id) for name, batch_id in ids.items()}
            search = search_input(engine, study)
            page = render_page(
                study, ids, LocalSource(engine), commands, seconds, search, _levels(study)
            )
    else:
        with client_for(service, api_key) as client:
            try:
                ids = find_on_service(client, planned)
                _require_all(study, planned, ids)
                page = render_page(study, ids, client, commands, levels=_levels(study))
            except ServiceError as exc:
                service_error(exc)
                raise AssertionError("unreachable") from exc
            except StudyError as exc:
                fail(str(exc))
    target = page.write(folder, study.name)
    if folder.resolve() == DEFAULT_PAGES.resolve() and MKDOCS.is_file():
        update_index(folder, MKDOCS)
    out.print(
        f"wrote {target}, its JSON twin"
        + (f" and {len(page.figures)} plots" if page.figures else ""),
        highlight=False,
    )


def _from_results(engine: Engine, study: Study, planned: list[PlannedBatch]) -> dict[str, str]:
    """The study's batches read from its results folder into ``engine``: name -> batch id."""
    restore(engine, study, planned)
    return find_here(engine, planned)


def _require_all(study: Study, planned: list[PlannedBatch], ids: dict[str, str]) -> None:
    """A page needs one batch with results; the page of a study still playing marks the
    batches that have none yet as not yet played."""
    missing = [p.batch.name for p in planned if p.batch.name not in ids]
    if len(missing) == len(planned):
        raise StudyError(
            study.path,
            study.batch(missing[0]).line,
            missing[0],
            f"not run yet: no results in {batch_folder(study, missing[0])} "
            f"({len(missing)} of {len(planned)} batches missing); "
            f"run `playtester study run {study.path}` first",
        )


@app.command("verify")
def verify(
    path: StudyFile,
    sample: Annotated[
        int | None,
        typer.Option(
            "--sample",
            "-n",
            min=1,
            help="Matches to replay per batch, drawn at random among all "
            "[default: 10 decided and 10 drawn].",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random sample.")] = 0,
) -> None:
    """Replay a random sample of each batch's matches from the study's results, its search's
    re-rankings and confirmations included, and compare every move and result with the
    stored ones; exits 1 on any difference."""
    study, planned = _load(path, None)
    bad = 0
    with user_errors(), throwaway_engine() as engine:
        ids = _from_results(engine, study, planned)
        search = read_search(engine, study)
        kept = {
            KEPT_PREFIX + name: batch_id
            for name, batch_id in (search.kept if search else {}).items()
        }
        if not ids and not kept:
            fail(f"{study.name}: no batch has results in {results_folder(study)} yet")
        for p in planned:
            name = p.batch.name
            if name not in ids:
                out.print(f"{name}: no results yet", highlight=False)
                continue
            bad += not _replays(engine, name, ids[name], sample, seed)
        for name, batch_id in kept.items():
            bad += not _replays(engine, name, batch_id, sample, seed)
    if bad:
        raise typer.Exit(1)


def _replays(engine: Engine, name: str, batch_id: str, sample: int | None, seed: int) -> bool:
    """Replay ``sample`` of the batch's matches (by default ``workers.verify``'s sample by
    result) and say what was found; False on a mismatch."""
    from workers.verify import DEFAULT_SAMPLE, verify_batch

    batch = crud.find_batch(engine, batch_id)
    verdict = verify_batch(engine, batch, sample=DEFAULT_SAMPLE if sample is None else sample,
                           seed=seed)  # fmt: skip
    if verdict.ok:
        out.print(
            f"{name} ({batch.id}): {len(verdict.sampled)} of {verdict.played} played "
            "matches replayed as stored",
            highlight=False,
        )
        return True
    err.print(
        f"[red]mismatch:[/red] {name} ({batch.id}): {verdict.mismatches[0].describe()}",
        highlight=False,
    )
    return False
