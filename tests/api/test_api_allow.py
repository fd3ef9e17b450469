"""What a client reads from the schema is what the server does: the methods ``Allow`` lists are
the ones the OpenAPI document gives the path, and every error, the CSV and HTML reports'
included, is the JSON ``ErrorOut`` the schema declares for it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from api_support import client_for, make_api
from fastapi.testclient import TestClient
from storage_rows import make_plan

from storage import crud
from storage.db import get_engine

METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture
def client(migrated_sqlite_url: str) -> Iterator[TestClient]:
    app, _ = make_api(migrated_sqlite_url)
    with client_for(app) as c:
        yield c


@pytest.mark.parametrize(
    ("path", "template"),
    [
        ("/batches/check", "/batches/check"),
        ("/batches/import", "/batches/import"),
        ("/batches", "/batches"),
        ("/batches/abcd", "/batches/{batch_id}"),
        ("/batches/abcd/report", "/batches/{batch_id}/report"),
        ("/batches/abcd/report.csv", "/batches/{batch_id}/report.csv"),
        ("/batches/abcd/cancel", "/batches/{batch_id}/cancel"),
        ("/games", "/games"),
    ],
)
def test_allow_lists_the_methods_of_the_paths_schema(
    client: TestClient, path: str, template: str
) -> None:
    declared = {m.upper() for m in client.get("/openapi.json").json()["paths"][template]}
    answer = client.options(path)
    assert answer.status_code == 405, answer.text
    assert set(answer.headers["allow"].split(", ")) == declared & {m.upper() for m in METHODS}


@pytest.mark.parametrize("suffix", ["report.csv", "report.html"])
def test_report_files_declare_the_json_errors_they_answer(
    client: TestClient, migrated_sqlite_url: str, suffix: str
) -> None:
    schema = client.get("/openapi.json").json()["paths"][f"/batches/{{batch_id}}/{suffix}"]["get"]
    for code in ("404", "422"):
        assert list(schema["responses"][code]["content"]) == ["application/json"], code
    crud.create_batch(get_engine(migrated_sqlite_url), plan=make_plan(id="abcdef000000"))
    for path, code in ((f"/batches/zz/{suffix}", 422), (f"/batches/feedbeef/{suffix}", 404)):
        answer = client.get(path)
        assert answer.status_code == code, answer.text
        assert answer.headers["content-type"] == "application/json"
        assert {"message", "field"} <= set(answer.json())
