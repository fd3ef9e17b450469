"""Batches as archives over HTTP, on SQLite and PostgreSQL: a download imports into a fresh
server with the same report, the key it came with finds it when the batch is submitted again,
and hostile uploads get a 4xx naming what is wrong and store nothing."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api_support import RecordingDispatcher, client_for, forget_settings, make_api
from api_support import point_settings_at as point_settings
from fastapi.testclient import TestClient
from sqlalchemy import text

from api import middleware
from storage import crud
from storage.archive import export_batch
from storage.archive.zipped import MEMBERS, pack
from storage.db import dispose_engine, get_engine, upgrade
from storage.models import BatchPlan
from storage.settings import Settings
from workers.batches import plan_batch
from workers.chunks import run_chunk

REQUEST = {"game": "alquerque", "agents": ["random", "random"], "matches": 6, "seed": 4}
KEY = "study-archive-test"

Api = tuple[TestClient, RecordingDispatcher, str]


@pytest.fixture
def api(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    point_settings(monkeypatch, db_url)
    app, dispatcher = make_api(db_url)
    with client_for(app) as client:
        yield client, dispatcher, db_url
    forget_settings()


@pytest.fixture
def source(tmp_path: Path) -> Iterator[str]:
    """Another database, where a batch of ``REQUEST`` has matches [0, 4) of 6 played."""
    url = f"sqlite:///{tmp_path}/source.db"
    upgrade(url)
    batch = crud.create_batch(get_engine(url), plan=planned())
    run_chunk(batch.id, 0, 4, database_url=url, worker="source")
    yield batch.id
    dispose_engine(url)


def planned(**changes: Any) -> BatchPlan:
    """``REQUEST`` (with ``changes``) as a server plans it."""
    request = {**REQUEST, **changes}
    return plan_batch(
        settings=Settings(),
        game=request["game"],
        players=None,
        options={},
        agents=request["agents"],
        matches=request["matches"],
        seed=request["seed"],
        seat_policy=None,
        chunk_size=None,
        max_plies=None,
    )


def source_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/source.db"


def zipped(folder: Path, **changes: bytes) -> bytes:
    """The archive folder as a zip, with some members' bytes replaced (or added)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name in MEMBERS:
            if name not in changes:
                out.writestr(name, (folder / name).read_bytes())
        for name, data in changes.items():
            out.writestr(name, data)
    return buffer.getvalue()


