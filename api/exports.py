"""Streamed exports of a batch's results: one row per seat of every stored match.

Rows are read in slices of matches (``storage.queries.export_row_slices``, keyset pagination on
the match index), so the memory used does not grow with the batch and the first bytes leave at
once.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from sqlalchemy import Engine

from storage.queries import EXPORT_COLUMNS, export_row_slices

SCHEMA = pa.schema(
    [
        ("batch_id", pa.string()),
        ("match_index", pa.int64()),
        ("seed", pa.int64()),
        ("ok", pa.bool_()),
        ("plies", pa.int64()),
        ("ended_by", pa.string()),
        ("duration", pa.float64()),
        ("error", pa.string()),
        ("first_seat", pa.int64()),
        ("opening", pa.int64()),
        ("seat", pa.int64()),
        ("agent", pa.string()),
        ("agent_index", pa.int64()),
        ("points", pa.float64()),
        ("win_share", pa.float64()),
        ("rank", pa.int64()),
        ("move_ms", pa.list_(pa.float64())),
    ]
)


def csv_stream(engine: Engine, batch_id: str) -> Iterator[bytes]:
    """The export as CSV with a header line, in pieces."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    yield buffer.getvalue().encode()
    for rows in export_row_slices(engine, batch_id):
        buffer.seek(0)
        buffer.truncate()
        writer.writerows(rows)
        yield buffer.getvalue().encode()


class _Drain(io.RawIOBase):
    """A write-only sink whose bytes are taken out after each row group."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.parts.append(chunk)
        self.position += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self.position

    def take(self) -> bytes:
        out = b"".join(self.parts)
        self.parts.clear()
        return out


def parquet_stream(engine: Engine, batch_id: str) -> Iterator[bytes]:
    """The export as a Parquet file, one row group per slice, in pieces."""
    sink = _Drain()
    with pq.ParquetWriter(pa.PythonFile(sink, mode="w"), SCHEMA) as writer:
        for rows in export_row_slices(engine, batch_id):
            table = pa.Table.from_pylist(rows, schema=SCHEMA)
            writer.write_table(table)
            yield sink.take()
    yield sink.take()
