"""The archive format: one folder per batch, its manifest and three Parquet tables.

```
<folder>/
  batch.json       format name and version, the batch row, row counts, file digests
  chunks.parquet   the chunk rows (what ``resume`` reads to find the missing matches)
  matches.parquet  the match rows, moves included unless exported without them
  seats.parquet    the seat_result rows
```

Why Parquet beside a JSON manifest: the result tables are columnar and repetitive (agent labels,
endings, seat numbers, small integers), which Parquet's dictionary and run-length encodings
and zstd shrink to a few dozen bytes a match; the batch row is one nested record that reads
best, and diffs best, as JSON. Every file is deterministic: rows sorted by their key, fixed
writer options, and nothing about when or where the export ran, so exporting one batch twice
gives the same bytes and unchanged results never show as changes in git.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

FORMAT = "playtester-batch"
"""The manifest's ``format``: what a reader checks before anything else."""
VERSION = 1
"""The format version this code writes and reads; a reader refuses any other."""

MANIFEST = "batch.json"
CHUNKS = "chunks.parquet"
MATCHES = "matches.parquet"
SEATS = "seats.parquet"
TABLE_FILES = (CHUNKS, MATCHES, SEATS)

_UTC_MICROS = pa.timestamp("us", tz="UTC")

CHUNK_SCHEMA = pa.schema(
    [
        pa.field("start", pa.int64(), nullable=False),
        pa.field("stop", pa.int64(), nullable=False),
        pa.field("done", pa.int64(), nullable=False),
        pa.field("failed", pa.int64(), nullable=False),
        pa.field("duration", pa.float64(), nullable=False),
        pa.field("finished_at", _UTC_MICROS, nullable=False),
        pa.field("worker", pa.string()),
        pa.field("stop_0", pa.int64()),
        pa.field("stop_1", pa.int64()),
        pa.field("stop_2", pa.int64()),
        pa.field("stop_3", pa.int64()),
        pa.field("stop_4", pa.int64()),
    ]
)
"""The chunk table's columns but ``batch_id`` (the manifest holds it), sorted by ``start``."""

MATCH_SCHEMA = pa.schema(
    [
        pa.field("match_index", pa.int64(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False),
        pa.field("ok", pa.bool_(), nullable=False),
        pa.field("plies", pa.int64(), nullable=False),
        pa.field("ended_by", pa.string(), nullable=False),
        pa.field("duration", pa.float64(), nullable=False),
        pa.field("moves", pa.list_(pa.string()), nullable=False),
        pa.field("stats", pa.string(), nullable=False),
        pa.field("error", pa.string()),
        pa.field("first_seat", pa.int64()),
        pa.field("opening", pa.int64()),
    ]
)
"""The match table's columns but ``batch_id``, sorted by ``match_index``; ``stats`` is the
stored JSON text, ``moves`` the list of moves (empty in an export without moves). A list, not
the stored text: its dictionary of distinct moves made Alhambra's files a third smaller. It is
stored back newline-ended (``storage.records.join_moves``), so the oldest rows' space-separated
text comes back in today's form, which reads the same."""

SEAT_SCHEMA = pa.schema(
    [
        pa.field("match_index", pa.int64(), nullable=False),
        pa.field("seat", pa.int64(), nullable=False),
        pa.field("agent", pa.string(), nullable=False),
        pa.field("agent_index", pa.int64(), nullable=False),
        pa.field("points", pa.float64(), nullable=False),
        pa.field("win_share", pa.float64(), nullable=False),
        pa.field("rank", pa.int64(), nullable=False),
        pa.field("move_ms", pa.string()),
    ]
)
"""The seat_result table's columns but ``batch_id``, sorted by (match_index, seat);
``move_ms`` is the stored JSON text."""

SCHEMAS = {CHUNKS: CHUNK_SCHEMA, MATCHES: MATCH_SCHEMA, SEATS: SEAT_SCHEMA}

ROW_GROUP_ROWS = 1 << 20
"""Rows per Parquet row group: one group for any batch this side of a million seat rows."""
_WRITER_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 9,
    "use_dictionary": True,
    "write_statistics": False,
    "version": "2.6",
    "data_page_version": "1.0",
    "row_group_size": ROW_GROUP_ROWS,
}
"""Fixed so the same rows always give the same bytes (given one pyarrow version, which the
files name as their writer). Statistics are off: nothing reads them, and they are bytes."""


class ArchiveError(ValueError):
    """An archive that cannot be read or imported, saying which file and why."""


def write_table(columns: dict[str, list[Any]], schema: pa.Schema, path: Path) -> None:
    """Write ``columns`` (one list per schema field, rows already sorted) to ``path``."""
    table = pa.Table.from_pydict(columns, schema=schema)
    pq.write_table(table, path, **_WRITER_OPTIONS)


def read_table(folder: Path, name: str) -> dict[str, list[Any]]:
    """The columns of one table file, checked against its schema."""
    path = folder / name
    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        holds = ", ".join(TABLE_FILES)
        raise ArchiveError(f"{path}: missing (an archive folder holds {holds})") from None
    except (pa.ArrowException, OSError) as exc:
        raise ArchiveError(f"{path}: not a readable Parquet file ({exc})") from exc
    expected = SCHEMAS[name]
    if not table.schema.equals(expected, check_metadata=False):
        raise ArchiveError(
            f"{path}: its columns are {table.schema.names} with types "
            f"{[str(t) for t in table.schema.types]}; format {VERSION} has {expected.names}"
        )
    return table.to_pydict()


def file_digest(path: Path) -> str:
    """The sha256 of a file, hex: the manifest names each table file's, so a folder whose files
    come from different exports is refused."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
