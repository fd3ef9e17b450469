"""Hostile OpenSpiel requests against the real service (uvicorn, PostgreSQL, Redis, a Celery
worker): each one that crashed the API, held it for a minute or ended in a 500 is answered 4xx
(or accepted, within the check's bounds), and ``/healthz`` answers after every one."""

from __future__ import annotations

import random

import pytest
from service_fixtures import Service, pg_cluster, redis_server, service_factory

__all__ = ["pg_cluster", "redis_server", "service_factory"]

pyspiel = pytest.importorskip("pyspiel")
pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(600)]

AGENTS = {"agents": ["random"], "matches": 2}
REFUSED = [
    # The two that segfaulted the API process.
    ({"game": "openspiel:connect_four", "options": {"rows": 0}}, "options.rows"),
    ({"game": "openspiel:universal_poker", "options": {"numPlayers": 3}}, "options.numPlayers"),
    # std::bad_alloc after seconds; twenty million actions that stalled /healthz.
    ({"game": "openspiel:nim", "options": {"pile_sizes": "999999999"}}, "options.pile_sizes"),
    ({"game": "openspiel:nim", "options": {"pile_sizes": "1;10000000"}}, "options.pile_sizes"),
    # Accepted before, then failed or hung in the workers.
    ({"game": "openspiel:gomoku", "options": {"size": -1000}}, "options.size"),
    ({"game": "openspiel:breakthrough", "options": {"rows": 100}}, "options.rows"),
    # A board of a million boxes.
    ({"game": "openspiel:dots_and_boxes", "options": {"num_rows": 1000, "num_cols": 1000}}, None),
]


def gomoku_book(size: int, rng: random.Random) -> list[list[str]]:
    """Lines of legal gomoku openings, about ``size`` bytes of JSON in all."""
    game = pyspiel.load_game("gomoku")
    lines: list[list[str]] = []
    while sum(len(m) + 3 for line in lines for m in line) < size:
        state = game.new_initial_state()
        line = []
        for _ in range(30):
            action = rng.choice(state.legal_actions())
            line.append(state.action_to_string(action))
            state.apply_action(action)
        lines.append(line)
    return lines


def healthy(service: Service) -> None:
    assert service.api.process.poll() is None, "the API process died"
    assert service.api.client.get("/healthz").status_code == 200


def test_hostile_openspiel_requests_are_4xx_and_the_api_stays_up(service_factory) -> None:
    service = service_factory(workers=1)
    client = service.api.client
    for body, field in REFUSED:
        response = client.post("/batches", json={**AGENTS, **body})
        assert response.status_code == 422, (body, response.text)
        if field is not None:
            assert response.json()["field"] == field, response.text
        healthy(service)
    # A 45 kB book of openings: checked within the check's limits, whatever it holds.
    book = gomoku_book(45_000, random.Random(3))
    response = client.post(
        "/batches",
        json={
            "game": "openspiel:gomoku",
            "agents": ["random", "random"],
            "matches": 2,
            "variation": {"kind": "openings", "source": "book", "book": book},
        },
    )
    assert response.status_code in (202, 422), response.text
    healthy(service)
