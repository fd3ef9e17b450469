"""Batches exported to files and imported again: the same report from a fresh database of
either dialect, byte-identical files, idempotent merges, ``resume`` after a partial import,
and archives that must be refused."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select, update
from typer.testing import CliRunner

from api.cli import app
from storage import crud
from storage.archive import ArchiveError, export_batch, import_batch, read_archive, read_batch
from storage.db import dispose_engine, get_engine, upgrade
from storage.models import BatchPlan
from storage.records import split_moves
from storage.settings import Settings
from workers.batches import plan_batch
from workers.chunks import run_chunk
from workers.local import run_local

runner = CliRunner()
MATCHES = 20
CHUNK = 5


@pytest.fixture
def source_url(tmp_path: Path) -> Iterator[str]:
    """A second SQLite database, apart from the ``sqlite_url`` the targets may use."""
    url = f"sqlite:///{tmp_path}/source.db"
    upgrade(url)
    yield url
    dispose_engine(url)


def plan() -> BatchPlan:
    return plan_batch(
        settings=Settings(),
        game="alquerque",
        players=None,
        options={},
        agents=["random", "mcts:iterations=4,backend=python"],
        matches=MATCHES,
        seed=11,
        seat_policy=None,
        chunk_size=CHUNK,
        max_plies=None,
    )


def partial_batch(url: str) -> str:
    """A batch with two of its four chunks played: [0, 5) and [10, 15)."""
    batch = crud.create_batch(get_engine(url), plan=plan())
    for start in (0, 10):
        run_chunk(batch.id, start, start + CHUNK, database_url=url, worker="source")
    return batch.id


def finish(url: str, batch_id: str) -> None:
    run_local(batch_id, settings=Settings(database_url=url), workers=1)


def reports(url: str, batch_id: str) -> tuple[str, str]:
    """The batch's report as ``playtester report`` prints it in JSON and in CSV."""
    texts = []
    for fmt in ("json", "csv"):
        result = runner.invoke(app, ["report", batch_id, "--format", fmt, "--db", url])
        assert result.exit_code == 0, result.output
        texts.append(result.stdout)
    return texts[0], texts[1]


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def counts(url: str, batch_id: str) -> tuple[int, int, int]:
    with get_engine(url).connect() as conn:
        return tuple(  # type: ignore[return-value]
            conn.execute(select(func.count()).where(t.c.batch_id == batch_id)).scalar_one()
            for t in (crud.CHUNK, crud.MATCH, crud.SEAT_RESULT)
        )


def test_round_trip_gives_the_same_report_and_the_same_files(
    source_url: str, db_url: str, tmp_path: Path
) -> None:
    batch_id = partial_batch(source_url)
    finish(source_url, batch_id)
    out = tmp_path / "out"
    result = runner.invoke(app, ["export", batch_id[:8], "-o", str(out), "--db", source_url])
    assert result.exit_code == 0, result.output
    folder = out / batch_id
    assert sorted(os.listdir(folder)) == [
        "batch.json",
        "chunks.parquet",
        "matches.parquet",
        "seats.parquet",
    ]
    result = runner.invoke(app, ["import", str(out), "--db", db_url])
    assert result.exit_code == 0, result.output
    assert f"{batch_id} (new, done): {MATCHES} matches added in 4 chunks" in result.stdout
    assert reports(db_url, batch_id) == reports(source_url, batch_id)
    # Exported again, from the other database and from the first: the very same bytes.
    again = export_batch(get_engine(db_url), batch_id, tmp_path / "again")
    assert folder_bytes(again.path) == folder_bytes(folder)
    twice = export_batch(get_engine(source_url), batch_id, tmp_path / "twice")
    assert folder_bytes(twice.path) == folder_bytes(folder)
    assert again.bytes == sum(len(b) for b in folder_bytes(folder).values())


def test_a_partial_export_imports_and_resumes_only_what_is_missing(
    source_url: str, sqlite_url: str, tmp_path: Path
) -> None:
    upgrade(sqlite_url)
    batch_id = partial_batch(source_url)
    partial = export_batch(get_engine(source_url), batch_id, tmp_path / "partial")
    summary = import_batch(get_engine(sqlite_url), partial.path)
    assert (summary.created, summary.chunks_added, summary.matches_added) == (True, 2, 10)
    assert crud.missing_chunks(get_engine(sqlite_url), summary_batch(sqlite_url, batch_id)) == [
        (5, 10),
        (15, 20),
    ]
    finish(sqlite_url, batch_id)
    with get_engine(sqlite_url).connect() as conn:
        workers = dict(
            conn.execute(
                select(crud.CHUNK.c.start, crud.CHUNK.c.worker).where(
                    crud.CHUNK.c.batch_id == batch_id
                )
            ).all()
        )
    # The imported chunks were kept, not played again; only the two missing ones were played.
    assert workers[0] == workers[10] == "source"
    assert workers[5] != "source" and workers[15] != "source"
    finish(source_url, batch_id)
    assert stored_moves(sqlite_url, batch_id) == stored_moves(source_url, batch_id)


def summary_batch(url: str, batch_id: str):  # type: ignore[no-untyped-def]
    batch = crud.get_batch(get_engine(url), batch_id)
    assert batch is not None
    return batch


def stored_moves(url: str, batch_id: str) -> list[tuple[int, str]]:
    with get_engine(url).connect() as conn:
        return [
            (int(i), str(m))
            for i, m in conn.execute(
                select(crud.MATCH.c.match_index, crud.MATCH.c.moves)
                .where(crud.MATCH.c.batch_id == batch_id)
                .order_by(crud.MATCH.c.match_index)
            )
        ]


