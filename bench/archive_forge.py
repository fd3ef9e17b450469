"""Hostile batch archives for ``bench.archive_fuzz``, each built from a genuine export.

An archive is the zip ``GET /batches/{id}/archive`` serves: ``batch.json`` and three Parquet
tables (``storage.archive.layout``). A forgery here changes what it is about and nothing else:
the tables are written again as Parquet with the layout's schemas, and the manifest's file
digests and row counts are recomputed from the forged files, so the forgery passes the digest
check and reaches the checks behind it. Every forged batch gets an id of its own (unless the id
is the forgery), so one stored forgery does not turn the next into a merge that adds nothing.

``KINDS`` lists every kind, each a function of the ``Sources`` (the genuine exports) and the
``Sizes`` (how large the bombs are) that returns the upload's bytes.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import struct
import warnings
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from engines.core import match_seed
from storage.archive.layout import CHUNKS, MANIFEST, MATCHES, SCHEMAS, SEATS, TABLE_FILES
from storage.models import new_batch_id

MEMBERS = (MANIFEST, *TABLE_FILES)
MIB = 1 << 20
_WRITER: dict[str, Any] = {"compression": "zstd", "use_dictionary": True, "version": "2.6"}


@dataclass(frozen=True)
class Sizes:
    """How large the bombs are: rows of the dictionary bomb and the bytes of its one value,
    spaces padding the manifest, members of the zip."""

    bomb_rows: int
    bomb_value: int
    padding: int
    members: int


FULL = Sizes(bomb_rows=1_500, bomb_value=MIB, padding=1000 * MIB, members=60_000)
"""The sizes of the issue's probe (issue 43)."""
DEFAULT = Sizes(bomb_rows=300, bomb_value=MIB, padding=200 * MIB, members=12_000)
"""The bench's default: every kind, the bombs a fifth to a tenth of the probe's."""
SUITE = Sizes(bomb_rows=40, bomb_value=MIB, padding=64 * MIB, members=3_000)
"""The suite's: small enough that the code before the import's rewrite survives them quickly."""


@dataclass(frozen=True)
class Export:
    """An archive's members by name, as bytes: a genuine export (``raw``: its zip as
    served), or a forgery of one."""

    members: dict[str, bytes]
    raw: bytes | None = None

    @classmethod
    def of_zip(cls, data: bytes) -> Export:
        with zipfile.ZipFile(io.BytesIO(data)) as zipped:
            return cls({name: zipped.read(name) for name in zipped.namelist()}, data)

    @property
    def manifest(self) -> dict[str, Any]:
        manifest: dict[str, Any] = json.loads(self.members[MANIFEST])
        return manifest

    @property
    def batch_id(self) -> str:
        return str(self.manifest["batch"]["id"])

    def table(self, name: str) -> dict[str, list[Any]]:
        return pq.read_table(io.BytesIO(self.members[name])).to_pydict()

    def zip(self, compression: int = zipfile.ZIP_STORED) -> bytes:
        return pack(self.members.items(), compression)


def parquet(columns: dict[str, list[Any]], name: str, **options: Any) -> bytes:
    """``columns`` as the Parquet file ``name`` of an archive (its layout's schema)."""
    buffer = io.BytesIO()
    table = pa.Table.from_pydict(columns, schema=SCHEMAS[name])
    pq.write_table(table, buffer, **{**_WRITER, **options})
    return buffer.getvalue()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def forge(
    source: Export,
    *,
    batch: dict[str, Any] | None = None,
    tables: dict[str, dict[str, list[Any]]] | None = None,
    files: dict[str, bytes] | None = None,
    manifest_text: Callable[[dict[str, Any]], bytes] | None = None,
) -> Export:
    """``source`` with its batch row updated by ``batch``, the ``tables`` given written anew
    (or the table ``files`` given as bytes), the manifest's digests and row counts made to fit
    the files, and the manifest written by ``manifest_text`` (JSON by default)."""
    members = dict(source.members)
    for name, columns in (tables or {}).items():
        members[name] = parquet(columns, name)
    members.update(files or {})
    manifest = copy.deepcopy(source.manifest)
    manifest["batch"].update(batch or {})
    manifest["files"] = {name: digest(members[name]) for name in TABLE_FILES}
    manifest["rows"] = {
        name.removesuffix(".parquet"): pq.ParquetFile(io.BytesIO(members[name])).metadata.num_rows
        for name in TABLE_FILES
    }
    write = manifest_text or (lambda m: json.dumps(m, indent=2).encode())
    members[MANIFEST] = write(manifest)
    return Export(members)


