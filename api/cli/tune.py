"""``tune``: search a game's options for the fairest variant, each trial a batch (here or on
a server), then confirm the best one (see :mod:`workers.studies.tuning`)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from analysis.studies.definition import load_study
from api.cli.common import DbOption, err, fail, open_db, out, settings_for, user_errors
from api.cli.run import progress_runner
from api.cli.service import KeyOption, client_for, service_error
from api.cli.study import Service, StudyFile, Workers
from api.client import ServiceError
from storage.tuning import optuna_storage
from workers.studies.plan import plan_study
from workers.studies.remote import trial_on_service
from workers.studies.results import CHECKPOINT_MINUTES, results_folder
from workers.studies.runner import trial_here
from workers.studies.search import (
    Confirmed,
    SearchError,
    SearchResult,
    check_search_on_server,
    plan_search,
    run_search,
)
from workers.studies.tune_results import KeptBatches, trials_file
from workers.studies.tuning import TuneSpec, parse_tune

if TYPE_CHECKING:
    from storage.archive import ExportSummary

app = typer.Typer()


def _kept(summary: ExportSummary) -> None:
    err.print(
        f"kept {summary.matches:,} matches in {summary.path} ({summary.bytes:,} bytes)",
        highlight=False,
    )


def _figure(confirmed: Confirmed) -> str:
    f = confirmed.report["first_player_advantage"]
    return (
        f"{f['estimate'] * 100:+.2f} % [{f['ci_low'] * 100:+.2f}, {f['ci_high'] * 100:+.2f}] "
        f"(95 %, {f['interval']}; p = {f['p_value']:.3g}; batch {confirmed.batch_id}, "
        f"{confirmed.report['batch']['matches_done']:,} matches)"
    )


def _print(spec: TuneSpec, result: SearchResult) -> None:
    lines = [f"{result.trials} trials, {result.pruned} stopped as clearly unfair"]
    for r in result.reranked:
        screened, again = r.screened, r.first_player_advantage
        lines.append(
            f"trial {r.trial}: {screened['estimate'] * 100:+.2f} % screened, "
            f"{again['estimate'] * 100:+.2f} % re-ranked (batch {r.batch_id})"
        )
    lines.append(f"best {spec.option}: first-player advantage {_figure(result.best)}")
    if result.base is not None:
        lines.append(f"base {spec.option}: first-player advantage {_figure(result.base)}")
    lines.append(f"best {spec.option}: {json.dumps(result.best.value)}")
    for line in lines:
        out.print(line, highlight=False, soft_wrap=True)


@app.command()
def tune(
    path: StudyFile,
    service: Service = None,
    api_key: KeyOption = None,
    workers: Workers = None,
    out_file: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the result (best value, figures) as JSON here."),
    ] = None,
    confirm_base: Annotated[
        bool, typer.Option(help="Confirm the base variant too, with as many matches.")
    ] = True,
    db: DbOption = None,
) -> None:
    """Search a study's \\[tune] option for the smallest first-player advantage."""
    with user_errors(db):
        # The whole file, every kind of batch the search makes, and the server's own check
        # of them come first: nothing is stored (no batch, no Optuna study) before.
        study = load_study(path)
        spec = parse_tune(study)
        settings = settings_for(db)
        plan_study(study, settings)
        search = plan_search(study, spec, settings)
    announce = lambda line: err.print(line, highlight=False)  # noqa: E731
    trials = trials_file(study)
    if service is None:
        with user_errors(db):
            engine = open_db(db)
            kept = KeptBatches(
                engine,
                study,
                lambda batch_id, progress: progress_runner(batch_id, workers, db, progress),
                every=CHECKPOINT_MINUTES * 60,
                saved=_kept,
            )
            runner = kept.runner(trial_here(engine, kept.play, spec.check_every))
            storage = optuna_storage(settings)
            try:
                result = run_search(
                    search, settings, runner, storage, announce, confirm_base, trials
                )
            except SearchError as exc:
                fail(str(exc))
            except KeyboardInterrupt:
                err.print(
                    f"\ninterrupted; finished trials and kept batches are in "
                    f"{results_folder(study)}. Continue (here or elsewhere) with:\n"
                    f"  playtester tune {shlex.quote(str(path))}"
                )
                raise typer.Exit(130) from None
    else:
        with client_for(service, api_key) as client:
            try:
                with user_errors(db):
                    check_search_on_server(search, client)
                    storage = optuna_storage(settings)
                runner = trial_on_service(client, spec.check_every)
                result = run_search(
                    search, settings, runner, storage, announce, confirm_base, trials
                )
            except ServiceError as exc:
                service_error(exc)
            except SearchError as exc:
                fail(str(exc))
    _print(spec, result)
    if out_file is not None:
        document = result.document(str(path), spec.option)
        out_file.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        out.print(f"wrote {out_file}", highlight=False)
