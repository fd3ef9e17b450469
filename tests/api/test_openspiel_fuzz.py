"""OpenSpiel's registered games with generated parameters, sent to the API in this process:
every answer is a 202 or a 4xx naming a field, never a 5xx, and this process survives every
one (a segfault here would end the test run). That a check past its wall limit is cut short is
``tests/workers/test_forkserver.py``'s to show: a bound on the response time here would race
the machine's load. The API checks each in a child forked by its fork server, a few tens of
milliseconds for most games, so the suite sends a few hundred; ``bench/openspiel_fuzz.py``
sends thousands to a real server, bridge included."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import client_for, forget_settings, make_api, point_settings_at
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workers import native_games

pyspiel = pytest.importorskip("pyspiel")
pytestmark = pytest.mark.slow

from engines.openspiel.spiel import refusal  # noqa: E402 - needs pyspiel

SLOW_TO_CHECK = {"bridge"}
"""Games whose check takes seconds even with their defaults (bridge solves every deal it
re-samples double dummy: tens of seconds on a loaded machine), left to the bench."""
PLAYABLE = {
    t.short_name: dict(t.parameter_specification)
    for t in pyspiel.registered_games()
    if refusal(t) is None and t.short_name not in SLOW_TO_CHECK
}
CASES = 300
EDGES = [-(2**40), -1000, -1, 0, 1, 2, 3, 7, 100, 1000, 99_999, 10_000_000, 2**40]
TEXTS = ["", " ", "0", "-1", "999999999", "1;10000000", "100 100", "a;b", "\u00e9\u0000", "1 2 3"]


def values_for(default: Any) -> st.SearchStrategy[Any]:
    """Values a careless or hostile user might give a parameter with this default."""
    if isinstance(default, bool):
        return st.one_of(st.booleans(), st.sampled_from([0, "yes"]))
    if isinstance(default, int):
        return st.one_of(st.sampled_from(EDGES), st.integers(-50, 200), st.just(default * 10))
    if isinstance(default, float):
        return st.one_of(st.floats(-1e9, 1e9), st.sampled_from([0.0, -1.0, 1e308]))
    return st.one_of(st.sampled_from(TEXTS), st.text(max_size=12))


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(sorted(PLAYABLE)))
    spec = {k: v for k, v in PLAYABLE[name].items() if "file" not in k and k != "players"}
    chosen = draw(st.lists(st.sampled_from(sorted(spec)), max_size=2, unique=True)) if spec else []
    options = {k: draw(values_for(spec[k])) for k in chosen}
    return {"game": f"openspiel:{name}", "options": options, "agents": ["random"], "matches": 1}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from storage.db import upgrade

    url = f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'fuzz.db'}"
    upgrade(url)
    with pytest.MonkeyPatch.context() as patch:
        point_settings_at(patch, url)
        app_, _ = make_api(url)
        native_games.forget_checks()
        with client_for(app_) as test_client:
            yield test_client
        forget_settings()


@settings(
    max_examples=CASES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=requests())
def test_generated_openspiel_parameters_are_never_a_5xx(client: Any, body: dict[str, Any]) -> None:
    # A body met again is answered from the remembered check, as the API would.
    response = client.post("/batches", json=body)
    assert response.status_code in (202, 422), (body, response.text)
    if response.status_code == 422:
        field = response.json()["field"]
        assert field in {"game", "options", "players"} or field.startswith("options."), field
    assert client.get("/healthz").status_code == 200
