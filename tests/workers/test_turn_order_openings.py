"""Every stored match keeps the seat that moved first and the key of its opening."""

from __future__ import annotations

import hashlib

import pytest

from analysis import frames
from engines.registry import load_game
from storage.db import get_engine
from storage.models import BatchPlan
from storage.settings import Settings
from workers.batches import plan_batch
from workers.chunks import run_chunk
from workers.play import play_chunk


def key_of(moves: list[str], plies: int = 10) -> int:
    """Written apart from ``storage.records.opening_key``: blake2b-64 of the joined first
    plies, halved to 63 bits."""
    digest = hashlib.blake2b("\n".join(moves[:plies]).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") // 2


def random_batch(game: str, players: int | None, matches: int, seed: int) -> BatchPlan:
    """A batch of random players in one chunk, planned as the runner plans it."""
    return plan_batch(
        game=game,
        players=players,
        options={},
        agents=["random"],
        matches=matches,
        seed=seed,
        seat_policy=None,
        chunk_size=matches,
        max_plies=None,
        settings=Settings(),
    )


def test_an_alhambra_match_stores_the_drawn_starting_seat() -> None:
    batch = random_batch("alhambra", 3, 12, 402)
    game = load_game("alhambra", players=3, **batch.options)
    records = play_chunk(batch, 0, 12)
    starters = set()
    for r in records:
        assert r.ok
        # Who starts is decided by the deal alone: the first mover of a fresh state.
        assert r.first_seat == game.new_initial_state(r.seed).current_player()
        # A game with chance: the deal is part of the opening (two deals, two openings).
        assert r.opening == key_of([f"#deal {r.seed}", *r.moves[:10]], 11)
        starters.add(r.first_seat)
    assert len(starters) > 1, "twelve deals should not all start from one seat"


@pytest.mark.parametrize("game", ["alquerque", "alveoles"])
def test_seat_order_games_start_at_seat_zero_and_the_keys_reach_the_frames(
    game: str, migrated_sqlite_url: str
) -> None:
    from storage import crud

    batch = random_batch(game, None, 6, 5)
    engine = get_engine(migrated_sqlite_url)
    stored_batch = crud.create_batch(engine, plan=batch)
    run_chunk(stored_batch.id, 0, 6, database_url=migrated_sqlite_url)
    stored = frames.matches(engine, stored_batch.id)
    assert list(stored["first_seat"]) == [0] * 6
    played = play_chunk(batch, 0, 6)
    assert list(stored["opening"]) == [key_of(list(r.moves)) for r in played]


def test_rows_stored_before_get_their_starting_seat_from_the_deal(
    migrated_sqlite_url: str,
) -> None:
    from sqlalchemy import text

    from analysis.batch_data import starting_seat
    from analysis.report import build_report
    from storage import crud

    batch = random_batch("alhambra", 3, 9, 402)
    engine = get_engine(migrated_sqlite_url)
    stored = crud.create_batch(engine, plan=batch)
    run_chunk(stored.id, 0, 9, database_url=migrated_sqlite_url)
    kept = frames.match_design(engine, stored.id)
    with engine.begin() as conn:
        conn.execute(text("UPDATE match SET first_seat = NULL, opening = NULL"))
    assert frames.match_design(engine, stored.id)["first_seat"].isna().all()
    filled = frames.match_design(engine, stored.id, starting_seat(stored))
    assert list(filled["first_seat"]) == list(kept["first_seat"])
    assert build_report(engine, stored.id)["batch"]["matches_done"] == 9
