"""Reading an archive folder and merging it into a database.

An import adds what the database lacks and nothing else: the batch row when it is new, the
chunk rows whose ranges no stored chunk overlaps, and the match and seat rows of those chunks,
each insert ignoring a row already there (the bulk writer's ``insert_rows``). So importing
the same folder twice changes nothing, and importing a partial export and later a fuller one
of the same batch adds the matches the first lacked. A chunk that overlaps a stored one (the
batch was played on in both places) is skipped with its matches: the stored chunk already
holds those it covers, and ``resume`` plays any left uncovered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, func, insert, select, update

from storage.archive.dump import ExportSummary
from storage.archive.layout import (
    CHUNKS,
    MANIFEST,
    MATCHES,
    SEATS,
    TABLE_FILES,
    ArchiveError,
    Budget,
    file_digest,
    read_table,
)
from storage.archive.manifest import batch_row, read_manifest
from storage.archive.zipped import MAX_DECODED_BYTES
from storage.chunking import Range, uncovered
from storage.crud.writes import insert_rows
from storage.models import (
    BATCH,
    CHUNK,
    MATCH,
    MATCH_COLUMNS,
    SEAT_COLUMNS,
    BatchBase,
    BatchStatus,
)
from storage.records import join_moves

DEFINITION = tuple(name for name in BatchBase.model_fields if name != "id")
"""The batch columns a request decides: an archive's must equal the stored batch's."""
STATE = (
    "status",
    "stopped_early",
    "decision",
    "error",
    "started_at",
    "finished_at",
    "run_started_at",
    "run_start_finished",
)
"""Where a batch is: taken from the archive when it carries a finished batch the database
holds unfinished."""


@dataclass(frozen=True)
class Archive:
    """An archive folder, read and checked: the batch row (times parsed) and its tables as
    one list per column."""

    folder: Path
    batch: dict[str, Any]
    moves: bool
    chunks: dict[str, list[Any]]
    matches: dict[str, list[Any]]
    seats: dict[str, list[Any]]

    @property
    def batch_id(self) -> str:
        return str(self.batch["id"])


@dataclass(frozen=True)
class ImportSummary:
    """What ``import_batch`` did. ``created``: the batch was new here. ``chunks_skipped``: chunk
    rows already stored or overlapping stored ones. ``moves_filled``: stored matches without
    moves (from an export without them) that got them from this one."""

    batch_id: str
    path: Path
    created: bool
    chunks_added: int
    chunks_skipped: int
    matches_added: int
    moves_filled: int
    moves: bool
    status: str


def read_archive(folder: Path, *, max_matches: int | None = None) -> Archive:
    """Read and check an archive folder; ``ArchiveError`` says what is wrong with it.

    Structure before content: the manifest (bounded, its batch row checked), each file's
    digest (hashed in pieces), then each table's footer against the batch's own size (chunks
    and matches at most its ``matches``, seats at most ``players`` times that, and at most
    ``max_matches`` when given) before its rows are decoded, in bounded pieces
    (``layout.read_table``)."""
    manifest = read_manifest(folder)
    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != set(TABLE_FILES):
        raise ArchiveError(
            f"{folder / MANIFEST}: 'files' must name {', '.join(TABLE_FILES)}",
            member=MANIFEST,
            field="files",
        )
    batch = batch_row(folder, manifest.get("batch"))
    for name in TABLE_FILES:
        path = folder / name
        if path.exists() and file_digest(path) != files[name]:
            raise ArchiveError(
                f"{path}: its content is not what {MANIFEST} describes (a file from another "
                "export, or changed since)",
                member=name,
            )
    matches = batch["matches"] if max_matches is None else min(batch["matches"], max_matches)
    budget = Budget(MAX_DECODED_BYTES)
    bounds = {CHUNKS: matches, MATCHES: matches, SEATS: matches * batch["players"]}
    tables = {
        name: read_table(
            folder, name, max_rows=bounds[name], max_list=batch["max_plies"], budget=budget
        )
        for name in TABLE_FILES
    }
    archive = Archive(
        folder=folder,
        batch=batch,
        moves=manifest.get("moves") is True,
        chunks=tables[CHUNKS],
        matches=tables[MATCHES],
        seats=tables[SEATS],
    )
    _check_rows(archive)
    return archive


def read_batch(folder: Path) -> dict[str, Any]:
    """The batch row of an archive folder (times parsed), read and checked from its manifest
    alone: the tables are not opened, nor checked against the manifest (``read_archive``)."""
    return batch_row(folder, read_manifest(folder).get("batch"))


def describe(folder: Path) -> ExportSummary:
    """What the archive folder ``folder`` holds, read and checked whole (``ArchiveError``
    otherwise), as ``export_batch`` would have said when it wrote it."""
    archive = read_archive(folder)
    size = sum((folder / name).stat().st_size for name in (*TABLE_FILES, MANIFEST))
    return ExportSummary(
        batch_id=archive.batch_id,
        path=folder,
        chunks=len(archive.chunks["start"]),
        matches=len(archive.matches["match_index"]),
        seats=len(archive.seats["match_index"]),
        moves=archive.moves,
        bytes=size,
    )


def _check_rows(archive: Archive) -> None:
    """The tables agree with each other and with the batch, as a database's rows would."""
    where = archive.folder
    starts, stops = archive.chunks["start"], archive.chunks["stop"]
    previous = 0
    for start, stop in zip(starts, stops, strict=True):
        if not previous <= start < stop <= archive.batch["matches"]:
            raise ArchiveError(
                f"{where / CHUNKS}: chunk [{start}, {stop}) overlaps another or lies outside "
                f"the batch's {archive.batch['matches']} matches"
            )
        previous = stop
    ranges = list(zip(starts, stops, strict=True))
    indices = archive.matches["match_index"]
    if any(b <= a for a, b in pairwise(indices)):
        raise ArchiveError(f"{where / MATCHES}: match indices must be unique and sorted")
    stray = next((i for i in indices if not _covered(ranges, i)), None)
    if stray is not None:
        raise ArchiveError(f"{where / MATCHES}: match {stray} lies in no chunk of {CHUNKS}")
    known = set(indices)
    orphan = next((i for i in archive.seats["match_index"] if i not in known), None)
    if orphan is not None:
        raise ArchiveError(f"{where / SEATS}: seat rows of match {orphan}, which is not stored")