def pack(items: Iterable[tuple[str, bytes]], compression: int = zipfile.ZIP_STORED) -> bytes:
    """A zip of ``items`` in order (names may repeat)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Duplicate name": meant
        with zipfile.ZipFile(buffer, "w", compression=compression) as zipped:
            for name, data in items:
                zipped.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data, compression)
    return buffer.getvalue()


@dataclass
class Sources:
    """The genuine exports the forgeries start from, from the server under test.

    ``genuine``: a finished batch the server no longer holds (Alquerque, random agents).
    ``twin``: the finished export of a batch defined as ``running_id``, which the server holds
    with matches [0, ``played``) played. ``crowd``: another finished batch, for the concurrent
    imports.
    """

    genuine: Export
    twin: Export
    running_id: str
    played: int
    crowd: Export
    ids: list[str] = field(default_factory=list)

    def fresh(self) -> Export:
        """The genuine export under an id of its own."""
        self.ids.append(new_batch_id())
        return forge(self.genuine, batch={"id": self.ids[-1]})


# --------------------------------------------------------------------------- bombs


def dictionary_bomb(sources: Sources, sizes: Sizes) -> bytes:
    """A match table of ``bomb_rows`` rows whose ``stats`` share one dictionary-encoded value
    of ``bomb_value`` bytes: a few kilobytes of Parquet that decode to rows × value. The batch
    is made as large as the table (one chunk over every match, seeds the batch's), so only a
    bound on what the tables decode to stops it."""
    base = sources.fresh()
    rows = sizes.bomb_rows
    value = '{"x":"' + "x" * (sizes.bomb_value - 8) + '"}'
    matches, seats = base.table(MATCHES), base.table(SEATS)
    count = len(matches["match_index"])
    per = len(seats["match_index"]) // count
    seed = base.manifest["batch"]["seed"]
    out = {name: [column[i % count] for i in range(rows)] for name, column in matches.items()}
    out |= {"match_index": list(range(rows)), "seed": [match_seed(seed, i) for i in range(rows)]}
    seat_rows = {
        name: [column[i % (count * per)] for i in range(rows * per)]
        for name, column in seats.items()
    }
    seat_rows["match_index"] = [i // per for i in range(rows * per)]
    chunks = base.table(CHUNKS)
    one = {name: column[:1] for name, column in chunks.items()}
    one |= {"start": [0], "stop": [rows], "done": [rows], "failed": [0]}
    bomb = _dictionary_column(out, "stats", value)
    return forge(
        base,
        batch={"matches": rows},
        tables={CHUNKS: one, SEATS: seat_rows},
        files={MATCHES: bomb},
    ).zip()


def _dictionary_column(columns: dict[str, list[Any]], name: str, value: str) -> bytes:
    """The match table ``columns`` with column ``name`` holding ``value`` on every row, one
    dictionary entry, never materialised here. No Arrow schema is stored, so a reader takes
    the column for the plain string the layout declares and decodes every row."""
    rows = len(columns["match_index"])
    arrays, fields = [], []
    for declared in SCHEMAS[MATCHES]:
        if declared.name == name:
            indices = pa.array([0] * rows, pa.int32())
            array: pa.Array = pa.DictionaryArray.from_arrays(indices, pa.array([value]))
            declared = pa.field(name, array.type, nullable=False)
        else:
            array = pa.array(columns[declared.name], declared.type)
        arrays.append(array)
        fields.append(declared)
    buffer = io.BytesIO()
    pq.write_table(
        pa.Table.from_arrays(arrays, schema=pa.schema(fields)),
        buffer,
        **_WRITER,
        store_schema=False,
        dictionary_pagesize_limit=2 * len(value) + MIB,
    )
    return buffer.getvalue()


def padded_manifest(sources: Sources, sizes: Sizes) -> bytes:
    """``batch.json`` with ``padding`` spaces before its last brace, deflated (about a
    thousandth of its size), written in pieces so the bench never holds it whole."""
    text = json.dumps(sources.fresh().manifest, indent=2)
    head, tail = text[: text.rindex("}")], "}\n"
    genuine = sources.genuine.members
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        with zipped.open(MANIFEST, "w", force_zip64=True) as sink:
            sink.write(head.encode())
            piece, left = b" " * MIB, sizes.padding
            while left > 0:
                sink.write(piece[: min(left, MIB)])
                left -= MIB
            sink.write(tail.encode())
        for name in TABLE_FILES:
            zipped.writestr(name, genuine[name])
    return buffer.getvalue()


def many_members(sources: Sources, sizes: Sizes) -> bytes:
    """``members`` empty members, each named as an archive's file (so no name is refused on
    its own): only a linear check of repeats refuses it in time."""
    return pack((MEMBERS[i % len(MEMBERS)], b"") for i in range(sizes.members))


# --------------------------------------------------------------------------- forged rows


def _tables(export: Export) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    return export.table(MATCHES), export.table(SEATS)


def winner_flipped(sources: Sources, sizes: Sizes) -> bytes:
    """Every decided match's result turned round: the winner's share and rank to the loser."""
    base = sources.fresh()
    seats = base.table(SEATS)
    shares, ranks = seats["win_share"], seats["rank"]
    for i in range(0, len(shares), 2):
        if shares[i] != shares[i + 1]:
            shares[i], shares[i + 1] = shares[i + 1], shares[i]
            ranks[i], ranks[i + 1] = ranks[i + 1], ranks[i]
    return forge(base, tables={SEATS: seats}).zip()


def three_seats(sources: Sources, sizes: Sizes) -> bytes:
    """A third seat in the first match of a two-player batch."""
    base = sources.fresh()
    seats = base.table(SEATS)
    extra = {"seat": 2, "rank": 3, "win_share": 0.0, "points": 0.0}
    for name, column in seats.items():
        column.insert(2, extra.get(name, column[0]))
    return forge(base, tables={SEATS: seats}).zip()


def _seat_value(column: str, value: Any) -> Callable[[Sources, Sizes], bytes]:
    def build(sources: Sources, sizes: Sizes) -> bytes:
        base = sources.fresh()
        seats = base.table(SEATS)
        seats[column][0] = value
        return forge(base, tables={SEATS: seats}).zip()

    build.__doc__ = f"The first seat's {column} set to {value!r}."
    return build


def _match_change(doc: str, change: Callable[[dict[str, list[Any]]], None]) -> Callable[..., bytes]:
    def build(sources: Sources, sizes: Sizes) -> bytes:
        base = sources.fresh()
        matches = base.table(MATCHES)
        change(matches)
        return forge(base, tables={MATCHES: matches}).zip()

    build.__doc__ = doc
    return build


def _set_first(column: str, value: Any) -> Callable[[dict[str, list[Any]]], None]:
    def change(matches: dict[str, list[Any]]) -> None:
        matches[column][0] = value

    return change


def _moves_past_cap(matches: dict[str, list[Any]]) -> None:
    matches["plies"][0] = 33
    matches["moves"][0] = [matches["moves"][0][0]] * 99_000


def _foreign_seeds(matches: dict[str, list[Any]]) -> None:
    matches["seed"] = [(seed + 1) % (1 << 63) for seed in matches["seed"]]


def done_on_half(sources: Sources, sizes: Sizes) -> bytes:
    """The batch said done, with the chunks of only its first half (and their results)."""
    base = sources.fresh()
    matches, seats = _tables(base)
    half = base.manifest["batch"]["matches"] // 2
    chunks = base.table(CHUNKS)
    keep = [i for i, stop in enumerate(chunks["stop"]) if stop <= half]
    return forge(
        base,
        tables={
            CHUNKS: {name: [column[i] for i in keep] for name, column in chunks.items()},
            MATCHES: _rows_below(matches, half),
            SEATS: _rows_below(seats, half),
        },
    ).zip()


def _rows_below(columns: dict[str, list[Any]], stop: int, start: int = 0) -> dict[str, list[Any]]:
    keep = [i for i, index in enumerate(columns["match_index"]) if start <= index < stop]
    return {name: [column[i] for i in keep] for name, column in columns.items()}


def _labels(label: str) -> Callable[[Sources, Sizes], bytes]:
    def build(sources: Sources, sizes: Sizes) -> bytes:
        base = sources.fresh()
        seats = base.table(SEATS)
        pairs = zip(seats["agent_index"], seats["agent"], strict=True)
        seats["agent"] = [label if index == 0 else name for index, name in pairs]
        return forge(base, tables={SEATS: seats}).zip()

    build.__doc__ = f"The first agent's seat rows labelled {label!r}."
    return build


def running_tail(sources: Sources, sizes: Sizes) -> bytes:
    """The chunks over the unplayed tail of a batch the server is playing, with the results a
    twin of it played elsewhere (genuine ones), and the twin's ``done``."""
    twin = sources.twin
    chunks = twin.table(CHUNKS)
    played = sources.played
    keep = [i for i, start in enumerate(chunks["start"]) if start >= played]
    matches, seats = _tables(twin)
    total = twin.manifest["batch"]["matches"]
    return forge(
        twin,
        batch={"id": sources.running_id},
        tables={
            CHUNKS: {name: [column[i] for i in keep] for name, column in chunks.items()},
            MATCHES: _rows_below(matches, total, played),
            SEATS: _rows_below(seats, total, played),
        },
    ).zip()


