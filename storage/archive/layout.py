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
    """An archive that cannot be read or imported, saying which file and why; ``member`` (the
    archive's file at fault) and ``field`` (the column or key in it) when known."""

    def __init__(self, message: str, *, member: str | None = None, field: str | None = None):
        super().__init__(message)
        self.member = member
        self.field = field


TEXT_LIMITS = {
    "worker": 200,
    "ended_by": 32,
    "moves": 256,
    "stats": 1 << 16,
    "error": 1 << 14,
    "agent": 200,
    "move_ms": 1 << 18,
}
"""The longest text each text column may hold (characters; ``moves``: one move). The longest
in every committed study is far below: a worker name of 8, a move of 68, stats of 2,737."""
MAX_PAGE_BYTES = 64 << 20
"""Largest uncompressed Parquet page read (an export writes pages of about 1 MiB)."""
READ_ROWS = 256
"""Rows decoded at a time: with the limits above, one piece holds a few MiB at most."""


class Budget:
    """Bytes of decoded text an archive may still take, spent as its tables are read."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.left = total

    def spend(self, amount: int, path: Path, name: str) -> None:
        self.left -= amount
        if self.left < 0:
            raise ArchiveError(
                f"{path}: the archive's texts decode to more than {self.total:,} bytes; refused",
                member=path.name,
                field=name,
            )


def write_table(columns: dict[str, list[Any]], schema: pa.Schema, path: Path) -> None:
    """Write ``columns`` (one list per schema field, rows already sorted) to ``path``."""
    table = pa.Table.from_pydict(columns, schema=schema)
    pq.write_table(table, path, **_WRITER_OPTIONS)


def _open(path: Path, **options: Any) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path, **options)
    except FileNotFoundError:
        holds = ", ".join(TABLE_FILES)
        raise ArchiveError(
            f"{path}: missing (an archive folder holds {holds})", member=path.name
        ) from None
    except (pa.ArrowException, OSError) as exc:
        raise ArchiveError(
            f"{path}: not a readable Parquet file ({exc})", member=path.name
        ) from None


def _text_columns(schema: pa.Schema) -> list[str]:
    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_list(f.type)]


def read_table(
    folder: Path,
    name: str,
    *,
    max_rows: int | None = None,
    max_list: int | None = None,
    budget: Budget | None = None,
) -> dict[str, list[Any]]:
    """The columns of one table file, checked before its data is decoded: its footer's schema,
    at most ``max_rows`` rows, what its page headers declare (``storage.archive.pages``:
    each value decoded is counted there, a list's items at most ``max_list`` a row), then
    decoded ``READ_ROWS`` rows at a time with every text's length within ``TEXT_LIMITS``,
    free of NUL, and counted against ``budget``; a dictionary's texts are checked before any
    row expands them."""
    path = folder / name
    expected = SCHEMAS[name]
    footer = _open(path)
    found = footer.schema_arrow
    if not found.equals(expected, check_metadata=False):
        raise ArchiveError(
            f"{path}: its columns are {found.names} with types "
            f"{[str(t) for t in found.types]}; format {VERSION} has {expected.names}",
            member=name,
        )
    rows = footer.metadata.num_rows
    if max_rows is not None and rows > max_rows:
        raise ArchiveError(
            f"{path}: {rows:,} rows; the manifest's batch allows at most {max_rows:,}",
            member=name,
            field="rows",
        )
    _check_pages(path, rows, max_list)
    texts = _text_columns(expected)
    reader = _open(path, read_dictionary=[_leaf(expected, t) for t in texts])
    out: dict[str, list[Any]] = {n: [] for n in expected.names}
    checked: set[tuple[str, int, int]] = set()
    try:
        for piece in reader.iter_batches(batch_size=READ_ROWS, use_threads=False):
            for column_name in expected.names:
                column = piece.column(column_name)
                if column_name in texts:
                    _check_texts(path, column_name, column, budget, checked)
                    column = _plain(column)
                out[column_name].extend(column.to_pylist())
    except (pa.ArrowException, OSError) as exc:
        raise ArchiveError(f"{path}: not a readable Parquet file ({exc})", member=name) from None
    if len(out[expected.names[0]]) != rows:
        raise ArchiveError(f"{path}: its rows are not what its footer says", member=name)
    return out


def _plain(column: Any) -> Any:
    """A dictionary column (or list of them) as plain texts: much quicker to turn into Python
    than the dictionary's own conversion, once its texts are checked."""
    if pa.types.is_list(column.type):
        values = column.values
        return pa.ListArray.from_arrays(column.offsets, values.dictionary.take(values.indices))
    return column.dictionary.take(column.indices)


def _leaf(schema: pa.Schema, name: str) -> str:
    return f"{name}.list.element" if pa.types.is_list(schema.field(name).type) else name


def _check_pages(path: Path, rows: int, max_list: int | None) -> None:
    from storage.archive.pages import PageError, page_costs

    try:
        costs = page_costs(path, max_page_bytes=MAX_PAGE_BYTES)
    except PageError as exc:
        raise ArchiveError(f"{path}: {exc}", member=path.name) from None
    # A page's values count its dictionary's entries too, and an empty list one value.
    for column, cost in costs.items():
        per_row = 1 if not column.endswith(".list.element") else (max_list or 0) + 1
        allowed = 2 * rows * per_row
        if cost.values > allowed:
            field = column.removesuffix(".list.element")
            raise ArchiveError(
                f"{path}: column {field} declares {cost.values:,} values for {rows:,} rows; "
                f"at most {allowed:,}",
                member=path.name,
                field=field,
            )


def _check_texts(
    path: Path, name: str, column: Any, budget: Budget | None, checked: set[tuple[str, int, int]]
) -> None:
    """Refuse a text past its limit or holding NUL, from the column's dictionary (checked once
    per dictionary), and spend what its rows expand to."""
    import numpy as np
    import pyarrow.compute as pc

    values = column.flatten() if pa.types.is_list(column.type) else column
    dictionary = values.dictionary
    lengths = pc.binary_length(dictionary).to_numpy(zero_copy_only=False)
    seen = (name, dictionary.buffers()[-1].address if len(dictionary) else 0, len(dictionary))
    if seen not in checked:
        limit = TEXT_LIMITS[name]
        if len(lengths) and int(lengths.max()) > limit:
            raise ArchiveError(
                f"{path}: column {name} holds a text of {int(lengths.max()):,} bytes; at most "
                f"{limit:,}",
                member=path.name,
                field=name,
            )
        if len(dictionary) and pc.any(pc.match_substring(dictionary, "\x00")).as_py():
            raise ArchiveError(
                f"{path}: column {name} holds a NUL character", member=path.name, field=name
            )
        checked.add(seen)
    if budget is not None and len(values) and len(lengths):
        indices = values.indices.fill_null(0).to_numpy(zero_copy_only=False)
        budget.spend(int(np.asarray(lengths)[indices].sum()), path, name)


def file_digest(path: Path) -> str:
    """The sha256 of a file, hex, read 1 MiB at a time: the manifest names each table file's,
    so a folder whose files come from different exports is refused."""
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while piece := source.read(1 << 20):
            digest.update(piece)
    return digest.hexdigest()