def _covered(ranges: Sequence[Range], index: int) -> bool:
    """True when ``index`` lies in one of ``ranges`` (sorted, disjoint)."""
    lo, hi = 0, len(ranges)
    while lo < hi:
        mid = (lo + hi) // 2
        if ranges[mid][1] <= index:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(ranges) and ranges[lo][0] <= index


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def definition_differs(stored: dict[str, Any], archive: Archive) -> list[str]:
    """The definition columns in which a stored batch's row and the archive's differ."""
    return [name for name in DEFINITION if not _same(stored[name], archive.batch[name])]


def import_batch(
    engine: Engine,
    folder: Path,
    *,
    archive: Archive | None = None,
    state: dict[str, Any] | None = None,
    within: Callable[[Connection, bool], None] | None = None,
    frozen: bool = False,
) -> ImportSummary:
    """Merge the archive in ``folder`` into the database, in one transaction (``archive``:
    the folder as ``read_archive`` read it already).

    ``state``: the batch's state columns (``STATE``) as the caller derived them, stored
    instead of the archive's whether the batch is new or not (``workers.imports`` derives
    them from the rows; without it the archive's rules as below). ``within(conn, created)``
    runs in the same transaction after the rows are written: what it raises stores nothing.
    ``frozen``: the batch may not change (it is playing): refused with ``ArchiveError`` when
    the archive would add a chunk or fill in moves, so only a repeated import passes.

    Refused with ``ArchiveError`` (and nothing written) when the database holds a batch with
    this id but a different definition. The batch's state (status, finish time, stop
    decision) is the archive's when the batch is new here, or when the archive's batch is
    finished, the database's is not, and every chunk of the archive is now covered.
    """
    archive = archive or read_archive(folder)
    batch_id = archive.batch_id
    with engine.begin() as conn:
        # Chunk writers of this batch lock its row too (``write_chunk``), so the overlap
        # check below sees every chunk committed before it and none is written meanwhile.
        query = select(BATCH).where(BATCH.c.id == batch_id)
        if conn.dialect.name == "postgresql":
            query = query.with_for_update()
        stored = conn.execute(query).mappings().first()
        if stored is None:
            conn.execute(insert(BATCH).values({**archive.batch, **(state or {})}))
        else:
            differs = definition_differs(dict(stored), archive)
            if differs:
                raise ArchiveError(
                    f"{folder}: batch {batch_id} is stored here with a different definition "
                    f"({', '.join(differs)} differ); not imported"
                )
        before = _match_count(conn, batch_id)
        written = _written(conn, batch_id)
        added = _add_chunks(conn, archive, written)
        _add_results(conn, archive, added)
        filled = _fill_moves(conn, archive) if stored is not None and archive.moves else 0
        if frozen and (added or filled):
            raise ArchiveError(f"batch {batch_id} may not change here; not imported")
        status = stored["status"] if stored is not None else archive.batch["status"]
        if state is not None:
            if stored is not None:
                conn.execute(update(BATCH).where(BATCH.c.id == batch_id).values(state))
            status = state.get("status", status)
        elif stored is not None and _adopts_state(stored, archive, written + added):
            conn.execute(
                update(BATCH)
                .where(BATCH.c.id == batch_id)
                .values({name: archive.batch[name] for name in STATE})
            )
            status = archive.batch["status"]
        matches_added = _match_count(conn, batch_id) - before
        if within is not None:
            within(conn, stored is None)
    return ImportSummary(
        batch_id=batch_id,
        path=folder,
        created=stored is None,
        chunks_added=len(added),
        chunks_skipped=len(archive.chunks["start"]) - len(added),
        matches_added=matches_added,
        moves_filled=filled,
        moves=archive.moves,
        status=str(status),
    )


