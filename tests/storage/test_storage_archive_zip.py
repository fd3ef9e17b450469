"""An archive's zip from elsewhere: one that unpacks to more than the limit (a zip bomb) is
refused before a byte is written, whatever it holds."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from storage.archive import ArchiveError
from storage.archive.zipped import MEMBERS, unpack


def test_a_zip_unpacking_past_the_limit_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for name in MEMBERS:
            out.writestr(name, b"\0" * 400_000)
    assert len(buffer.getvalue()) < 10_000  # what a zip bomb looks like, in small
    target = tmp_path / "out"
    with pytest.raises(ArchiveError, match="unpacks to 1,600,000 bytes; at most 1,000,000"):
        unpack(io.BytesIO(buffer.getvalue()), target, max_bytes=1_000_000)
    assert not target.exists()
    unpack(io.BytesIO(buffer.getvalue()), target, max_bytes=2_000_000)
    assert sorted(p.name for p in target.iterdir()) == sorted(MEMBERS)
