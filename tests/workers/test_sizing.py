"""Chunk sizing: the stop rule's cap, sizes from measurements, local mode's cutter, and the
ranges the sweep queues again (pure functions, no servers)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from storage.settings import Settings
from workers.batches import stop_rule_chunk_cap
from workers.dispatch import lost_ranges
from workers.sizing import RangePlanner, next_chunk_size, smallest_chunk

RULE = {"kind": "sprt", "agents": ["a", "b"], "elo0": 0, "elo1": 20}
TWO_SECONDS = Settings(chunk_seconds=2.0)
ONE_SECOND = Settings(chunk_seconds=1.0)


@dataclass
class FakeBatch:
    matches: int = 1000
    players: int = 2
    seat_policy: str = "rotate"
    chunk_size: int = 0
    stop_rule: dict[str, Any] | None = None
    max_plies: int = 100
    time_control: str | None = None


@pytest.mark.parametrize(
    ("matches", "pairs", "cap"),
    [
        (1, False, 1),
        (99, False, 1),
        (250, False, 2),
        (2_000, False, 20),
        (19_999, False, 199),
        (20_000, False, 200),
        (10**6, False, 200),
        (1, True, 2),
        (250, True, 2),
        (350, True, 2),
        (499, True, 4),
        (19_999, True, 198),
        (10**6, True, 200),
    ],
)
def test_stop_rule_cap_is_200_or_one_percent(matches: int, pairs: bool, cap: int) -> None:
    assert stop_rule_chunk_cap(matches, pairs=pairs) == cap


def test_sizes_follow_the_measured_seconds_per_match() -> None:
    batch = FakeBatch(matches=100_000)
    # 10 matches in 0.5 s: 20 matches a second; 2 s of work is 40 matches.
    assert next_chunk_size(batch, matches=10, seconds=0.5, settings=TWO_SECONDS) == 40
    # One slow match: 30 s for one match means chunks of one.
    assert next_chunk_size(batch, matches=1, seconds=30.0, settings=TWO_SECONDS) == 1
    # Growth is bounded: a one-match chunk of 1 ms does not jump to 2,000 matches.
    assert next_chunk_size(batch, matches=1, seconds=0.001, settings=TWO_SECONDS) == 8
    assert next_chunk_size(batch, matches=512, seconds=0.001, settings=TWO_SECONDS) == 4096
    assert next_chunk_size(batch, matches=4096, seconds=0.001, settings=TWO_SECONDS) == 5000
    # Nothing measured (a chunk given up unplayed): the smallest chunk.
    assert next_chunk_size(batch, matches=0, seconds=0.0, settings=TWO_SECONDS) == 1


def test_a_fixed_size_is_kept_and_a_stop_rule_caps_measured_sizes() -> None:
    fixed = FakeBatch(chunk_size=37)
    assert next_chunk_size(fixed, matches=1, seconds=100.0, settings=TWO_SECONDS) == 37
    ruled = FakeBatch(matches=5_000, stop_rule=RULE)  # 2 players, rotate: pairs
    assert smallest_chunk(ruled) == 2
    assert next_chunk_size(ruled, matches=64, seconds=0.01, settings=TWO_SECONDS) == 50
    assert next_chunk_size(ruled, matches=2, seconds=0.3, settings=TWO_SECONDS) == 12  # 13.3 → 12
    assert next_chunk_size(ruled, matches=2, seconds=60.0, settings=TWO_SECONDS) == 2
    unpaired = FakeBatch(matches=5_000, stop_rule=RULE, seat_policy="fixed")
    assert smallest_chunk(unpaired) == 1
    assert next_chunk_size(unpaired, matches=2, seconds=0.3, settings=TWO_SECONDS) == 13


@given(
    matches=st.integers(1, 10**6),
    played=st.integers(1, 5000),
    seconds=st.floats(1e-6, 1e4),
    target=st.floats(0.01, 60),
    ruled=st.booleans(),
    policy=st.sampled_from(["rotate", "fixed"]),
)
def test_measured_sizes_stay_within_their_bounds(
    matches: int, played: int, seconds: float, target: float, ruled: bool, policy: str
) -> None:
    batch = FakeBatch(matches=matches, seat_policy=policy, stop_rule=RULE if ruled else None)
    size = next_chunk_size(
        batch, matches=played, seconds=seconds, settings=Settings(chunk_seconds=target)
    )
    pairs = ruled and policy == "rotate"
    low = 2 if pairs else 1
    assert low <= size <= max(low, min(5000, 8 * played))
    if ruled:
        assert size <= stop_rule_chunk_cap(matches, pairs=pairs)
    if pairs:
        assert size % 2 == 0


def test_the_planner_measures_first_then_sizes_from_everything_measured() -> None:
    planner = RangePlanner(FakeBatch(matches=200), [(0, 200)], settings=ONE_SECOND)
    assert planner.take() == (0, 1)
    assert planner.take() is None  # nothing more until the first chunk is measured
    planner.measured(1, 0.25)  # 4 matches a second: 4 per chunk
    assert planner.take() == (1, 5)
    assert planner.take() == (5, 9)
    planner.measured(4, 0.0002)  # 5 matches in 0.2502 s: 19 a second
    assert planner.take() == (9, 28)
    planner.measured(0, 0.0)  # a skipped chunk says nothing
    assert planner.take() == (28, 47)
    planner.measured(4, 0.0002)  # 9 matches in 0.2504 s, at most 8 × 9
    assert planner.take() == (47, 82)
    planner.measured(200, 0.01)  # 209 in 0.2604 s: 802, at most 8 × 209, and what is left
    assert planner.take() == (82, 200)
    assert planner.exhausted and planner.take() is None


def test_the_planner_cuts_gaps_by_a_fixed_size_on_its_boundaries() -> None:
    planner = RangePlanner(
        FakeBatch(matches=20, chunk_size=4), [(0, 8), (12, 20)], settings=ONE_SECOND
    )
    pieces = []
    while (piece := planner.take()) is not None:
        pieces.append(piece)
    assert pieces == [(0, 4), (4, 8), (12, 16), (16, 20)]


def test_lost_ranges_come_back_as_they_were_handed_out() -> None:
    handed = {0: 1, 1: 9, 9: 17, 17: 81, 81: 145}
    # [0, 1) and [9, 17) are written; the cursor is at 145, so everything from there on was
    # never handed out and is not lost.
    missing = [(1, 9), (17, 200)]
    assert lost_ranges(missing, handed, cursor=145, size=64, aligned=False) == [
        (1, 9),
        (17, 81),
        (81, 145),
    ]


def test_lost_ranges_cut_unknown_spans_at_handed_starts_and_by_size() -> None:
    # The broker lost the record of what was handed out: cut by size, aligned for fixed sizes.
    assert lost_ranges([(8, 30)], {}, cursor=30, size=8, aligned=True) == [
        (8, 16),
        (16, 24),
        (24, 30),
    ]
    assert lost_ranges([(5, 30)], {20: 40}, cursor=25, size=6, aligned=False) == [
        (5, 11),
        (11, 17),
        (17, 20),
        (20, 25),  # [20, 40) reaches past the cursor's gap end: only its missing part
    ]
    assert lost_ranges([(5, 30)], {}, cursor=5, size=6, aligned=False) == []


@given(
    cuts=st.lists(st.integers(1, 499), min_size=0, max_size=30, unique=True),
    written=st.lists(st.booleans(), min_size=31, max_size=31),
    cursor=st.integers(0, 500),
    size=st.integers(1, 50),
)
def test_lost_ranges_tile_exactly_the_missing_matches_below_the_cursor(
    cuts: list[int], written: list[bool], cursor: int, size: int
) -> None:
    bounds = [0, *sorted(cuts), 500]
    chunks = list(itertools.pairwise(bounds))
    handed = {a: b for a, b in chunks if b <= cursor}
    missing_set = {i for k, (a, b) in enumerate(chunks) if not written[k] for i in range(a, b)}
    missing = []
    for i in sorted(missing_set):
        if missing and missing[-1][1] == i:
            missing[-1] = (missing[-1][0], i + 1)
        else:
            missing.append((i, i + 1))
    lost = lost_ranges(missing, handed, cursor=cursor, size=size, aligned=False)
    covered = [i for a, b in lost for i in range(a, b)]
    assert covered == sorted(i for i in missing_set if i < cursor)
    for a, b in lost:
        assert (a, b) in chunks or b - a <= size or handed.get(a) is None
        if (
            a in handed
            and handed[a] <= cursor
            and all(i in missing_set for i in range(a, handed[a]))
        ):
            assert (a, handed[a]) in lost  # a wholly missing chunk comes back as it was


def planned(matches: int, workers: int, per_match: float, settings: Settings) -> list[int]:
    """Chunk sizes local mode's planner hands out for a batch whose matches all take
    ``per_match`` seconds, each chunk measured before the next is taken."""
    planner = RangePlanner(
        FakeBatch(matches=matches), [(0, matches)], settings=settings, workers=workers
    )
    sizes: list[int] = []
    position = 0
    while (piece := planner.take()) is not None:
        start, stop = piece
        assert start == position  # consecutive: every index once, in order
        position = stop
        sizes.append(stop - start)
        planner.measured(stop - start, (stop - start) * per_match)
    assert position == matches and planner.exhausted
    return sizes


@given(
    matches=st.integers(1, 20_000),
    workers=st.integers(2, 200),
    # Powers of two: the measured totals add up exactly, so the rate is the same every time.
    per_match=st.integers(-13, 1).map(lambda k: 2.0**k),
)
def test_late_chunks_cover_the_batch_once_and_shrink_toward_the_end(
    matches: int, workers: int, per_match: float
) -> None:
    sizes = planned(matches, workers, per_match, TWO_SECONDS)
    assert sum(sizes) == matches
    peak = sizes.index(max(sizes))
    tail = sizes[peak:]
    assert all(a >= b for a, b in itertools.pairwise(tail)), sizes
    # Never below 1/32 of CHUNK_SECONDS of work (or one match), but for the last piece.
    floor = max(1, int(2.0 / per_match / 32))
    assert all(size >= min(floor, tail[0]) for size in tail[:-1]), sizes


def test_the_last_chunks_split_what_is_left_between_the_workers() -> None:
    batch = FakeBatch(matches=100_000)
    # 100 matches a second: 200 a chunk, until 2 × 10 workers' chunks are all that is left.
    assert next_chunk_size(batch, matches=500, seconds=5.0, settings=TWO_SECONDS) == 200
    kwargs: dict[str, Any] = {"matches": 500, "seconds": 5.0, "settings": TWO_SECONDS}
    assert next_chunk_size(batch, remaining=4000, workers=10, **kwargs) == 200
    assert next_chunk_size(batch, remaining=3000, workers=10, **kwargs) == 150  # 3000 / 20
    assert next_chunk_size(batch, remaining=1000, workers=10, **kwargs) == 50
    assert next_chunk_size(batch, remaining=61, workers=10, **kwargs) == 6  # 2 s / 32 of play
    assert next_chunk_size(batch, remaining=0, workers=10, **kwargs) == 6
    # Nothing known of the workers, or one worker alone (no one to finish with): today's size.
    assert next_chunk_size(batch, remaining=100, workers=0, **kwargs) == 200
    assert next_chunk_size(batch, remaining=100, workers=1, **kwargs) == 200
    # The chunks that fill the pipeline at once share what is left: 64 of 24 for 1,500 left.
    assert next_chunk_size(batch, remaining=1500, workers=1, count=64, **kwargs) == 24
    assert next_chunk_size(batch, remaining=10**5, workers=1, count=64, **kwargs) == 200
    # Pairs under a stop rule stay even.
    ruled = FakeBatch(matches=100_000, stop_rule=RULE)
    assert next_chunk_size(ruled, remaining=1230, workers=10, **kwargs) == 62  # 61.5 → 62


def test_large_batches_keep_their_big_chunks() -> None:
    """200,000 matches of 1/128 s on 10 workers: 256-match chunks. Shrinking the last ones
    adds about 68 chunks to today's 784, whatever the batch's size: the last 5,120 matches
    (2 × 10 chunks' worth) go out in chunks of 1/20 of what is left until those reach 8
    matches (2 s / 32), ln 32 / ln(20/19) ≈ 67.6 chunks, then 20 chunks of 8, where today
    hands out 20 chunks for the whole stretch."""
    today = planned(200_000, 0, 1 / 128, TWO_SECONDS)
    new = planned(200_000, 10, 1 / 128, TWO_SECONDS)
    assert max(new) == max(today) == 256
    assert len(today) + 60 <= len(new) <= len(today) + 75
    assert new[: len(today) - 30] == today[: len(today) - 30]
