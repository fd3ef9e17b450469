"""What reading an archive from elsewhere may cost: the manifest's JSON, the zip's members and
each Parquet table are refused by what they declare, before the data is decoded."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storage.archive import ArchiveError
from storage.archive.layout import MATCH_SCHEMA, MATCHES, Budget, read_table
from storage.archive.manifest import load_json
from storage.archive.pages import page_costs
from storage.archive.zipped import MEMBERS, unpack


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[" * 100 + "]" * 100, "nested 100 deep"),
        ("[" * 200_000 + "]" * 200_000, "nested more than"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": 1e999}', "is not finite"),
        (f'{{"a": {2**64}}}', "does not fit in 64 bits"),
    ],
)
def test_json_a_column_cannot_hold_is_refused(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        load_json(text)


def test_json_within_bounds_reads() -> None:
    assert load_json('{"a": [1, 2.5, "x"], "b": -9223372036854775808}') == {
        "a": [1, 2.5, "x"],
        "b": -(2**63),
    }


def _rows(n: int, stats: str, moves: list[str]) -> dict[str, list]:
    return {
        "match_index": list(range(n)),
        "seed": [0] * n,
        "ok": [True] * n,
        "plies": [len(moves)] * n,
        "ended_by": ["normal"] * n,
        "duration": [0.0] * n,
        "moves": [moves] * n,
        "stats": [stats] * n,
        "error": [None] * n,
        "first_seat": [0] * n,
        "opening": [0] * n,
    }


def _write(folder: Path, columns: dict[str, list]) -> None:
    table = pa.Table.from_pydict(columns, schema=MATCH_SCHEMA)
    pq.write_table(table, folder / MATCHES, compression="zstd", use_dictionary=True)


def _bomb(folder: Path, rows: int, text: str) -> None:
    """``rows`` matches whose stats are all ``text``, written as indices into a dictionary that
    holds it once (never expanded here either)."""
    columns = _rows(rows, "{}", [])
    names = MATCH_SCHEMA.names
    arrays = [pa.array(columns[n], type=MATCH_SCHEMA.field(n).type) for n in names]
    stats = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array([text]))
    arrays[names.index("stats")] = stats
    at = names.index("stats")
    schema = MATCH_SCHEMA.set(at, pa.field("stats", stats.type, nullable=False))
    table = pa.Table.from_arrays(arrays, schema=schema)
    pq.write_table(
        table,
        folder / MATCHES,
        compression="zstd",
        store_schema=False,  # the file's schema says string, as an export's does
        dictionary_pagesize_limit=1 << 23,
    )


def test_a_dictionary_bomb_is_refused_from_its_dictionary(tmp_path: Path) -> None:
    # One 1 MiB text on 1,500 rows: a file of a few KB that would expand to 1.5 GB.
    _bomb(tmp_path, 1500, "{" + " " * (1 << 20) + "}")
    assert (tmp_path / MATCHES).stat().st_size < 64 << 10
    with pytest.raises(ArchiveError, match="column stats holds a text of 1,048,578 bytes") as e:
        read_table(tmp_path, MATCHES, max_rows=1500, max_list=10, budget=Budget(1 << 30))
    assert (e.value.member, e.value.field) == (MATCHES, "stats")


def test_rows_and_list_items_past_the_batchs_size_are_refused_before_decoding(
    tmp_path: Path,
) -> None:
    _write(tmp_path, _rows(20, "{}", ["a1"] * 50))
    with pytest.raises(ArchiveError, match="20 rows; the manifest's batch allows at most 10"):
        read_table(tmp_path, MATCHES, max_rows=10)
    # 50 moves a match where the batch's cap is 10: counted from the page headers.
    with pytest.raises(ArchiveError, match="column moves declares") as e:
        read_table(tmp_path, MATCHES, max_rows=20, max_list=10)
    assert e.value.field == "moves"
    costs = page_costs(tmp_path / MATCHES, max_page_bytes=1 << 20)
    assert costs["moves.list.element"].values >= 20 * 50
    assert read_table(tmp_path, MATCHES, max_rows=20, max_list=50)["moves"][0] == ["a1"] * 50


def test_decoded_texts_are_counted_against_the_budget(tmp_path: Path) -> None:
    _write(tmp_path, _rows(100, "{" + " " * 1000 + "}", []))
    with pytest.raises(ArchiveError, match="decode to more than 50,000 bytes"):
        read_table(tmp_path, MATCHES, max_rows=100, max_list=1, budget=Budget(50_000))


def test_a_zip_of_more_members_than_an_archive_has_is_refused_on_its_count(
    tmp_path: Path,
) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name in (*MEMBERS, "extra"):
            out.writestr(name, b"")
    with pytest.raises(ArchiveError, match="holds 5 members"):
        unpack(io.BytesIO(buffer.getvalue()), tmp_path / "x")


def test_a_manifest_past_its_cap_is_refused_as_it_is_written(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for name in MEMBERS:
            out.writestr(name, b" " * 5000 if name == "batch.json" else b"")
    with pytest.raises(ArchiveError, match=r"'batch.json' unpacks to 5,000 bytes") as e:
        unpack(io.BytesIO(buffer.getvalue()), tmp_path / "x", max_manifest=4096)
    assert e.value.member == "batch.json"
    assert not (tmp_path / "x" / "batch.json").exists()


def test_the_tables_of_a_batch_not_yet_played_read_as_empty(tmp_path: Path) -> None:
    # pyarrow writes an empty table's columns with a dictionary page and a data page offset of
    # 0 (the file's magic number), or with no page at all (a boolean column): both read empty.
    from storage.archive.layout import CHUNK_SCHEMA, CHUNKS, SEAT_SCHEMA, SEATS, write_table

    for name, schema in ((CHUNKS, CHUNK_SCHEMA), (MATCHES, MATCH_SCHEMA), (SEATS, SEAT_SCHEMA)):
        write_table({field: [] for field in schema.names}, schema, tmp_path / name)
        costs = page_costs(tmp_path / name, max_page_bytes=1 << 20)
        assert all(cost.values == 0 for cost in costs.values()), name
