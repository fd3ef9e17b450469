"""``POST /batches/import`` against hostile and forged archives, on SQLite and PostgreSQL: each
is refused with the status, the archive's member and the field a person can act on, and
nothing is stored; a genuine one imports with its state derived from its rows."""

from __future__ import annotations

import io
import json
import shutil
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from api_support import RecordingDispatcher, client_for, forget_settings, make_api
from api_support import point_settings_at as point_settings
from fastapi.testclient import TestClient
from sqlalchemy import text

from storage import crud
from storage.archive import export_batch
from storage.archive.layout import SCHEMAS, file_digest, write_table
from storage.archive.zipped import MEMBERS
from storage.db import dispose_engine, get_engine, upgrade
from storage.models import BatchStatus
from storage.settings import Settings
from workers.batches import plan_batch
from workers.chunks import run_chunk
from workers.imports import ImportConflictError, import_folder

REQUEST = {"game": "alquerque", "agents": ["random", "random"], "matches": 6, "seed": 4}

Api = tuple[TestClient, RecordingDispatcher, str]
Columns = dict[str, list[Any]]


@pytest.fixture
def api(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    point_settings(monkeypatch, db_url)
    app, dispatcher = make_api(db_url)
    with client_for(app) as client:
        yield client, dispatcher, db_url
    forget_settings()


@pytest.fixture
def source(tmp_path: Path) -> Iterator[str]:
    """Another database holding a batch of ``REQUEST`` with matches [0, 4) of 6 played."""
    url = f"sqlite:///{tmp_path}/source.db"
    upgrade(url)
    plan = plan_batch(
        settings=Settings(),
        game="alquerque",
        agents=REQUEST["agents"],
        matches=REQUEST["matches"],
        seed=REQUEST["seed"],
    )
    batch = crud.create_batch(get_engine(url), plan=plan)
    run_chunk(batch.id, 0, 4, database_url=url, worker="source")
    yield batch.id
    dispose_engine(url)


def exported(tmp_path: Path, batch_id: str, *, moves: bool = True, name: str = "a") -> Path:
    engine = get_engine(f"sqlite:///{tmp_path}/source.db")
    return export_batch(engine, batch_id, tmp_path / name, moves=moves).path


def as_zip(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name in MEMBERS:
            out.writestr(name, (folder / name).read_bytes())
    return buffer.getvalue()


def forged(
    folder: Path,
    *,
    batch: Callable[[dict[str, Any]], None] | None = None,
    **tables: Callable[[Columns], None],
) -> bytes:
    """The archive with its batch row and tables changed (``matches=...`` changes the columns
    of ``matches.parquet``) and the manifest's digests made to match: a forgery that knows
    the format."""
    copy = folder.with_name(folder.name + "-forged")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy)
    manifest = json.loads((copy / "batch.json").read_text())
    for table, change in tables.items():
        name = f"{table}.parquet"
        columns = pq.read_table(copy / name).to_pydict()
        change(columns)
        write_table(columns, SCHEMAS[name], copy / name)
        manifest["files"][name] = file_digest(copy / name)
    if batch is not None:
        batch(manifest["batch"])
    (copy / "batch.json").write_text(json.dumps(manifest))
    return as_zip(copy)


def upload(client: TestClient, body: bytes, key: str | None = None) -> Any:
    headers = {"Content-Type": "application/zip"}
    if key is not None:
        headers["Idempotency-Key"] = key
    return client.post("/batches/import", content=body, headers=headers)


def stored(url: str) -> dict[str, int]:
    with get_engine(url).connect() as conn:
        return {
            table: int(conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
            for table in ("batch", "chunk", "match", "seat_result", "import_key")
        }


NOTHING = {"batch": 0, "chunk": 0, "match": 0, "seat_result": 0, "import_key": 0}


def refused(api: Api, body: bytes, field: str, words: str, status: int = 422) -> None:
    client, dispatcher, url = api
    answer = upload(client, body, key="k")
    assert answer.status_code == status, answer.text
    assert answer.json()["field"] == field, answer.json()
    assert words in answer.json()["message"], answer.json()
    assert stored(url) == NOTHING
    assert dispatcher.started == []


# --------------------------------------------------------------------------- structure


def test_an_encrypted_member_is_refused_by_name(api: Api, source: str, tmp_path: Path) -> None:
    data = bytearray(as_zip(exported(tmp_path, source)))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zipped:
        first = zipped.getinfo("batch.json")
    # Its flags say encrypted, in the member's header and in the central directory.
    data[first.header_offset + 6] |= 0x1
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 0x1
    refused(api, bytes(data), "batch.json", "is encrypted")


def test_a_bad_deflate_stream_is_refused_by_name(api: Api, source: str, tmp_path: Path) -> None:
    folder = exported(tmp_path, source)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for name in MEMBERS:
            out.writestr(name, (folder / name).read_bytes())
    data = bytearray(buffer.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zipped:
        info = zipped.getinfo("batch.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start : start + 40] = b"\xff" * 40
    refused(api, bytes(data), "batch.json", "cannot be unpacked")


def test_a_manifest_padded_past_its_cap_is_refused(api: Api, source: str, tmp_path: Path) -> None:
    folder = exported(tmp_path, source)
    text_ = (folder / "batch.json").read_text()
    padded = text_ + " " * (17 << 20)  # past the 16 MiB a batch row can need
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for name in MEMBERS:
            out.writestr(name, padded if name == "batch.json" else (folder / name).read_bytes())
    assert len(buffer.getvalue()) < 1 << 20
    refused(api, buffer.getvalue(), "batch.json", "unpacks to")


def test_more_members_than_an_archive_has_are_refused_on_their_count(api: Api) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for i in range(60_000):
            out.writestr(f"m{i}", b"")
    refused(api, buffer.getvalue(), "body", "holds 60,000 members")


def test_a_manifest_nested_200000_deep_is_refused(api: Api, source: str, tmp_path: Path) -> None:
    folder = exported(tmp_path, source)
    manifest = (folder / "batch.json").read_text()
    deep = manifest.replace('"moves": true', '"moves": ' + "[" * 200_000 + "]" * 200_000)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name in MEMBERS:
            out.writestr(name, deep if name == "batch.json" else (folder / name).read_bytes())
    refused(api, buffer.getvalue(), "batch.json", "not readable JSON")


@pytest.mark.parametrize(
    ("depth", "words"), [(100_000, "holds a text of 200,000 bytes"), (20_000, "nested")]
)
def test_stats_nested_deep_are_refused(
    api: Api, source: str, tmp_path: Path, depth: int, words: str
) -> None:
    def deep(columns: Columns) -> None:
        columns["stats"][0] = "[" * depth + "]" * depth

    refused(api, forged(exported(tmp_path, source), matches=deep), "matches.parquet: stats", words)


def test_a_dictionary_bomb_is_caught_from_its_dictionary(
    api: Api, source: str, tmp_path: Path
) -> None:
    folder = exported(tmp_path, source)

    def bomb(columns: Columns) -> None:
        columns["stats"] = ["{" + " " * (1 << 20) + "}"] * len(columns["stats"])

    body = forged(folder, matches=bomb)
    assert len(body) < 64 << 10
    refused(api, body, "matches.parquet: stats", "holds a text of 1,048,578 bytes")


def test_nul_in_a_text_and_integers_past_64_bits_are_refused(
    api: Api, source: str, tmp_path: Path
) -> None:
    folder = exported(tmp_path, source)

    def nul(columns: Columns) -> None:
        columns["agent"][0] = "ran\x00dom"

    refused(api, forged(folder, seats=nul), "seats.parquet: agent", "NUL")

    def label(batch: dict[str, Any]) -> None:
        batch["labels"][0] = "ran\x00dom"

    refused(api, forged(folder, batch=label), "batch.json: batch.labels[0]", "NUL")
    manifest = (folder / "batch.json").read_text().replace('"seed": 4', f'"seed": {2**64}')
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name in MEMBERS:
            out.writestr(name, manifest if name == "batch.json" else (folder / name).read_bytes())
    refused(api, buffer.getvalue(), "batch.json", "does not fit in 64 bits")


@pytest.mark.parametrize("bad", ["../../x", "<b>x</b>", "１２３４５６７８９０１２", "ABCDEF123456"])
def test_ids_not_in_the_documented_format_are_refused(
    api: Api, source: str, tmp_path: Path, bad: str
) -> None:
    def rename(batch: dict[str, Any]) -> None:
        batch["id"] = bad

    body = forged(exported(tmp_path, source), batch=rename)
    refused(api, body, "batch.json: batch.id", "12 lowercase hexadecimal digits")


@pytest.mark.parametrize(
    ("column", "value", "words"),
    [
        ("created_at", "9999-12-31T00:00:00+00:00", "not between 2000 and tomorrow"),
        ("decision", "stop", "must be the stop rule's decision"),
        ("labels", ["<b>x</b>", "random#2"], "differ from what this server plans"),
    ],
)
def test_a_batch_row_no_server_stores_is_refused(
    api: Api, source: str, tmp_path: Path, column: str, value: Any, words: str
) -> None:
    def change(batch: dict[str, Any]) -> None:
        batch[column] = value

    body = forged(exported(tmp_path, source), batch=change)
    refused(api, body, f"batch.json: batch.{column}", words)


# --------------------------------------------------------------------------- forged rows


def flip(columns: Columns) -> None:
    """Swap the two seats' results in every match (a 2-player batch)."""
    for column in ("win_share", "rank"):
        values = columns[column]
        for i in range(0, len(values), 2):
            values[i], values[i + 1] = values[i + 1], values[i]


def decided(folder: Path) -> int:
    shares = pq.read_table(folder / "seats.parquet").column("win_share").to_pylist()
    return sum(share == 1.0 for share in shares)


@pytest.mark.parametrize("moves", [True, False])
def test_a_wholesale_forgery_is_refused(api: Api, source: str, tmp_path: Path, moves: bool) -> None:
    # Every decided result flipped: caught by the rules where moves are stored, and by the
    # agents' replay of a sample (here all four played matches) where they are not.
    folder = exported(tmp_path, source, moves=moves)
    assert decided(folder) >= 1
    refused(api, forged(folder, seats=flip), "seats.parquet: win_share", "match")


def test_three_seats_in_a_two_player_match_are_refused(
    api: Api, source: str, tmp_path: Path
) -> None:
    def third(columns: Columns) -> None:
        for name in columns:
            columns[name].insert(2, columns[name][1])
        columns["seat"][2] = 2

    body = forged(exported(tmp_path, source), seats=third)
    refused(api, body, "seats.parquet: seat", "must seat 0 to 1 once each")


@pytest.mark.parametrize("points", [float("nan"), float("inf"), float("-inf")])
def test_points_that_are_no_numbers_are_refused(
    api: Api, source: str, tmp_path: Path, points: float
) -> None:
    def bad(columns: Columns) -> None:
        columns["points"][0] = points

    refused(api, forged(exported(tmp_path, source), seats=bad), "seats.parquet: points", "points")


def test_negative_plies_and_moves_past_the_cap_are_refused(
    api: Api, source: str, tmp_path: Path
) -> None:
    folder = exported(tmp_path, source)

    def negative(columns: Columns) -> None:
        columns["plies"][0] = -5

    refused(api, forged(folder, matches=negative), "matches.parquet: plies", "-5 plies")

    def endless(columns: Columns) -> None:
        columns["plies"][0] = 33
        columns["moves"][0] = ["a1-b2"] * 99_000

    refused(api, forged(folder, matches=endless), "matches.parquet: moves", "declares")


def test_seeds_not_the_batchs_are_refused(api: Api, source: str, tmp_path: Path) -> None:
    def reseed(columns: Columns) -> None:
        columns["seed"] = [seed + 1 for seed in columns["seed"]]

    body = forged(exported(tmp_path, source), matches=reseed)
    refused(api, body, "matches.parquet: seed", "not the batch's")


def test_a_chunk_whose_counts_are_not_its_matches_is_refused(
    api: Api, source: str, tmp_path: Path
) -> None:
    def recount(columns: Columns) -> None:
        columns["done"][0] -= 1
        columns["failed"][0] += 1

    body = forged(exported(tmp_path, source), chunks=recount)
    refused(api, body, "chunks.parquet: done", "its matches hold")


# --------------------------------------------------------------------------- state


def test_status_done_on_half_a_batch_is_derived_from_its_rows(
    api: Api, source: str, tmp_path: Path
) -> None:
    client, dispatcher, _ = api

    def finished(batch: dict[str, Any]) -> None:
        batch["status"] = "done"
        batch["finished_at"] = batch["created_at"]

    answer = upload(client, forged(exported(tmp_path, source), batch=finished))
    assert answer.status_code == 201, answer.text
    assert answer.json()["status"] == "queued"
    assert client.get(f"/batches/{source}").json()["status"] == "queued"
    assert dispatcher.started == [source]


def test_a_playing_batch_is_never_touched(api: Api, source: str, tmp_path: Path) -> None:
    client, _, url = api
    partial = as_zip(exported(tmp_path, source, name="partial"))
    assert upload(client, partial).status_code == 201
    crud.set_status(get_engine(url), source, BatchStatus.RUNNING)
    before = stored(url)
    # The source plays the tail [4, 6); its fuller export would add it to the running batch.
    run_chunk(source, 4, 6, database_url=f"sqlite:///{tmp_path}/source.db", worker="source")
    fuller = as_zip(exported(tmp_path, source, name="fuller"))
    answer = upload(client, fuller)
    assert answer.status_code == 409, answer.text
    assert source in answer.json()["message"] and "running" in answer.json()["message"]
    assert answer.json()["field"] == "batch.json: batch.id"
    assert stored(url) == before
    # The same archive again adds nothing: it passes, and nothing changes.
    again = upload(client, partial)
    assert again.status_code == 200, again.text
    assert again.json()["matches_added"] == 0 and stored(url) == before


def test_an_imports_key_never_answers_a_submission(api: Api, source: str, tmp_path: Path) -> None:
    client, _, _ = api
    answer = upload(client, as_zip(exported(tmp_path, source)), key="K")
    assert answer.status_code == 201, answer.text
    found = client.get("/batches", params={"key": "K"}).json()["items"]
    assert [b["id"] for b in found] == [source]
    submitted = client.post("/batches", json=REQUEST, headers={"Idempotency-Key": "K"})
    assert submitted.status_code == 202, submitted.text
    assert submitted.json()["id"] != source


def test_imports_beyond_the_setting_are_answered_429(
    db_url: str, source: str, tmp_path: Path
) -> None:
    app, _ = make_api(db_url, max_concurrent_imports=1)
    with client_for(app) as client:
        assert upload(client, b"not a zip").status_code == 422  # the gate is made on first use
        gate = app.state.import_gate
        with gate.slot():  # one import running: the setting's one
            answer = upload(client, as_zip(exported(tmp_path, source)))
        assert answer.status_code == 429, answer.text
        assert int(answer.headers["Retry-After"]) > 0
        assert stored(db_url) == NOTHING
        assert upload(client, as_zip(exported(tmp_path, source))).status_code == 201


def test_concurrent_imports_of_one_new_archive_store_it_once(
    db_url: str, source: str, tmp_path: Path
) -> None:
    folder = exported(tmp_path, source)
    engine = get_engine(db_url)
    outcomes: list[str] = []

    def one() -> None:
        try:
            done = import_folder(engine, folder, settings=Settings())
            outcomes.append("created" if done.summary.created else "unchanged")
        except ImportConflictError:
            outcomes.append("conflict")

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("created") == 1
    assert len(outcomes) == 8
    assert stored(db_url)["match"] == 4 and stored(db_url)["batch"] == 1


def test_the_command_line_refuses_a_forgery_in_one_line(
    sqlite_url: str, source: str, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from api.cli import app

    folder = exported(tmp_path, source)
    body = forged(folder, seats=flip)
    target = tmp_path / "forged-unzipped"
    with zipfile.ZipFile(io.BytesIO(body)) as zipped:
        zipped.extractall(target)
    result = CliRunner().invoke(app, ["import", str(target), "--db", sqlite_url])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: seats.parquet: match")
    assert "Traceback" not in result.output
    good = CliRunner().invoke(app, ["import", str(folder), "--db", sqlite_url])
    assert good.exit_code == 0, good.output
    said = " ".join(good.output.split())
    assert "4 replayed with the agents, 4 replayed through the rules" in said
