"""Generated requests over the whole OpenAPI spec: the API never answers with a 5xx."""

from __future__ import annotations

import pytest
import schemathesis
from api_support import forget_settings, make_api, point_settings_at
from hypothesis import HealthCheck, given, settings

EXAMPLES_PER_OPERATION = 110
MIN_REQUESTS = 1000


@pytest.mark.slow
def test_generated_requests_never_get_a_server_error(
    migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_settings_at(monkeypatch, migrated_sqlite_url)
    app, _ = make_api(migrated_sqlite_url)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    sent = 0
    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()

        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def probe(case: schemathesis.Case) -> None:
            nonlocal sent
            response = case.call()
            sent += 1
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.status_code}")

        probe()
    forget_settings()
    print(f"{sent} generated requests")
    assert failures == []
    assert sent >= MIN_REQUESTS
