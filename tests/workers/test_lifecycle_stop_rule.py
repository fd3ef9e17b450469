"""The stop rule checked often enough: chunk caps, counts kept per chunk, stopping on time,
``decided_at_matches`` and an honest ``stopped_early``."""

from __future__ import annotations

from collections import defaultdict

import pytest
from sqlalchemy import select

from analysis import sprt, stop_rule
from storage import crud
from storage.db import get_engine
from storage.models import AUTO_CHUNK_SIZE, BatchPlan, BatchStatus
from storage.records import MatchRecord, SeatRecord
from storage.settings import Settings
from workers.batches import plan_batch, stop_rule_chunk_cap, stop_rule_chunk_size
from workers.chunks import run_chunk
from workers.lifecycle import after_chunk
from workers.local import IN_FLIGHT_PER_WORKER, run_local
from workers.sizing import largest_chunk, next_chunk_size

NEVER = {"elo0": -1.0, "elo1": 1.0, "alpha": 0.001, "beta": 0.001}
"""Bounds ±6.9 on a 2-Elo question: a few thousand games between any agents never cross."""


def plan(**overrides: object) -> BatchPlan:
    args: dict = {
        "game": "alquerque",
        "players": None,
        "options": {},
        "agents": ["easy", "random"],
        "matches": 6000,
        "seed": 1,
        "seat_policy": None,
        "chunk_size": None,
        "max_plies": None,
    }
    args.update(overrides)
    return plan_batch(settings=Settings(), **args)


def stored(url: str, p: BatchPlan) -> str:
    return crud.create_batch(get_engine(url), plan=p).id


def played(url: str, batch_id: str) -> int:
    return crud.progress(get_engine(url), batch_id).finished_matches


# --------------------------------------------------------------------------- chunk sizes


@pytest.mark.parametrize(
    ("matches", "cap"),
    [(1, 1), (199, 1), (200, 2), (2_000, 20), (6_000, 60), (19_999, 199), (20_000, 200),
     (10**7, 200)],
)  # fmt: skip
def test_the_cap_is_200_matches_or_one_percent_of_the_batch(matches: int, cap: int) -> None:
    assert stop_rule_chunk_cap(matches) == cap


def test_chunk_sizes_with_a_rule_are_capped_and_even_for_pairs() -> None:
    assert stop_rule_chunk_size(3116, 2000, pairs=False) == 20
    assert stop_rule_chunk_size(3116, 2000, pairs=True) == 20
    assert stop_rule_chunk_size(7, 6000, pairs=False) == 7
    assert stop_rule_chunk_size(7, 6000, pairs=True) == 6
    assert stop_rule_chunk_size(59, 6000, pairs=True) == 58
    assert stop_rule_chunk_size(5000, 150, pairs=True) == 2
    assert stop_rule_chunk_size(5000, 150, pairs=False) == 1


def test_plan_batch_caps_chunks_only_for_batches_with_a_rule() -> None:
    rule = {"agents": ["easy", "random"], **NEVER}
    assert plan(chunk_size=5000).chunk_size == 5000
    assert plan(chunk_size=5000, stop_rule=rule).chunk_size == 60
    # Without a chunk size the runner sizes chunks, from measured work and within the cap.
    automatic = plan(matches=100_000, stop_rule=rule)
    assert automatic.chunk_size == AUTO_CHUNK_SIZE
    two_seconds = Settings(chunk_seconds=2.0)
    fast = next_chunk_size(automatic, matches=1000, seconds=0.001, settings=two_seconds)
    assert fast == 200 and largest_chunk(automatic) == 200
    assert next_chunk_size(plan(matches=5_000, stop_rule=rule), matches=100, seconds=0.01,
                           settings=two_seconds) == 50  # fmt: skip
    three = plan(
        game="alveoles",
        players=3,
        agents=["random", "greedy", "random"],
        matches=2_100,
        chunk_size=999,
        stop_rule={"agents": ["random", "greedy"], **NEVER},
    )
    assert three.chunk_size == 21  # no pairs with three players: odd sizes are fine


# --------------------------------------------------------------------------- counts per chunk


def raw_half_points(url: str, batch_id: str, a: str, b: str) -> dict[int, int]:
    """a's half-points against b in each match, from the raw seat rows: 2 when a's win share
    is higher, 1 when equal, 0 when lower."""
    t = crud.SEAT_RESULT
    with get_engine(url).connect() as conn:
        rows = conn.execute(
            select(t.c.match_index, t.c.agent, t.c.win_share).where(t.c.batch_id == batch_id)
        ).all()
    share: dict[int, dict[str, float]] = defaultdict(dict)
    for match_index, agent, win_share in rows:
        share[match_index][agent] = win_share
    return {mi: 2 if by[a] > by[b] else 1 if by[a] == by[b] else 0 for mi, by in share.items()}


