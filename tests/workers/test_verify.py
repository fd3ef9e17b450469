"""``verify``: stored matches replayed from their seeds; a changed move or result is caught."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update
from typer.testing import CliRunner

from api.cli import app
from engines.core import OptionError
from storage import crud
from storage.db import get_engine
from storage.records import join_moves, split_moves
from storage.settings import Settings
from workers.batches import plan_batch
from workers.local import run_local
from workers.verify import verify_batch

runner = CliRunner()
BOX = str.maketrans("", "", "│╭╮╰╯─")
"""The frame click's usage errors are drawn in, dropped before a message is looked for."""


def played(url: str, agents: list[str], matches: int = 6, **extra: object) -> str:
    request: dict = {
        "game": "alquerque",
        "players": None,
        "options": {},
        "agents": agents,
        "matches": matches,
        "seed": 3,
        "seat_policy": None,
        "chunk_size": None,
        "max_plies": None,
    }
    request.update(extra)
    engine = get_engine(url)
    batch = crud.create_batch(engine, plan=plan_batch(settings=Settings(), **request))
    run_local(batch.id, settings=Settings(database_url=url), workers=1)
    return batch.id


def verify(url: str, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["verify", *args, "--db", url])


@pytest.fixture
def random_batch(migrated_sqlite_url: str) -> str:
    return played(migrated_sqlite_url, ["random"])


def test_a_clean_batch_verifies(migrated_sqlite_url: str, random_batch: str) -> None:
    result = verify(migrated_sqlite_url, random_batch, "--all")
    assert result.exit_code == 0, result.output
    assert "6 of 6 played matches replayed as stored" in result.stdout
    result = verify(migrated_sqlite_url, random_batch, "--sample", "2", "--seed", "9")
    assert result.exit_code == 0, result.output
    assert "2 of 6 played matches" in result.stdout


def test_a_changed_move_is_caught_at_its_ply(migrated_sqlite_url: str, random_batch: str) -> None:
    engine = get_engine(migrated_sqlite_url)
    where = (crud.MATCH.c.batch_id == random_batch, crud.MATCH.c.match_index == 4)
    with engine.begin() as conn:
        moves = split_moves(conn.execute(select(crud.MATCH.c.moves).where(*where)).scalar_one())
        original = moves[2]
        # Another legal-looking move: the third ply's text swapped for the first's.
        moves[2] = moves[0]
        conn.execute(update(crud.MATCH).where(*where).values(moves=join_moves(moves)))
    batch = crud.find_batch(engine, random_batch)
    verdict = verify_batch(engine, batch, sample=None)
    assert not verdict.ok
    assert [(m.match_index, m.what, m.ply) for m in verdict.mismatches] == [(4, "moves", 3)]
    assert (verdict.mismatches[0].stored, verdict.mismatches[0].replayed) == (moves[0], original)
    result = verify(migrated_sqlite_url, random_batch, "--all")
    assert result.exit_code == 1
    assert f"match 4: moves at ply 3 differs: stored {moves[0]}, replayed {original}" in (
        result.output
    )
    # Named matches are the ones replayed: the changed one fails, the others pass.
    result = verify(migrated_sqlite_url, random_batch, "--match", "4")
    assert result.exit_code == 1 and "match 4: moves at ply 3 differs" in result.output
    result = verify(migrated_sqlite_url, random_batch, "-m", "5", "-m", "3", "-m", "5")
    assert result.exit_code == 0, result.output
    assert "2 of 6 played matches replayed as stored" in result.stdout


def test_a_changed_result_is_caught(migrated_sqlite_url: str, random_batch: str) -> None:
    engine = get_engine(migrated_sqlite_url)
    with engine.begin() as conn:
        conn.execute(
            update(crud.SEAT_RESULT)
            .where(
                crud.SEAT_RESULT.c.batch_id == random_batch,
                crud.SEAT_RESULT.c.match_index == 1,
                crud.SEAT_RESULT.c.seat == 0,
            )
            .values(win_share=crud.SEAT_RESULT.c.win_share + 0.25)
        )
    verdict = verify_batch(engine, crud.find_batch(engine, random_batch), sample=None)
    assert [(m.match_index, m.what) for m in verdict.mismatches] == [(1, "seat 0 win_share")]