def _match_count(conn: Connection, batch_id: str) -> int:
    return int(conn.execute(select(func.count()).where(MATCH.c.batch_id == batch_id)).scalar_one())


def _written(conn: Connection, batch_id: str) -> list[Range]:
    rows = conn.execute(
        select(CHUNK.c.start, CHUNK.c.stop)
        .where(CHUNK.c.batch_id == batch_id)
        .order_by(CHUNK.c.start)
    )
    return [(int(a), int(b)) for a, b in rows]


def _add_chunks(conn: Connection, archive: Archive, written: list[Range]) -> list[Range]:
    """Insert the archive's chunk rows that overlap no stored one; their ranges, in order."""
    columns = list(archive.chunks)
    rows = []
    added: list[Range] = []
    for values in zip(*(archive.chunks[name] for name in columns), strict=True):
        row = dict(zip(columns, values, strict=True))
        start, stop = row["start"], row["stop"]
        if any(a < stop and start < b for a, b in written):
            continue
        rows.append({"batch_id": archive.batch_id, **row})
        added.append((start, stop))
    if rows:
        conn.execute(insert(CHUNK), rows)
    return added


def _add_results(conn: Connection, archive: Archive, added: list[Range]) -> None:
    """Insert the match and seat rows of the chunks just added, ignoring rows already there."""
    if not added:
        return
    batch_id = archive.batch_id
    match_names = MATCH_COLUMNS[1:]
    moves_at = match_names.index("moves")
    matches = [
        (batch_id, *values[:moves_at], join_moves(values[moves_at]), *values[moves_at + 1 :])
        for values in zip(*(archive.matches[name] for name in match_names), strict=True)
        if _covered(added, values[0])
    ]
    seat_names = SEAT_COLUMNS[1:]
    seats = [
        (batch_id, *values)
        for values in zip(*(archive.seats[name] for name in seat_names), strict=True)
        if _covered(added, values[0])
    ]
    insert_rows(conn, matches, seats)


def _fill_moves(conn: Connection, archive: Archive) -> int:
    """Give stored matches with no moves the archive's (an earlier import without moves)."""
    bare = set(
        conn.execute(
            select(MATCH.c.match_index).where(
                MATCH.c.batch_id == archive.batch_id, MATCH.c.ok.is_(True), MATCH.c.moves == ""
            )
        ).scalars()
    )
    if not bare:
        return 0
    fills = [
        {"b": archive.batch_id, "i": index, "m": join_moves(moves)}
        for index, moves in zip(
            archive.matches["match_index"], archive.matches["moves"], strict=True
        )
        if moves and index in bare
    ]
    if fills:
        statement = (
            update(MATCH)
            .where(MATCH.c.batch_id == bindparam("b"), MATCH.c.match_index == bindparam("i"))
            .values(moves=bindparam("m"))
        )
        conn.execute(statement, fills)
    return len(fills)


def _adopts_state(stored: Any, archive: Archive, written: list[Range]) -> bool:
    """True when the archive says the batch finished, the database does not yet, and the
    stored chunk rows now cover every range the archive's do (so its matches are all here)."""
    if stored["status"] in BatchStatus.FINISHED:
        return False
    if archive.batch["status"] not in BatchStatus.FINISHED:
        return False
    holes = uncovered(sorted(written), archive.batch["matches"])
    chunks = zip(archive.chunks["start"], archive.chunks["stop"], strict=True)
    return not any(a < stop and start < b for start, stop in chunks for a, b in holes)