def independent_counts(url: str, batch_id: str, a: str, b: str, pairs: bool) -> list[int]:
    """The rule's counts from the raw seat rows: a beats b when its win share is higher."""
    points = {mi: h / 2 for mi, h in raw_half_points(url, batch_id, a, b).items()}
    if not pairs:
        return [sum(1 for p in points.values() if p == v) for v in (0.0, 0.5, 1.0)]
    sums = [
        points[2 * k] + points[2 * k + 1]
        for k in range(max(points) // 2 + 1)
        if 2 * k in points and 2 * k + 1 in points
    ]
    return [sum(1 for s in sums if s == v / 2) for v in range(5)]


def chunk_rows(url: str, batch_id: str) -> list[tuple]:
    c = crud.CHUNK
    with get_engine(url).connect() as conn:
        return list(
            conn.execute(
                select(c.c.start, c.c.stop, *(c.c[n] for n in crud.STOP_COLUMNS)).where(
                    c.c.batch_id == batch_id
                )
            ).all()
        )


def test_chunk_counts_sum_to_the_counts_of_the_raw_rows(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    # Two players, seat-swapped pairs: alquerque has drawn games (by result, whatever points).
    two = stored(url, plan(matches=401, stop_rule={"agents": ["easy", "random"], **NEVER}))
    # Three players, one meeting of the two agents per match.
    three = stored(
        url,
        plan(
            game="alveoles",
            players=3,
            agents=["random", "greedy", "random"],
            matches=300,
            stop_rule={"agents": ["random#2", "random"], **NEVER},
        ),
    )
    for batch_id in (two, three):
        run_local(batch_id, workers=1, settings=Settings(database_url=url))
    engine = get_engine(url)

    expected = independent_counts(url, two, "easy", "random", pairs=True)
    assert sum(expected) == 200 and expected[1] + expected[2] + expected[3] > 0
    rows = chunk_rows(url, two)
    assert all((stop - start) % 2 == 0 for start, stop, *_ in rows if stop != 401)
    assert [sum(r[2 + k] for r in rows) for k in range(5)] == expected
    state = stop_rule.sprt_status(engine, crud.get_batch(engine, two))
    assert state is not None and state["counts"] == expected and state["model"] == "pentanomial"

    expected = independent_counts(url, three, "random#2", "random", pairs=False)
    assert sum(expected) == 300 and expected[1] < 300
    rows = chunk_rows(url, three)
    assert [sum(r[2 + k] for r in rows) for k in range(3)] == expected
    assert all(r[5] == 0 and r[6] == 0 for r in rows)
    # The test itself counts units: with three players a round of six matches shares its
    # opening, so each round's mean score is one observation on the grid 0, 1/12, …, 1.
    state = stop_rule.sprt_status(engine, crud.get_batch(engine, three))
    by_round = round_half_points(url, three, "random#2", "random", size=6)
    assert len(by_round) == 50
    assert state is not None and state["model"] == "unit means" and state["units"] == 50
    assert state["counts"] == [by_round.count(v) for v in range(13)]
    assert state["values"] == pytest.approx([v / 12 for v in range(13)])
    assert state["games"] == 300


def round_half_points(url: str, batch_id: str, a: str, b: str, size: int) -> list[int]:
    """Half-points of ``a`` against ``b`` summed over each round of ``size`` matches."""
    sums: dict[int, int] = defaultdict(int)
    for match_index, half in raw_half_points(url, batch_id, a, b).items():
        sums[match_index // size] += half
    return list(sums.values())


# --------------------------------------------------------------------------- the lifecycle


def a_wins(index: int, a_seat: int) -> MatchRecord:
    """Agent ``a`` wins match ``index``, sitting in seat ``a_seat``."""
    seats = [
        SeatRecord(a_seat, "a", 0, 1.0, 1.0, 1),
        SeatRecord(1 - a_seat, "b", 1, 0.0, 0.0, 2),
    ]
    return MatchRecord(index, index, True, 10, "normal", (), {}, 0.0, None, sorted(seats))


def write(url: str, batch_id: str, start: int, stop: int) -> str:
    """Write chunk [start, stop) of a's wins (with its stop counts) and run the after-chunk
    step, as ``run_chunk`` does."""
    records = [a_wins(i, i % 2) for i in range(start, stop)]
    counts = sprt.chunk_outcomes(records, "a", "b", pairs=True)
    crud.write_chunk(
        get_engine(url),
        batch_id=batch_id,
        start=start,
        stop=stop,
        records=records,
        duration=0.0,
        stop_counts=counts,
    )
    return after_chunk(get_engine(url), batch_id)


def one_sided_batch(url: str, matches: int, chunk: int) -> str:
    p = BatchPlan(
        game="alquerque",
        players=2,
        options={},
        agents=[{"name": "random"}, {"name": "random"}],
        labels=["a", "b"],
        matches=matches,
        seed=1,
        seat_policy="balanced",
        chunk_size=chunk,
        max_plies=100,
        stop_rule={"type": "sprt", "agents": ["a", "b"], "elo0": 0.0, "elo1": 60.0,
                   "alpha": 0.05, "beta": 0.05},
    )  # fmt: skip
    return stored(url, p)


def test_decision_records_where_it_was_reached_and_early_only_if_matches_are_missing(
    migrated_sqlite_url: str,
) -> None:
    url = migrated_sqlite_url
    engine = get_engine(url)
    # a wins every game: 20 pairs cross the upper bound ln(0.95/0.05) = 2.94, 10 do not
    # (the LLR grows by about 0.158 a pair).
    batch_id = one_sided_batch(url, matches=60, chunk=20)
    assert write(url, batch_id, 0, 20) == BatchStatus.QUEUED
    status = write(url, batch_id, 40, 60)  # written out of order, as parallel chunks are
    batch = crud.get_batch(engine, batch_id)
    assert batch is not None and status == BatchStatus.DONE
    assert batch.decision is not None and batch.decision["result"] == "H1"
    assert batch.decision["decided_at_matches"] == 40
    assert batch.decision["counts"] == [0, 0, 0, 0, 20]
    assert batch.stopped_early is True

    # No new chunk starts once the rule has decided.
    outcome = run_chunk(batch_id, 20, 40, database_url=url)
    assert outcome.skipped and outcome.batch_status == BatchStatus.DONE
    assert played(url, batch_id) == 40

    # A chunk that was already running when the rule decided completes the batch after all:
    # then nothing was left out, and the batch is not marked as stopped early.
    write(url, batch_id, 20, 40)
    batch = crud.get_batch(engine, batch_id)
    assert batch is not None and batch.stopped_early is False
    assert batch.decision is not None and batch.decision["decided_at_matches"] == 40


def test_a_decision_on_the_last_chunk_is_not_an_early_stop(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    batch_id = one_sided_batch(url, matches=40, chunk=20)
    assert write(url, batch_id, 0, 20) == BatchStatus.QUEUED  # 10 pairs: below the bound
    assert write(url, batch_id, 20, 40) == BatchStatus.DONE
    batch = crud.get_batch(get_engine(url), batch_id)
    assert batch is not None and batch.decision is not None
    assert batch.decision["decided_at_matches"] == 40 and batch.stopped_early is False


def test_batches_written_without_chunk_counts_are_checked_from_their_seat_results(
    migrated_sqlite_url: str,
) -> None:
    url = migrated_sqlite_url
    engine = get_engine(url)
    batch_id = one_sided_batch(url, matches=40, chunk=20)
    records = [a_wins(i, i % 2) for i in range(40)]
    for start in (0, 20):  # as written before chunk rows carried counts
        part = records[start : start + 20]
        crud.write_chunk(
            engine, batch_id=batch_id, start=start, stop=start + 20, records=part, duration=0.0
        )
    assert crud.stop_count_totals(engine, batch_id).counts is None
    assert after_chunk(engine, batch_id) == BatchStatus.DONE
    batch = crud.get_batch(engine, batch_id)
    assert batch is not None and batch.decision is not None
    assert batch.decision["counts"] == [0, 0, 0, 0, 20]
    assert batch.decision["decided_at_matches"] == 40 and batch.stopped_early is False


# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_a_clear_mismatch_stops_within_a_few_hundred_matches(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    rule = {"agents": ["easy", "random"], "elo0": 0.0, "elo1": 60.0}
    p = plan(stop_rule=rule)
    assert p.chunk_size == AUTO_CHUNK_SIZE and largest_chunk(p) == 60  # sized by the runner
    batch_id = stored(url, p)
    workers = 2
    final = run_local(batch_id, workers=workers, settings=Settings(database_url=url))
    batch = crud.get_batch(get_engine(url), batch_id)
    assert batch is not None and batch.status == BatchStatus.DONE
    assert batch.decision is not None and batch.decision["result"] == "H1"
    decided_at = batch.decision["decided_at_matches"]
    assert decided_at <= 600
    in_flight = workers * IN_FLIGHT_PER_WORKER * largest_chunk(p)
    assert final.finished_matches <= decided_at + in_flight
    assert final.finished_matches < 6000 and batch.stopped_early is True


@pytest.mark.slow
def test_a_rule_that_never_decides_plays_every_match(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    # Two copies of one agent: balanced seats, since fixed ones would be refused.
    p = plan(
        agents=["random", "random"],
        matches=1000,
        seat_policy="balanced",
        stop_rule={"agents": ["random", "random#2"], **NEVER},
    )
    assert largest_chunk(p) == 10
    batch_id = stored(url, p)
    final = run_local(batch_id, workers=2, settings=Settings(database_url=url))
    batch = crud.get_batch(get_engine(url), batch_id)
    assert batch is not None and batch.status == BatchStatus.DONE
    assert final.finished_matches == 1000
    assert batch.decision is None and batch.stopped_early is False
    state = stop_rule.sprt_status(get_engine(url), batch)
    assert state is not None and state["result"] is None and state["games"] == 1000
