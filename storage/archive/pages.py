"""What a Parquet file's pages will cost to decode, read from their headers before any page is.

A Parquet reader allocates what each page header declares (its uncompressed size) and decodes
as many values as the header says it holds, whatever the footer claims; run-length encoding
lets a page of a few bytes declare millions of values. So the bound on decoding an upload is
taken from the page headers themselves: :func:`page_costs` walks every column chunk's pages
(each header is a small Thrift struct in the compact protocol, decoded here with no
allocation beyond the header's own bytes) and sums, per column, the uncompressed bytes and
the values. A header that cannot be walked, a page that points outside its chunk or a
declared size past the caller's limits is refused before pyarrow decodes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pyarrow.parquet as pq

MAX_HEADER_BYTES = 1 << 16
"""Largest page header read (statistics included); a genuine one is a few dozen bytes."""
_MAX_NESTING = 8
_MAGIC = b"PAR1"
_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 5, 7, 8
"""Field ids of ``PageHeader``'s data, dictionary and data v2 headers (each's field 1 is its
``num_values``)."""


class PageError(ValueError):
    """A page header that cannot be walked or that declares too much."""


@dataclass
class ColumnCost:
    """What one column's pages declare, summed over the file's row groups."""

    uncompressed: int = 0
    values: int = 0
    largest_page: int = 0


class _Reader:
    """The compact protocol over one header's bytes."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise PageError("a page header runs past its bytes")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise PageError("a page header holds an overlong integer")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def skip(self, kind: int, depth: int) -> None:
        if depth > _MAX_NESTING:
            raise PageError("a page header is nested too deeply")
        if kind in (1, 2):
            return
        if kind == 3:
            self.byte()
        elif kind in (4, 5, 6):
            self.varint()
        elif kind == 7:
            self.advance(8)
        elif kind == 8:
            self.advance(self.varint())
        elif kind in (9, 10):
            head = self.byte()
            size = head >> 4 if head >> 4 != 15 else self.varint()
            for _ in range(size):
                self.skip(head & 0x0F, depth + 1)
        elif kind == 11:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.skip(types >> 4, depth + 1)
                    self.skip(types & 0x0F, depth + 1)
        elif kind == 12:
            self.struct(lambda _field, kind: self.skip(kind, depth + 1))
        else:
            raise PageError(f"a page header holds an unknown Thrift type {kind}")

    def advance(self, size: int) -> None:
        if size < 0 or self.pos + size > len(self.data):
            raise PageError("a page header runs past its bytes")
        self.pos += size

    def struct(self, on_field: Callable[[int, int], None]) -> None:
        field = 0
        while True:
            head = self.byte()
            if head == 0:
                return
            delta, kind = head >> 4, head & 0x0F
            field = field + delta if delta else self.zigzag()
            on_field(field, kind)


def _header(data: bytes) -> tuple[int, int, int, int]:
    """(header length, uncompressed size, compressed size, values) of the header at ``data``'s
    start; values is 0 for a page that holds none (an index page)."""
    reader = _Reader(data)
    found = {"uncompressed": -1, "compressed": -1, "values": 0}

    def page_field(field: int, kind: int) -> None:
        if field in (2, 3) and kind == 5:
            found["uncompressed" if field == 2 else "compressed"] = reader.zigzag()
        elif field in (_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2) and kind == 12:
            reader.struct(values_field)
        else:
            reader.skip(kind, 1)

    def values_field(field: int, kind: int) -> None:
        if field == 1 and kind == 5:
            found["values"] = reader.zigzag()
        else:
            reader.skip(kind, 2)

    reader.struct(page_field)
    if found["uncompressed"] < 0 or found["compressed"] < 0 or found["values"] < 0:
        raise PageError("a page header lacks its sizes")
    return reader.pos, found["uncompressed"], found["compressed"], found["values"]


def page_costs(path: Path, *, max_page_bytes: int) -> dict[str, ColumnCost]:
    """Per column (its path in the schema, ``moves.list.element``), what its pages declare.
    ``PageError`` for a header that cannot be walked or a page past ``max_page_bytes``."""
    metadata = pq.ParquetFile(path).metadata
    size = path.stat().st_size
    costs: dict[str, ColumnCost] = {}
    with path.open("rb") as source:
        for g in range(metadata.num_row_groups):
            group = metadata.row_group(g)
            for c in range(group.num_columns):
                column = group.column(c)
                cost = costs.setdefault(column.path_in_schema, ColumnCost())
                if column.total_compressed_size == 0 and column.num_values == 0:
                    continue  # an empty table's column without a dictionary: no page at all
                start = _chunk_start(column)
                end = start + column.total_compressed_size
                if not 0 <= start <= end <= size:
                    raise PageError(f"column {column.path_in_schema} lies outside the file")
                _walk(source, start, end, cost, max_page_bytes)
    return costs


def _chunk_start(column: pq.ColumnChunkMetaData) -> int:
    """Where a column chunk's first page is: its dictionary page or its first data page. A
    chunk of an empty table has a dictionary page only, and pyarrow writes its data page
    offset as 0 (the file's magic number, never a page)."""
    offsets = [column.data_page_offset]
    if column.has_dictionary_page and column.dictionary_page_offset:
        offsets.append(column.dictionary_page_offset)
    pages = [offset for offset in offsets if offset >= len(_MAGIC)]
    if not pages:
        raise PageError(f"column {column.path_in_schema} names no page")
    return min(pages)


def _walk(source: BinaryIO, start: int, end: int, cost: ColumnCost, max_page: int) -> None:
    pos = start
    while pos < end:
        source.seek(pos)
        length, uncompressed, compressed, values = _header(source.read(MAX_HEADER_BYTES))
        if uncompressed > max_page:
            raise PageError(
                f"a page declares {uncompressed:,} bytes uncompressed; at most {max_page:,}"
            )
        pos += length + compressed
        if pos > end:
            raise PageError("a page runs past its column chunk")
        cost.uncompressed += uncompressed
        cost.values += values
        cost.largest_page = max(cost.largest_page, uncompressed)
