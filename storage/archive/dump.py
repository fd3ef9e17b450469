"""Writing one stored batch as an archive folder (``storage.archive.layout``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, Text, cast, select

from storage.archive.layout import (
    CHUNK_SCHEMA,
    CHUNKS,
    FORMAT,
    MANIFEST,
    MATCH_SCHEMA,
    MATCHES,
    SEAT_SCHEMA,
    SEATS,
    VERSION,
    file_digest,
    write_table,
)
from storage.crud.ids import NotFound
from storage.crud.tally import aware
from storage.models import BATCH, CHUNK, MATCH, SEAT_RESULT
from storage.records import split_moves

JSON_TEXT_COLUMNS = frozenset({"stats", "move_ms"})
"""Result columns kept as their stored JSON text: read and written without a parse, so what
comes back is byte for byte what the writer stored."""


@dataclass(frozen=True)
class ExportSummary:
    """What ``export_batch`` wrote: the folder, its rows, and its size on disk in bytes."""

    batch_id: str
    path: Path
    chunks: int
    matches: int
    seats: int
    moves: bool
    bytes: int


def batch_record(row: dict[str, Any]) -> dict[str, Any]:
    """A batch row as the manifest holds it: every column, times as ISO 8601 in UTC."""
    record = {}
    for column in BATCH.columns:
        value = row[column.name]
        if isinstance(value, datetime):
            value = aware(value).isoformat()  # type: ignore[union-attr]
        record[column.name] = value
    return record


def _rows(conn: Connection, table: Any, schema: Any, batch_id: str, order: list[str]) -> dict:
    """The batch's rows of ``table`` as one list per ``schema`` field, sorted by ``order``."""
    columns = [
        cast(table.c[name], Text).label(name) if name in JSON_TEXT_COLUMNS else table.c[name]
        for name in schema.names
    ]
    query = (
        select(*columns)
        .where(table.c.batch_id == batch_id)
        .order_by(*(table.c[name] for name in order))
    )
    result = conn.execute(query).all()
    out: dict[str, list[Any]] = {name: [] for name in schema.names}
    for row in result:
        for name, value in zip(schema.names, row, strict=True):
            out[name].append(aware(value) if isinstance(value, datetime) else value)
    return out


def export_batch(
    engine: Engine, batch_id: str, folder: Path, *, moves: bool = True
) -> ExportSummary:
    """Write batch ``batch_id`` (a full id) with its chunks, matches and seats to ``folder``.

    Finished or not: an unfinished batch exports what is stored, and its chunk rows tell
    ``resume`` (after an import) which matches are still to play. Without ``moves`` the match
    rows carry empty move lists (they replay from the seeds; the manifest says they are
    absent). The tables are read in one transaction, so they agree with one another; files
    are written beside their final names and moved there, the manifest last, so a reader
    never takes a half-written folder for a whole one (the digests would not match).
    """
    with engine.connect() as conn, conn.begin():
        row = conn.execute(select(BATCH).where(BATCH.c.id == batch_id)).mappings().first()
        if row is None:
            raise NotFound(f"no batch {batch_id!r}")
        tables = {
            CHUNKS: (_rows(conn, CHUNK, CHUNK_SCHEMA, batch_id, ["start"]), CHUNK_SCHEMA),
            MATCHES: (_rows(conn, MATCH, MATCH_SCHEMA, batch_id, ["match_index"]), MATCH_SCHEMA),
            SEATS: (
                _rows(conn, SEAT_RESULT, SEAT_SCHEMA, batch_id, ["match_index", "seat"]),
                SEAT_SCHEMA,
            ),
        }
    match_columns = tables[MATCHES][0]
    match_columns["moves"] = [split_moves(m) if moves else [] for m in match_columns["moves"]]
    folder.mkdir(parents=True, exist_ok=True)
    digests = {}
    for name, (columns, schema) in tables.items():
        staged = folder / f".{name}.partial"
        write_table(columns, schema, staged)
        digests[name] = file_digest(staged)
        os.replace(staged, folder / name)
    counts = {
        name.removesuffix(".parquet"): len(cols["start" if name == CHUNKS else "match_index"])
        for name, (cols, _schema) in tables.items()
    }
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "batch": batch_record(dict(row)),
        "moves": moves,
        "rows": counts,
        "files": digests,
    }
    staged = folder / f".{MANIFEST}.partial"
    staged.write_text(json.dumps(manifest, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(staged, folder / MANIFEST)
    size = sum((folder / name).stat().st_size for name in (*tables, MANIFEST))
    return ExportSummary(
        batch_id=batch_id,
        path=folder,
        chunks=counts["chunks"],
        matches=counts["matches"],
        seats=counts["seats"],
        moves=moves,
        bytes=size,
    )
