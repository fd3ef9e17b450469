"""The OpenAPI document says what the routes do: every answer a route can give is listed with
its media type, a 405 names every method of the path, and the request schema refuses what the
planner refuses for want of a name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from api_support import client_for, make_api
from fastapi.testclient import TestClient
from jsonschema_rs import validator_for

from storage.db import upgrade


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    url = f"sqlite:///{tmp_path_factory.mktemp('schema') / 'p.db'}"
    upgrade(url)
    app, _ = make_api(url)
    with client_for(app) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def spec(client: TestClient) -> dict[str, Any]:
    document: dict[str, Any] = client.get("/openapi.json").json()
    return document


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/batches", {"GET", "POST"}),
        ("DELETE", "/batches", {"GET", "POST"}),
        ("PATCH", "/batches/abcd", {"GET", "DELETE"}),
        ("GET", "/batches/abcd/cancel", {"POST"}),
        ("POST", "/games", {"GET"}),
    ],
)
def test_a_405_names_every_method_the_path_takes(
    client: TestClient, method: str, path: str, allowed: set[str]
) -> None:
    answer = client.request(method, path)
    assert answer.status_code == 405
    named = {m.strip() for m in answer.headers["allow"].split(",")}
    assert named - {"HEAD"} == allowed, answer.headers["allow"]


def test_every_route_of_a_batch_lists_its_404(spec: dict[str, Any]) -> None:
    batch_routes = [
        (method, path, operation)
        for path, operations in spec["paths"].items()
        if "{batch_id}" in path
        for method, operation in operations.items()
    ]
    assert len(batch_routes) >= 8  # read, cancel, matches, a match, export, three reports
    for method, path, operation in batch_routes:
        assert "404" in operation["responses"], (method, path)
        assert "422" in operation["responses"], (method, path)
    compare = spec["paths"]["/compare"]["get"]["responses"]
    assert "404" in compare


def test_each_report_is_labelled_with_its_media_type(spec: dict[str, Any]) -> None:
    def media(path: str) -> set[str]:
        return set(spec["paths"][path]["get"]["responses"]["200"]["content"])

    assert media("/batches/{batch_id}/report.csv") == {"text/csv"}
    assert media("/batches/{batch_id}/report.html") == {"text/html"}
    assert media("/batches/{batch_id}/report") == {"application/json"}


def test_the_report_csv_is_sent_as_csv(client: TestClient) -> None:
    made = client.post("/batches", json={"game": "alquerque", "agents": ["random"], "matches": 2})
    answer = client.get(f"/batches/{made.json()['id']}/report.csv")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/csv")


def body_schema(spec: dict[str, Any]) -> Any:
    """A validator of ``POST /batches``' body by the document's own schema (JSON Schema, as
    schemathesis and clients read it), its references resolved inside the document."""
    schema = {**spec["components"]["schemas"]["BatchCreate"], "components": spec["components"]}
    return validator_for(schema)


@pytest.mark.parametrize(
    "agents",
    [[""], [{}], [{"name": ""}], [{"iterations": 5}], ["x" * 201]],
    ids=["empty name", "empty object", "empty object name", "object without name", "too long"],
)
def test_the_schema_refuses_agents_without_a_name(
    spec: dict[str, Any], client: TestClient, agents: list[Any]
) -> None:
    body = {"game": "alquerque", "agents": agents, "matches": 2}
    assert not body_schema(spec).is_valid(body)
    answer = client.post("/batches", json=body)
    assert answer.status_code == 422 and answer.json()["field"].startswith("agents")


def test_the_schema_admits_the_agents_the_planner_takes(spec: dict[str, Any]) -> None:
    body = {"game": "alquerque", "agents": ["random", {"name": "mcts", "iterations": 5}]}
    assert body_schema(spec).is_valid({**body, "matches": 2})
