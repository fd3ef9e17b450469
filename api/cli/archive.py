"""``export``, ``import`` and ``verify``: batches as files that outlive the database, and a
check that stored matches replay from their seeds."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from api.cli.common import DbOption, err, fail, open_db, out, settings_for, user_errors
from storage import crud

app = typer.Typer()


@contextmanager
def archive_errors(url: str | None) -> Iterator[None]:
    """``user_errors``, and an archive that cannot be read or imported as one ``error:`` line."""
    from storage.archive import ArchiveError

    with user_errors(url):
        try:
            yield
        except ArchiveError as exc:
            fail(str(exc).replace("\n", " ")[:2000])


@app.command("export")
def export_(
    batch_ids: Annotated[
        list[str], typer.Argument(help="Batch ids (or unique prefixes) to export.")
    ],
    folder: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Folder to write into: one sub-folder per batch, named by its id."
        ),
    ],
    moves: Annotated[
        bool,
        typer.Option(
            help="Include each match's moves. Without them the files are smaller and the "
            "matches still replay from their seeds, but the imported report cannot count "
            "distinct games and `replay` has nothing to show."
        ),
    ] = True,
    db: DbOption = None,
) -> None:
    """Write whole batches (definition, chunks, matches, seat results) as Parquet files.

    Unfinished batches export too: after `playtester import`, `playtester resume` plays only
    the matches still missing. The same batch exported twice gives identical files.
    """
    # Imported here, as every command's heavy imports are: pyarrow loads only when used.
    from storage.archive import export_batch

    with archive_errors(db):
        engine = open_db(db)
        full = [crud.resolve_batch_id(engine, text) for text in batch_ids]
        for batch_id in full:
            done = export_batch(engine, batch_id, folder / batch_id, moves=moves)
            per_match = f", {done.bytes / done.matches:.0f} bytes a match" if done.matches else ""
            out.print(
                f"{done.batch_id}: {done.matches} matches in {done.chunks} chunks"
                f"{'' if moves else ' (no moves)'} → {done.path} ({done.bytes:,} bytes"
                f"{per_match})",
                highlight=False,
            )


def archive_folders(path: Path) -> list[Path]:
    """The batch folders ``path`` names: itself when it holds a manifest, else its
    sub-folders that do, in name order."""
    from storage.archive import MANIFEST

    if (path / MANIFEST).is_file():
        return [path]
    if not path.is_dir():
        fail(f"{path}: no such folder")
    found = sorted(p for p in path.iterdir() if (p / MANIFEST).is_file())
    if not found:
        fail(f"{path}: holds no exported batch (no {MANIFEST} in it or its sub-folders)")
    return found


@app.command("import")
def import_(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Exported batch folders, or folders holding them."),
    ],
    db: DbOption = None,
) -> None:
    """Merge exported batches into the database: adds what it lacks, changes nothing twice.

    Each archive is checked as the server checks an upload: its batch planned again, every
    row against that plan, every match's moves replayed through the rules and a sample with
    the agents. A batch stored here with a different definition, or queued or running here,
    is refused. Import a partial export and then a fuller one of the same batch to add the
    matches the first lacked.
    """
    from workers.imports import import_folder

    with archive_errors(db):
        engine = open_db(db)
        settings = settings_for(db)
        for folder in [f for p in paths for f in archive_folders(p)]:
            done = import_folder(engine, folder, settings=settings)
            got = done.summary
            news = "new" if got.created else "merged"
            extra = f", moves filled in for {got.moves_filled}" if got.moves_filled else ""
            skipped = f", {got.chunks_skipped} chunks already here" if got.chunks_skipped else ""
            out.print(
                f"{got.batch_id} ({news}, {got.status}): {got.matches_added} matches added in "
                f"{got.chunks_added} chunks{skipped}{extra}"
                f"{'' if got.moves else '; exported without moves'}; {done.describe()}",
                highlight=False,
            )


@app.command()
def verify(
    batch_id: Annotated[str, typer.Argument(help="Batch id or a unique prefix of it.")],
    sample: Annotated[
        int | None,
        typer.Option(
            "--sample",
            "-n",
            help="Matches to replay, drawn at random from the played ones (default 20).",
        ),
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Replay every played match.")] = False,
    match: Annotated[
        list[int] | None,
        typer.Option(
            "--match", "-m", min=0, help="Replay this match (its index; repeat for more)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random sample.")] = 0,
    db: DbOption = None,
) -> None:
    """Replay a random sample of a batch's matches from their seeds and compare every move
    and result with the stored ones; exits 1 on any difference, printing the first."""
    from workers.verify import DEFAULT_SAMPLE, verify_batch

    if sum((every, sample is not None, bool(match))) > 1:
        fail("give one of --sample, --all and --match")
    with user_errors(db):
        engine = open_db(db)
        batch = crud.find_batch(engine, batch_id)
        count = None if every else (DEFAULT_SAMPLE if sample is None else sample)
        verdict = verify_batch(engine, batch, sample=count, seed=seed, matches=match or ())
    checked = len(verdict.sampled)
    bare = f"; {verdict.without_moves} without stored moves" if verdict.without_moves else ""
    if verdict.ok:
        out.print(
            f"{batch.id}: {checked} of {verdict.played} played matches replayed as stored{bare}",
            highlight=False,
        )
        return
    bad = sorted({m.match_index for m in verdict.mismatches})
    err.print(f"[red]mismatch:[/red] {verdict.mismatches[0].describe()}", highlight=False)
    err.print(
        f"{batch.id}: {len(bad)} of {checked} replayed matches differ from the stored ones "
        f"(matches {', '.join(map(str, bad[:10]))}{' ...' if len(bad) > 10 else ''}){bare}",
        highlight=False,
    )
    raise typer.Exit(1)
