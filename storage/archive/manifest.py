"""An archive's manifest (``batch.json``) read and checked: bounded in size, in nesting and in
what its numbers and texts may be, and its batch row checked column by column for what a
stored row may hold, so that no imported row can break a read of the batch list."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import DateTime

from storage.archive.layout import FORMAT, MANIFEST, VERSION, ArchiveError
from storage.archive.zipped import MAX_MANIFEST_BYTES
from storage.models import BATCH, BatchStatus

MAX_NESTING = 64
"""Deepest nesting of a manifest's JSON (a batch row nests four deep)."""
MAX_TEXT = 1 << 14
"""Longest text anywhere in a batch row (an error message; a book's move is far shorter)."""
INT64 = (-(1 << 63), (1 << 63) - 1)
BATCH_ID = re.compile(r"[0-9a-f]{12}")
"""A batch id as ``storage.models.new_batch_id`` makes it: 12 lowercase hex digits."""
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)


def depth(value: Any) -> int:
    """How deeply ``value`` (parsed JSON) nests, counted without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item)
    return deepest


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _bounded_int(text: str) -> int:
    if len(text) > 20 or not INT64[0] <= (value := int(text)) <= INT64[1]:
        raise ValueError(f"the integer {text[:24]} does not fit in 64 bits")
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:24]} is not finite")
    return value


def load_json(data: bytes | str, *, max_nesting: int = MAX_NESTING) -> Any:
    """JSON text as Python, refusing what a database column or a report cannot hold: nesting
    deeper than ``max_nesting``, NaN and infinities, integers past 64 bits. ``ValueError``
    says which. (The parser refuses nesting past the interpreter's recursion limit with a
    ``RecursionError``, turned into a ``ValueError`` here.)"""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    try:
        value = json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_int=_bounded_int,
            parse_float=_finite_float,
        )
    except RecursionError:
        raise ValueError(f"nested more than {max_nesting} deep") from None
    if (found := depth(value)) > max_nesting:
        raise ValueError(f"nested {found} deep; at most {max_nesting}")
    return value


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    try:
        with path.open("rb") as source:
            data = source.read(MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise ArchiveError(f"{folder}: no {MANIFEST}; not an exported batch folder") from None
    except OSError as exc:
        raise ArchiveError(f"{path}: not readable ({exc})", member=MANIFEST) from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise ArchiveError(
            f"{path}: larger than {MAX_MANIFEST_BYTES:,} bytes; a batch's manifest is far smaller",
            member=MANIFEST,
        )
    try:
        manifest = load_json(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ArchiveError(f"{path}: not readable JSON ({exc})", member=MANIFEST) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArchiveError(f"{path}: not a {FORMAT} manifest", member=MANIFEST, field="format")
    version = manifest.get("version")
    if version != VERSION:
        raise ArchiveError(
            f"{path}: format version {version!r}; this playtester reads version {VERSION} only",
            member=MANIFEST,
            field="version",
        )
    return manifest


def _check_values(where: Path, name: str, value: Any) -> None:
    """Every text in ``value`` free of NUL and at most ``MAX_TEXT`` long (iteratively: the
    nesting was bounded when the JSON was read)."""
    stack = [(name, value)]
    while stack:
        at, item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise ArchiveError(
                    f"{where}: {at} holds a NUL character", member=MANIFEST, field=at
                )
            if len(item) > MAX_TEXT:
                raise ArchiveError(
                    f"{where}: {at} holds {len(item):,} characters; at most {MAX_TEXT:,}",
                    member=MANIFEST,
                    field=at,
                )
        elif isinstance(item, dict):
            stack.extend((f"{at}.{k}", v) for k, v in item.items())
            stack.extend((f"{at} key", k) for k in item)
        elif isinstance(item, list):
            stack.extend((f"{at}[{i}]", v) for i, v in enumerate(item))


def _bad(where: Path, name: str, message: str) -> ArchiveError:
    return ArchiveError(f"{where}: batch.{name} {message}", member=MANIFEST, field=f"batch.{name}")


def batch_row(folder: Path, record: Any) -> dict[str, Any]:
    """The manifest's batch row, every column checked for what a stored row may hold: the
    id's format, texts free of NUL and bounded, times between 2000 and tomorrow, counts that
    are counts. What the request decides is checked again by re-planning it
    (``workers.imports``)."""
    where = folder / MANIFEST
    columns = {column.name: column for column in BATCH.columns}
    if not isinstance(record, dict):
        raise ArchiveError(
            f"{where}: 'batch' must be the batch's row", member=MANIFEST, field="batch"
        )
    if set(record) != set(columns):
        missing = sorted(set(columns) - set(record))
        unknown = sorted(set(record) - set(columns))
        raise ArchiveError(
            f"{where}: batch columns missing {missing}, unknown {[u[:40] for u in unknown[:5]]}",
            member=MANIFEST,
            field="batch",
        )
    for name, value in record.items():
        _check_values(where, f"batch.{name}", value)
    row = dict(record)
    if not isinstance(row["id"], str) or not BATCH_ID.fullmatch(row["id"]):
        raise _bad(where, "id", "must be a batch id: 12 lowercase hexadecimal digits")
    latest = datetime.now(UTC) + timedelta(days=1)
    for name, column in columns.items():
        if isinstance(column.type, DateTime) and (row[name] is not None or name == "created_at"):
            try:
                moment = datetime.fromisoformat(row[name])
            except (TypeError, ValueError):
                raise _bad(where, name, "is not an ISO 8601 time") from None
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            if not EARLIEST <= moment <= latest:
                raise _bad(where, name, f"is {row[name]!r}: not between 2000 and tomorrow")
            row[name] = moment
    for name in ("players", "matches", "chunk_size", "max_plies", "seed"):
        value = row[name]
        if not isinstance(value, int) or isinstance(value, bool) or (value < 0 and name != "seed"):
            raise _bad(where, name, "must be a count")
    if row["status"] not in BatchStatus.ALL:
        raise _bad(where, "status", f"must be one of {sorted(BatchStatus.ALL)}")
    if not isinstance(row["stopped_early"], bool):
        raise _bad(where, "stopped_early", "must be true or false")
    if row["decision"] is not None and not isinstance(row["decision"], dict):
        raise _bad(where, "decision", "must be the stop rule's decision (an object) or null")
    if row["error"] is not None and not isinstance(row["error"], str):
        raise _bad(where, "error", "must be a text or null")
    finished = row["run_start_finished"]
    if finished is not None and (
        not isinstance(finished, int)
        or isinstance(finished, bool)
        or not 0 <= finished <= row["matches"]
    ):
        raise _bad(where, "run_start_finished", "must be a count of the batch's matches")
    return row