def renamed(folder: Path, name: str, to: str) -> bytes:
    """The archive folder as a zip with the member ``name`` stored as ``to``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for member in MEMBERS:
            out.writestr(to if member == name else member, (folder / member).read_bytes())
    return buffer.getvalue()


def archive_of(tmp_path: Path, batch_id: str) -> Path:
    return export_batch(get_engine(source_url(tmp_path)), batch_id, tmp_path / "archive").path


def upload(client: TestClient, body: bytes, key: str | None = KEY) -> Any:
    headers = {"Content-Type": "application/zip"}
    if key is not None:
        headers["Idempotency-Key"] = key
    return client.post("/batches/import", content=body, headers=headers)


def stored(url: str) -> tuple[int, int]:
    with get_engine(url).connect() as conn:
        batches = conn.execute(text("SELECT count(*) FROM batch")).scalar_one()
        keys = conn.execute(text("SELECT count(*) FROM idempotency_key")).scalar_one()
        keys += conn.execute(text("SELECT count(*) FROM import_key")).scalar_one()
    return int(batches), int(keys)


def test_an_archive_goes_to_another_server_and_its_key_finds_it(
    api: Api, source: str, tmp_path: Path
) -> None:
    client, dispatcher, url = api
    # The source's batch, served by an app on the source database, downloaded as a zip.
    source_app, _ = make_api(source_url(tmp_path))
    with client_for(source_app) as source_client:
        download = source_client.get(f"/batches/{source}/archive")
        assert download.status_code == 200, download.text
        assert download.headers["content-type"] == "application/zip"
        served_report = source_client.get(f"/batches/{source}/report").json()
    expected = io.BytesIO()
    pack(archive_of(tmp_path, source), expected)
    assert download.content == expected.getvalue()

    answer = upload(client, download.content)
    assert answer.status_code == 201, answer.text
    imported = answer.json()
    assert (imported["id"], imported["created"], imported["matches_added"]) == (source, True, 4)
    assert (imported["replayed"], imported["replayed_moves"]) == (4, 4)
    # Unfinished, it is started here: matches 4 and 5 are still to play. Its status is
    # what its rows say (queued here), not the source's (running there).
    assert dispatcher.started == [source]
    assert imported["status"] == "queued"
    report = client.get(f"/batches/{source}/report").json()
    assert report["batch"].pop("status") == "queued"
    assert served_report["batch"].pop("status") == "running"
    assert report == served_report
    assert [b["id"] for b in client.get("/batches", params={"key": KEY}).json()["items"]] == [
        source
    ]

    # Sent twice, nothing changes and nothing starts again.
    twice = upload(client, download.content)
    assert twice.status_code == 200, twice.text
    assert (twice.json()["created"], twice.json()["matches_added"]) == (False, 0)
    assert dispatcher.started == [source]
    assert stored(url) == (1, 1)


def test_a_batch_unknown_or_unreadable_has_no_archive(api: Api) -> None:
    client, _, _ = api
    missing = client.get("/batches/abcdef12/archive")
    assert missing.status_code == 404 and "abcdef12" in missing.json()["message"]


def refused(api: Api, body: bytes, status: int, field: str, words: str) -> None:
    client, dispatcher, url = api
    answer = upload(client, body)
    assert answer.status_code == status, answer.text
    found = answer.json()
    assert found["field"] == field, found
    assert words in found["message"], found
    assert "/tmp" not in found["message"] and "playtester-import" not in found["message"]
    assert stored(url) == (0, 0)
    assert dispatcher.started == []


def test_hostile_uploads_are_refused_by_name_and_store_nothing(
    api: Api, source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = archive_of(tmp_path, source)
    refused(api, b"PK\x03\x04 not really", 422, "body", "not a zip file")
    outside = zipped(folder, **{"../batch.json": b"{}"})
    refused(api, outside, 422, "body", "the zip holds 5 members; a batch archive holds 4")
    refused(api, renamed(folder, "batch.json", "../batch.json"), 422, "body", "outside the archive")
    refused(
        api, renamed(folder, "batch.json", "notes.txt"), 422, "body", "'notes.txt' is not a file"
    )

    garbage = zipped(folder, **{"matches.parquet": b"PAR1 garbage PAR1"})
    refused(api, garbage, 422, "matches.parquet", "matches.parquet: its content is not what")
    manifest = json.loads((folder / "batch.json").read_text())
    manifest["files"]["matches.parquet"] = hashlib_of(b"PAR1 garbage PAR1")
    forged = zipped(
        folder,
        **{"matches.parquet": b"PAR1 garbage PAR1", "batch.json": json.dumps(manifest).encode()},
    )
    refused(api, forged, 422, "matches.parquet", "not a readable Parquet file")

    greedy = json.loads((folder / "batch.json").read_text())
    greedy["batch"]["agents"][0]["name"] = "no-such-agent"
    refused(
        api,
        zipped(folder, **{"batch.json": json.dumps(greedy).encode()}),
        422,
        "batch.json: batch.agents[0].name",
        "no-such-agent",
    )

    monkeypatch.setitem(middleware.ROUTE_LIMITS, "/batches/import", 1000)
    refused(api, zipped(folder), 413, "body", "larger than 1000 bytes")


def hashlib_of(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def test_an_archive_of_a_batch_stored_with_another_definition_is_refused(
    api: Api, source: str, tmp_path: Path
) -> None:
    client, dispatcher, url = api
    folder = archive_of(tmp_path, source)
    # This server holds a batch with the archive's id, planned from another seed.
    crud.create_batch(get_engine(url), plan=planned(seed=9).model_copy(update={"id": source}))
    before = client.get(f"/batches/{source}").json()
    answer = upload(client, zipped(folder))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "batch.json"
    assert f"batch {source} is stored here with a different definition" in answer.json()["message"]
    assert "seed" in answer.json()["message"]
    assert client.get(f"/batches/{source}").json() == before
    assert stored(url) == (1, 0) and dispatcher.started == []