# --------------------------------------------------------------------------- ids and text


def _batch_field(doc: str, **values: Any) -> Callable[[Sources, Sizes], bytes]:
    def build(sources: Sources, sizes: Sizes) -> bytes:
        return forge(sources.fresh(), batch=values).zip()

    build.__doc__ = doc
    return build


def nested_manifest(sources: Sources, sizes: Sizes) -> bytes:
    """``batch.json`` holding an array nested 200,000 deep."""
    depth = 200_000

    def text(manifest: dict[str, Any]) -> bytes:
        body = json.dumps(manifest)
        return (body[:-1] + ', "notes": ' + "[" * depth + "]" * depth + "}").encode()

    return forge(sources.fresh(), manifest_text=text).zip()


def _nested_stats(matches: dict[str, list[Any]]) -> None:
    depth = 100_000
    matches["stats"][0] = '{"x": ' + "[" * depth + "]" * depth + "}"


# --------------------------------------------------------------------------- the zip itself


def _patch_flags(data: bytes, name: str, bits: int) -> bytes:
    """Set general-purpose flag ``bits`` of member ``name`` in its local header and its
    central directory entry."""
    out = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as zipped:
        offset, entry = zipped.getinfo(name).header_offset, zipped.start_dir
    for at in (offset + 6, _central_entry(out, entry, name) + 8):
        (flags,) = struct.unpack_from("<H", out, at)
        struct.pack_into("<H", out, at, flags | bits)
    return bytes(out)


