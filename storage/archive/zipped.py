"""An archive folder as one zip file, for sending it over HTTP, and the checks that unpack a zip
from someone else.

A zip holds exactly the folder's files (``layout.TABLE_FILES`` and the manifest) at its top,
stored as they are (the Parquet tables are compressed already), with fixed times, so packing a
folder twice gives the same bytes. :func:`unpack` refuses anything else before it writes a
byte: a file that is no zip, a member outside the folder (``../x``, ``/x``, ``a/b``), a member
no archive holds, a repeated member, and members whose unpacked size passes ``max_bytes`` (a
zip bomb), counted as they are written, whatever the zip declares.
"""

from __future__ import annotations

import shutil
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq

from storage.archive.layout import MANIFEST, TABLE_FILES, ArchiveError

MEMBERS = (MANIFEST, *TABLE_FILES)
"""What an archive's zip holds, in the order it is packed."""
MAX_UNPACKED_BYTES = 1 << 30
"""Largest total size of an archive's files once unpacked (1 GiB): a zip that says or turns
out to hold more is refused."""
MAX_DECODED_BYTES = 256 << 20
"""Largest total size of an archive's table data once decompressed (256 MiB): what the Parquet
footers declare (:func:`check_decoded`), and what the texts of its rows expand to, counted as
they are decoded (``layout.Budget``). A committed 10,000-match batch decodes to about 8 MB."""
MAX_MANIFEST_BYTES = 16 << 20
"""Largest ``batch.json`` (16 MiB). The largest in every committed study is 3.3 KB; what makes
a batch row large is a book of openings, held in its ``variation``: at most
``engines.variation.MAX_BOOK_LINES`` (10,000) lines of at most 20 plies, about 80 bytes a
move as the manifest is indented, so 16 MiB; a manifest padded past that is refused while it
is unpacked, after 16 MiB written at most."""
_PIECE = 1 << 20
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def pack(folder: Path, target: IO[bytes]) -> None:
    """Write the archive folder ``folder`` to ``target`` as a zip."""
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as zipped:
        for name in MEMBERS:
            info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
            info.external_attr = 0o644 << 16
            with (folder / name).open("rb") as source, zipped.open(info, "w") as sink:
                shutil.copyfileobj(source, sink, _PIECE)


def _outside(name: str) -> bool:
    path = PurePosixPath(name.replace("\\", "/"))
    return path.is_absolute() or len(path.parts) != 1 or ".." in path.parts or ":" in name


def unpack(
    source: Path | IO[bytes],
    folder: Path,
    *,
    max_bytes: int = MAX_UNPACKED_BYTES,
    max_manifest: int = MAX_MANIFEST_BYTES,
) -> None:
    """Check the zip ``source`` and write its files into ``folder`` (made if need be).

    ``ArchiveError`` names what is wrong, and then ``folder`` holds none of the zip's files.
    Every check on the zip's directory is linear in its members, and a zip of more members
    than an archive has is refused on its count alone. The manifest may hold at most
    ``max_manifest`` bytes, all files together ``max_bytes``: both counted as they are
    written, whatever the zip declares. The files are not read here: ``read_archive``
    checks them.
    """
    declared = _declared_members(source)
    if declared is not None and declared > len(MEMBERS):
        raise ArchiveError(
            f"the zip holds {declared:,} members; a batch archive holds {len(MEMBERS)} "
            f"({', '.join(MEMBERS)})"
        )
    try:
        zipped = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise ArchiveError(f"the upload is not a zip file ({exc})") from None
    with zipped:
        infos = zipped.infolist()
        if len(infos) > len(MEMBERS):
            raise ArchiveError(
                f"the zip holds {len(infos):,} members; a batch archive holds {len(MEMBERS)} "
                f"({', '.join(MEMBERS)})"
            )
        seen: set[str] = set()
        for info in infos:
            _check_member(info, seen)
        missing = [name for name in MEMBERS if name not in seen]
        if missing:
            raise ArchiveError(
                f"{missing[0]} is missing (a batch archive holds {len(MEMBERS)})",
                member=missing[0],
            )
        declared = sum(info.file_size for info in infos)
        if declared > max_bytes:
            raise ArchiveError(
                f"the archive unpacks to {declared:,} bytes; at most {max_bytes:,} are accepted"
            )
        folder.mkdir(parents=True, exist_ok=True)
        try:
            _extract(zipped, infos, folder, max_bytes, max_manifest)
        except BaseException:
            for name in MEMBERS:
                (folder / name).unlink(missing_ok=True)
            raise