def test_a_batch_with_clocks_or_a_bad_sample_is_refused(migrated_sqlite_url: str) -> None:
    batch_id = played(migrated_sqlite_url, ["random"], matches=2, options={"time_control": "60+0"})
    engine = get_engine(migrated_sqlite_url)
    with pytest.raises(OptionError, match="plays with clocks"):
        verify_batch(engine, crud.find_batch(engine, batch_id))
    result = verify(migrated_sqlite_url, batch_id, "--sample", "0")
    assert result.exit_code == 2 and "--sample must be at least 1" in result.output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--match", "6"], "--match 6: no played match has that index (6 played, indices 0–5)"),
        (["--match", "-1"], "'--match' / '-m': Input should be greater than or equal to 0"),
        (["--match", str(10**20)], f"--match {10**20}: no played match has that index"),
        (["--match", "1", "--all"], "give one of --sample, --all and --match"),
        (["--match", "1", "--sample", "2"], "give one of --sample, --all and --match"),
    ],
)
def test_a_match_that_is_not_there_is_named(
    migrated_sqlite_url: str, random_batch: str, args: list[str], said: str
) -> None:
    result = verify(migrated_sqlite_url, random_batch, *args)
    assert result.exit_code == 2
    assert said in " ".join(result.output.translate(BOX).split())


@pytest.mark.slow
def test_a_batch_of_the_compiled_search_verifies(migrated_sqlite_url: str) -> None:
    batch_id = played(
        migrated_sqlite_url, ["mcts:iterations=16,backend=compiled", "random"], matches=4
    )
    result = verify(migrated_sqlite_url, batch_id, "--all")
    assert result.exit_code == 0, result.output
    assert "4 of 4 played matches replayed as stored" in result.stdout


def test_the_default_sample_catches_every_decided_result_flipped_among_many_draws(
    migrated_sqlite_url: str,
) -> None:
    # Random players cut at 25 plies: most matches are drawn by the move limit.
    batch_id = played(migrated_sqlite_url, ["random"], matches=60, max_plies=25)
    engine = get_engine(migrated_sqlite_url)
    seat = crud.SEAT_RESULT
    with engine.connect() as conn:
        rows = conn.execute(
            select(seat.c.match_index, seat.c.win_share).where(seat.c.batch_id == batch_id)
        ).all()
    shares: dict[int, list[float]] = {}
    for index, share in rows:
        shares.setdefault(int(index), []).append(float(share))
    decided = sorted(i for i, s in shares.items() if max(s) > min(s))
    drawn = sorted(i for i, s in shares.items() if max(s) == min(s))
    assert len(drawn) > 20 and 0 < len(decided) < len(drawn), (len(decided), len(drawn))
    batch = crud.find_batch(engine, batch_id)
    clean = verify_batch(engine, batch)
    assert clean.ok
    # Ten of each kind, or all of a kind with fewer.
    sampled = set(clean.sampled)
    assert len(sampled & set(decided)) == min(10, len(decided))
    assert len(sampled & set(drawn)) == min(10, len(drawn))
    # Every decided result flipped (two players: the winner's share becomes the loser's).
    with engine.begin() as conn:
        conn.execute(
            update(seat)
            .where(seat.c.batch_id == batch_id, seat.c.match_index.in_(decided))
            .values(win_share=1 - seat.c.win_share)
        )
    for seed in range(5):
        verdict = verify_batch(engine, batch, seed=seed)
        caught = {m.match_index for m in verdict.mismatches}
        assert caught == set(verdict.sampled) & set(decided), seed
        assert caught
