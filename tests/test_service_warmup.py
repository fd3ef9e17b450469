"""A worker host that joins with an empty numba cache compiles before it takes work: its first
compiled match is played under a short time limit, against the real service (prefork worker,
private Redis and PostgreSQL), and stored as the same match played here."""

from __future__ import annotations

from pathlib import Path

import pytest
from service_fixtures import pg_cluster, redis_server, service_factory
from sqlalchemy import text

__all__ = ["pg_cluster", "redis_server", "service_factory"]

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(400)]

COMPILED = {
    "game": "alquerque",
    "agents": [{"name": "mcts", "iterations": 200, "backend": "compiled"}, "medium"],
    "seed": 17,
}
SOFT, HARD = 3, 5
"""Far below the tens of seconds a cold compilation takes."""


def test_a_worker_with_an_empty_cache_plays_its_first_compiled_match_correctly(
    service_factory, tmp_path: Path
) -> None:
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    service = service_factory(
        workers=1,
        pool="prefork",
        NUMBA_CACHE_DIR=str(cache),
        TASK_SOFT_TIME_LIMIT=str(SOFT),
        TASK_TIME_LIMIT=str(HARD),
        STALL_SECONDS="30",
    )
    submitted = service.submit(**COMPILED, matches=2, chunk_size=2)
    batch = service.wait_finished(submitted["id"], timeout=360)
    assert batch["status"] == "done" and batch["progress"]["done"] == 2, batch
    from storage.db import get_engine

    with get_engine(service.database_url).connect() as conn:
        rows = conn.execute(
            text(
                "SELECT match_index, ok, ended_by, plies, moves, error FROM match "
                "WHERE batch_id = :b ORDER BY match_index"
            ),
            {"b": submitted["id"]},
        ).all()
    # The same matches played here, in this process (its own cache): move for move.
    from storage.crud import get_batch
    from workers.play import build_game, play_one

    stored = get_batch(get_engine(service.database_url), submitted["id"])
    assert stored is not None
    game = build_game(stored)
    for index, ok, ended_by, plies, moves, error in rows:
        expected = play_one(game, stored, index)
        assert expected.ok and expected.plies > 0
        assert (ok, ended_by, error) == (True, expected.ended_by, None)
        assert (plies, moves.split()) == (expected.plies, list(expected.moves))
    # The worker filled its own cache while warming up.
    assert any(cache.rglob("*.nbi"))
