"""``report`` and ``compare``: a batch's full report as a table, JSON, CSV or HTML, and the
differences between two batches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from api.cli.common import DbOption, fail, open_db, out, user_errors
from api.cli_tables import compare_table, report_tables
from storage import crud

app = typer.Typer()

FORMATS = ("table", "json", "csv", "html")


def _emit(text: str, out_file: Path | None) -> None:
    if out_file is None:
        typer.echo(text, nl=not text.endswith("\n"))
    else:
        out_file.write_text(text, encoding="utf-8")
        out.print(f"wrote {out_file}", highlight=False)


@app.command()
def report(
    batch_id: Annotated[str, typer.Argument(help="Batch id or a unique prefix of it.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, json, csv or html.")] = "table",
    out_file: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write to this file instead of stdout.")
    ] = None,
    db: DbOption = None,
) -> None:
    """A batch's full report: seats, agents, game shape, komi, game section, SPRT."""
    from analysis.report import build_report, to_csv

    if fmt not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    with user_errors(db):
        engine = open_db(db)
        result = build_report(engine, crud.resolve_batch_id(engine, batch_id))
    if fmt == "json":
        _emit(json.dumps(result, indent=2, allow_nan=False) + "\n", out_file)
    elif fmt == "csv":
        _emit(to_csv(result), out_file)
    elif fmt == "html":
        from analysis.render_html import render_html

        _emit(render_html(result), out_file)
    else:
        b = result["batch"]
        head = (
            f"batch [bold]{b['id']}[/bold] — {b['game']}, {b['players']} players: "
            f"{' vs '.join(b['labels'])}; {b['matches_done']:,} of {b['matches']:,} matches, "
            f"status {b['status']}" + (", stopped early" if b["stopped_early"] else "")
        )
        if out_file is None:
            out.print(head)
            for table in report_tables(result):
                out.print(table)
        else:
            from rich.console import Console

            with out_file.open("w", encoding="utf-8") as fh:
                file_console = Console(file=fh, width=120, color_system=None)
                file_console.print(head)
                for table in report_tables(result):
                    file_console.print(table)
            out.print(f"wrote {out_file}", highlight=False)


@app.command()
def compare(
    batch_a: Annotated[str, typer.Argument(help="First batch id (or unique prefix).")],
    batch_b: Annotated[str, typer.Argument(help="Second batch id (or unique prefix).")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json.")] = "table",
    db: DbOption = None,
) -> None:
    """Differences (a − b) of first-player advantage and seat shares, with intervals."""
    from analysis.compare import compare as compare_batches

    if fmt not in ("table", "json"):
        fail(f"--format must be table or json, not {fmt!r}")
    with user_errors(db):
        engine = open_db(db)
        full_a, full_b = (crud.resolve_batch_id(engine, b) for b in (batch_a, batch_b))
        result = compare_batches(engine, full_a, full_b)
    if fmt == "json":
        typer.echo(json.dumps(result, indent=2, allow_nan=False))
    else:
        out.print(compare_table(result))
