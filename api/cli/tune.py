"""``tune``: search a game's options for the fairest variant, each trial a batch (here or on
a server), then confirm the best one (see :mod:`api.cli.studies.tuning`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from api.cli.common import DbOption, err, fail, open_db, out, settings_for, user_errors
from api.cli.run import progress_runner
from api.cli.service import KeyOption, client_for, service_error
from api.cli.studies.definition import StudyError, load_study
from api.cli.studies.runner import trial_here, trial_on_service
from api.cli.studies.search import result_lines, run_search
from api.cli.studies.tuning import parse_tune
from api.cli.study import Service, StudyFile, Workers
from api.client import ServiceError
from storage.tuning import optuna_storage

app = typer.Typer()


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
    """Search a study's [tune] option for the smallest first-player advantage."""
    with user_errors(db):
        study = load_study(path)
        spec = parse_tune(study)
        settings = settings_for(db)
        from api.cli.studies.plan import plan_study

        plan_study(study, settings)  # the whole file is checked before anything runs
        storage = optuna_storage(settings.database_url)
    announce = lambda line: err.print(line, highlight=False)  # noqa: E731
    try:
        if service is None:
            with user_errors(db):
                engine = open_db(db)
                runner = trial_here(
                    engine,
                    lambda batch_id, progress: progress_runner(batch_id, workers, db, progress),
                    spec.check_every,
                )
                result = run_search(study, spec, settings, runner, storage, announce, confirm_base)
        else:
            with client_for(service, api_key) as client:
                runner = trial_on_service(client, spec.check_every)
                result = run_search(study, spec, settings, runner, storage, announce, confirm_base)
    except ServiceError as exc:
        service_error(exc)
    except (RuntimeError, StudyError) as exc:
        fail(str(exc))
    for line in result_lines(spec, result):
        out.print(line, highlight=False, soft_wrap=True)
    out.print(
        f"best {spec.option}: {json.dumps(result.best.value)}", highlight=False, soft_wrap=True
    )
    if out_file is not None:
        document = {
            "study": str(path),
            "option": spec.option,
            "best": {
                "value": result.best.value,
                "batch_id": result.best.batch_id,
                "first_player_advantage": result.best.report["first_player_advantage"],
            },
            "base": None
            if result.base is None
            else {
                "value": result.base.value,
                "batch_id": result.base.batch_id,
                "first_player_advantage": result.base.report["first_player_advantage"],
            },
            "trials": result.trials,
            "pruned": result.pruned,
        }
        out_file.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        out.print(f"wrote {out_file}", highlight=False)
