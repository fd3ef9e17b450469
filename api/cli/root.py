"""The root Typer app, assembled from one sub-app per module (listed in :mod:`api.cli`).

Kept apart from ``api.cli`` itself so that the console script's ``main`` is loaded before any
command module: loading them (SQLAlchemy, pandas, SciPy) takes seconds, and a Ctrl-C then is
a clean stop too.
"""

from __future__ import annotations

import typer

from api.cli import archive, authoring, batches, db, docs, reports, run, service, study, tune

app = typer.Typer(
    name="playtester",
    help="Answer board-game balance questions with large batches of computer-vs-computer matches.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
for commands in (
    run.app,
    batches.app,
    reports.app,
    archive.app,
    service.app,
    tune.app,
    authoring.app,
):
    app.add_typer(commands)  # no name: the commands sit at the top level
app.add_typer(db.app, name="db")
app.add_typer(study.app, name="study")
app.add_typer(docs.app, name="docs")

__all__ = ["app"]