def test_imports_merge_and_change_nothing_twice(
    source_url: str, db_url: str, tmp_path: Path
) -> None:
    batch_id = partial_batch(source_url)
    engine = get_engine(db_url)
    partial = export_batch(get_engine(source_url), batch_id, tmp_path / "partial")
    import_batch(engine, partial.path)
    again = import_batch(engine, partial.path)
    assert (again.created, again.chunks_added, again.chunks_skipped, again.matches_added) == (
        False,
        0,
        2,
        0,
    )
    assert again.status == "running"
    assert counts(db_url, batch_id) == (2, 10, 20)
    finish(source_url, batch_id)
    full = export_batch(get_engine(source_url), batch_id, tmp_path / "full")
    merged = import_batch(engine, full.path)
    assert (merged.chunks_added, merged.chunks_skipped, merged.matches_added) == (2, 2, 10)
    assert merged.status == "done"  # every chunk is here now: the finished state is taken
    assert counts(db_url, batch_id) == counts(source_url, batch_id) == (4, 20, 40)
    assert reports(db_url, batch_id) == reports(source_url, batch_id)


def test_an_export_without_moves_is_smaller_and_a_full_one_fills_them_in(
    source_url: str, sqlite_url: str, tmp_path: Path
) -> None:
    upgrade(sqlite_url)
    batch_id = partial_batch(source_url)
    finish(source_url, batch_id)
    source = get_engine(source_url)
    bare = export_batch(source, batch_id, tmp_path / "bare", moves=False)
    full = export_batch(source, batch_id, tmp_path / "full")
    assert bare.bytes < full.bytes
    assert json.loads((bare.path / "batch.json").read_text())["moves"] is False
    first = import_batch(get_engine(sqlite_url), bare.path)
    assert (first.moves, first.matches_added) == (False, MATCHES)
    assert {m for _, m in stored_moves(sqlite_url, batch_id)} == {""}
    filled = import_batch(get_engine(sqlite_url), full.path)
    assert (filled.matches_added, filled.moves_filled) == (0, MATCHES)
    assert stored_moves(sqlite_url, batch_id) == stored_moves(source_url, batch_id)
    assert all(split_moves(m) for _, m in stored_moves(sqlite_url, batch_id))


def test_a_batch_stored_with_another_definition_is_refused(
    source_url: str, sqlite_url: str, tmp_path: Path
) -> None:
    upgrade(sqlite_url)
    batch_id = partial_batch(source_url)
    folder = export_batch(get_engine(source_url), batch_id, tmp_path / "a").path
    target = get_engine(sqlite_url)
    crud.create_batch(target, plan=plan().model_copy(update={"id": batch_id, "seed": 12}))
    with pytest.raises(ArchiveError, match="different definition \\(seed differ"):
        import_batch(target, folder)
    assert counts(sqlite_url, batch_id) == (0, 0, 0)
    result = runner.invoke(app, ["import", str(folder), "--db", sqlite_url])
    assert result.exit_code == 2
    assert "error:" in result.output and "different definition" in result.output
    assert "Traceback" not in result.output


def test_unreadable_archives_are_refused_by_name(source_url: str, tmp_path: Path) -> None:
    batch_id = partial_batch(source_url)
    folder = export_batch(get_engine(source_url), batch_id, tmp_path / "a").path
    manifest = json.loads((folder / "batch.json").read_text())
    assert read_archive(folder).batch_id == batch_id

    newer = {**manifest, "version": 2}
    (folder / "batch.json").write_text(json.dumps(newer))
    with pytest.raises(ArchiveError, match="format version 2; this playtester reads version 1"):
        read_archive(folder)

    (folder / "batch.json").write_text(json.dumps(manifest))
    (folder / "seats.parquet").write_bytes((folder / "chunks.parquet").read_bytes())
    with pytest.raises(ArchiveError, match=r"seats\.parquet: its content is not what"):
        read_archive(folder)

    (folder / "seats.parquet").unlink()
    with pytest.raises(ArchiveError, match=r"seats\.parquet: missing"):
        read_archive(folder)

    result = runner.invoke(app, ["import", str(tmp_path / "nothing-here")])
    assert result.exit_code == 2 and "no such folder" in result.output


def test_the_batch_row_alone_is_read_from_the_manifest(source_url: str, tmp_path: Path) -> None:
    batch_id = partial_batch(source_url)
    folder = export_batch(get_engine(source_url), batch_id, tmp_path / "a").path
    whole = read_archive(folder)
    # The tables are not opened: the batch row is read with them gone.
    for table in folder.glob("*.parquet"):
        table.unlink()
    assert read_batch(folder) == whole.batch and whole.batch["id"] == batch_id
    manifest = json.loads((folder / "batch.json").read_text())
    del manifest["batch"]["seed"]
    (folder / "batch.json").write_text(json.dumps(manifest))
    with pytest.raises(ArchiveError, match=r"batch columns missing \['seed'\]"):
        read_batch(folder)


def test_an_import_touches_no_other_batch(source_url: str, sqlite_url: str, tmp_path: Path) -> None:
    upgrade(sqlite_url)
    batch_id = partial_batch(source_url)
    other = partial_batch(sqlite_url)
    with get_engine(sqlite_url).begin() as conn:
        conn.execute(update(crud.BATCH).where(crud.BATCH.c.id == other).values(status="queued"))
    folder = export_batch(get_engine(source_url), batch_id, tmp_path / "a").path
    import_batch(get_engine(sqlite_url), folder)
    assert counts(sqlite_url, other) == (2, 10, 20)
    assert summary_batch(sqlite_url, other).status == "queued"