def _central_entry(data: bytearray, entry: int, name: str) -> int:
    """Where member ``name``'s entry starts in the central directory starting at ``entry``."""
    while data[entry : entry + 4] == b"PK\x01\x02":
        lengths = struct.unpack_from("<HHH", data, entry + 28)
        if data[entry + 46 : entry + 46 + lengths[0]] == name.encode():
            return entry
        entry += 46 + sum(lengths)
    raise ValueError(f"no member {name!r} in the central directory")


def encrypted_member(sources: Sources, sizes: Sizes) -> bytes:
    """``matches.parquet`` marked encrypted (flag bit 0): no reader can open it without a
    password."""
    return _patch_flags(sources.fresh().zip(), MATCHES, 0x1)


def bad_deflate(sources: Sources, sizes: Sizes) -> bytes:
    """``matches.parquet`` deflated, its compressed bytes overwritten: an invalid stream."""
    data = bytearray(sources.fresh().zip(zipfile.ZIP_DEFLATED))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zipped:
        info = zipped.getinfo(MATCHES)
    name_length, extra_length = struct.unpack_from("<HH", data, info.header_offset + 26)
    start = info.header_offset + 30 + name_length + extra_length
    data[start : start + info.compress_size] = b"\xff" * info.compress_size
    return bytes(data)


def genuine_crowd(sources: Sources, sizes: Sizes) -> bytes:
    """A genuine archive the server lacks, sent by several clients at once."""
    assert sources.crowd.raw is not None
    return sources.crowd.raw


BIG = 2**64 + 1
KINDS: dict[str, Callable[[Sources, Sizes], bytes]] = {
    "dictionary bomb": dictionary_bomb,
    "padded batch.json": padded_manifest,
    "many members": many_members,
    "winner flipped": winner_flipped,
    "3 seats in 2-player": three_seats,
    "points NaN": _seat_value("points", float("nan")),
    "points +inf": _seat_value("points", float("inf")),
    "points -inf": _seat_value("points", float("-inf")),
    "plies -5": _match_change("The first match's plies -5.", _set_first("plies", -5)),
    "99,000 moves": _match_change("99,000 moves in a 33-ply match.", _moves_past_cap),
    "foreign seeds": _match_change("Every seed one more than the batch's.", _foreign_seeds),
    "done on half": done_on_half,
    "markup in names": _labels("<b>x</b><script>alert(1)</script>"),
    "NUL in names": _labels("random\x00x"),
    "running batch's tail": running_tail,
    "id ../../x": _batch_field("The batch id ``../../x``.", id="../../x"),
    "id <b>x</b>": _batch_field("The batch id ``<b>x</b>``.", id="<b>x</b>"),
    "id full-width": _batch_field("A batch id of full-width digits.", id="１２３４５６７８９０"),
    "decision text": _batch_field("The batch's decision a string.", decision="text"),
    "created_at 9999": _batch_field(
        "Created in the year 9999.", created_at="9999-12-31T23:59:59.999999+00:00"
    ),
    "batch.json 200,000 deep": nested_manifest,
    "stats 100,000 deep": _match_change("A match's stats nested 100,000 deep.", _nested_stats),
    "seed past 2^63": _batch_field("The batch's seed 2^64 + 1.", seed=BIG),
    "count past 2^63": _batch_field("run_start_finished 2^64 + 1.", run_start_finished=BIG),
    "encrypted member": encrypted_member,
    "bad deflate": bad_deflate,
    "8 concurrent imports": genuine_crowd,
}
"""Every hostile kind, by the name the table prints, in the order the bench sends them."""