_END = b"PK\x05\x06"
_END_SIZE = 22


def _declared_members(source: Path | IO[bytes]) -> int | None:
    """The member count the zip's end record declares, read from its last 64 KiB before the
    central directory is parsed (a directory of 60,000 members costs a second to parse);
    None when there is no plain end record (zip64, or no zip: ``ZipFile`` says which)."""
    stream = source.open("rb") if isinstance(source, Path) else source
    try:
        start = stream.tell()
        size = stream.seek(0, 2)
        stream.seek(max(0, size - _END_SIZE - 0xFFFF))
        tail = stream.read()
        stream.seek(start)
    finally:
        if isinstance(source, Path):
            stream.close()
    at = tail.rfind(_END)
    if at < 0 or len(tail) < at + _END_SIZE:
        return None
    total = int.from_bytes(tail[at + 10 : at + 12], "little")
    return None if total == 0xFFFF else total


def _check_member(info: zipfile.ZipInfo, seen: set[str]) -> None:
    name = info.filename
    if _outside(name):
        raise ArchiveError(
            f"member {name[:120]!r} is a path outside the archive's folder; a batch "
            f"archive holds {', '.join(MEMBERS)} at its top"
        )
    if name not in MEMBERS:
        raise ArchiveError(
            f"member {name[:120]!r} is not a file of a batch archive ({', '.join(MEMBERS)})"
        )
    if name in seen:
        raise ArchiveError(f"member {name!r} appears more than once", member=name)
    seen.add(name)
    if info.flag_bits & 0x1:
        raise ArchiveError(f"member {name!r} is encrypted; refused", member=name)


def _extract(
    zipped: zipfile.ZipFile,
    infos: list[zipfile.ZipInfo],
    folder: Path,
    max_bytes: int,
    max_manifest: int,
) -> None:
    written = 0
    for info in infos:
        cap = max_manifest if info.filename == MANIFEST else max_bytes
        if info.file_size > cap:
            raise ArchiveError(
                f"member {info.filename!r} unpacks to {info.file_size:,} bytes; at most {cap:,}",
                member=info.filename,
            )
        own = 0
        try:
            with zipped.open(info) as member, (folder / info.filename).open("wb") as sink:
                while piece := member.read(_PIECE):
                    written += len(piece)
                    own += len(piece)
                    if own > cap or written > max_bytes:
                        raise ArchiveError(
                            f"member {info.filename!r} unpacks to more than "
                            f"{min(cap, max_bytes):,} bytes; refused",
                            member=info.filename,
                        )
                    sink.write(piece)
        except ArchiveError:
            raise
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
            raise ArchiveError(
                f"member {info.filename!r} cannot be unpacked ({exc})", member=info.filename
            ) from None
        except (NotImplementedError, RuntimeError, zlib.error) as exc:
            raise ArchiveError(
                f"member {info.filename!r} cannot be unpacked ({exc})", member=info.filename
            ) from None


def check_decoded(folder: Path, *, max_bytes: int = MAX_DECODED_BYTES) -> None:
    """Refuse tables that would decompress to more than ``max_bytes`` in memory, from what
    their Parquet footers declare; a file with no readable footer is left for ``read_archive``
    to refuse by name."""
    total = 0
    for name in TABLE_FILES:
        try:
            metadata = pq.ParquetFile(folder / name).metadata
        except (pa.ArrowException, OSError):
            continue
        total += sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    if total > max_bytes:
        raise ArchiveError(
            f"the archive's tables decompress to {total:,} bytes; at most {max_bytes:,} are "
            "accepted"
        )


def member_of(message: str, folder: Path) -> tuple[str, str | None]:
    """An ``ArchiveError`` message about files unpacked in ``folder`` as the uploader sees it:
    the file names without the folder, and the archive member it is about (None if none)."""
    prefix = f"{folder}/"
    member = next((name for name in MEMBERS if message.startswith(prefix + name)), None)
    cleaned = message.replace(prefix, "").replace(str(folder), "the archive")
    return cleaned, member
