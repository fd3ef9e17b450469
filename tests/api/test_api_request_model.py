"""The one batch request: the API's schema says what the planner enforces, its refusals name
the field over HTTP as on the command line, and ``plan_batch`` takes it or its keywords."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from api_support import client_for, make_api
from fastapi.testclient import TestClient
from jsonschema_rs import validator_for

from api.schemas import BatchCreate
from engines.core import OptionError
from storage.db import upgrade
from storage.models import definition_key
from storage.settings import Settings
from workers.batches import plan_batch
from workers.request import BatchRequest, build_request
from workers.studies import plan as study_plan

GOOD = {"game": "alquerque", "agents": ["random", "easy"], "matches": 4, "seed": 1}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    url = f"sqlite:///{tmp_path_factory.mktemp('model') / 'p.db'}"
    upgrade(url)
    app, _ = make_api(url)
    with client_for(app) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def admits(client: TestClient) -> Any:
    spec = client.get("/openapi.json").json()
    schema = {**spec["components"]["schemas"]["BatchCreate"], "components": spec["components"]}
    return validator_for(schema).is_valid


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"players": 1}, "players"),
        ({"agents": ["0"]}, "agents[0].name"),
        ({"agents": [{"name": "0"}]}, "agents[0].name"),
        ({"agents": ["random", "nobody:depth=2"]}, "agents[1].name"),
        (
            {"stop_rule": {"type": "precision", "figure": "x", "half_width": 0.1}},
            "stop_rule.figure",
        ),
        (
            {"stop_rule": {"type": "precision", "figure": "score:random", "half_width": 0.7}},
            "stop_rule.half_width",
        ),
        ({"stop_rule": {"agents": ["random"]}}, "stop_rule.agents"),
        ({"stop_rule": {"agents": ["random", "easy"], "alpha": 0}}, "stop_rule.alpha"),
        ({"stop_rule": {"agents": ["random", "easy"], "speed": 1}}, "stop_rule.speed"),
    ],
)
def test_what_the_schema_refuses_the_api_refuses_naming_the_field(
    client: TestClient, admits: Any, change: dict[str, Any], field: str
) -> None:
    body = {**GOOD, **change}
    assert not admits(body)
    answer = client.post("/batches/check", json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field


@pytest.mark.parametrize(
    "change",
    [
        {"players": 2},
        {"agents": [" mcts : iterations=5", {"name": "easy"}]},
        {"stop_rule": {"type": "precision", "figure": "score:easy", "half_width": 0.1}},
        {"stop_rule": {"agents": ["random", "easy"], "elo1": 20}},
    ],
)
def test_what_the_schema_admits_the_api_takes(
    client: TestClient, admits: Any, change: dict[str, Any]
) -> None:
    body = {**GOOD, **change}
    assert admits(body)
    assert client.post("/batches/check", json=body).status_code == 200


def test_a_refusal_inside_a_rule_or_an_agent_names_its_path(client: TestClient) -> None:
    rule = {"type": "precision", "figure": "score:easy", "half_width": 0.7}
    answer = client.post("/batches", json={**GOOD, "stop_rule": rule}).json()
    assert answer["field"] == "stop_rule.half_width"
    assert answer["message"].startswith("stop_rule.half_width must be")
    agents = ["random", {"name": "mcts", "iterations": -1}]
    answer = client.post("/batches", json={**GOOD, "agents": agents}).json()
    assert answer["field"] == "agents[1].iterations"


def test_plan_batch_takes_the_request_or_its_keywords() -> None:
    request = BatchCreate.model_validate({**GOOD, "stop_rule": "sprt:random,easy,elo1=20"})
    by_model = plan_batch(request, settings=Settings())
    by_keywords = plan_batch(settings=Settings(), **GOOD, stop_rule=request.stop_rule)
    as_stored = plan_batch(settings=Settings(), **GOOD, stop_rule=by_model.stop_rule)
    assert definition_key(by_model) == definition_key(by_keywords) == definition_key(as_stored)
    assert study_plan.definition_key is definition_key
    with pytest.raises(TypeError, match="no key matchs"):
        plan_batch(settings=Settings(), **GOOD, matchs=3)
    with pytest.raises(OptionError) as caught:
        plan_batch(settings=Settings(), **{**GOOD, "matches": True})
    assert caught.value.field == "matches"


def test_the_request_is_dumped_as_written() -> None:
    # A body's fingerprint and a study batch's derived seed were always taken over the rule
    # as sent; the request keeps it so.
    rule = {"agents": ["random", "easy"], "elo1": 20}
    request = build_request({**GOOD, "stop_rule": rule})
    assert request.body()["stop_rule"] == rule
    assert isinstance(request, BatchRequest) and request.stop_rule is not None
    assert request.stop_rule.to_json()["alpha"] == 0.05
