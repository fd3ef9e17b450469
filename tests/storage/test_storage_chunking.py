"""Chunk arithmetic (``storage.chunking``), checked against the sets of match indices it stands
for: pure functions, no database."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from storage.chunking import (
    chunk_end,
    chunk_ranges,
    chunks_total,
    cut,
    missing_pieces,
    split_aligned,
    uncovered,
)
from storage.models import AUTO_CHUNK_SIZE

sizes = st.integers(min_value=1, max_value=40)
matches = st.integers(min_value=0, max_value=300)


def indices(ranges: list[tuple[int, int]]) -> list[int]:
    return [i for a, b in ranges for i in range(a, b)]


def test_the_fixed_chunking_of_ten_matches_by_four() -> None:
    assert chunk_ranges(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert split_aligned(3, 10, 4) == [(3, 4), (4, 8), (8, 10)]
    assert cut(3, 10, 4) == [(3, 7), (7, 10)]
    assert chunk_end(5, 4, aligned=True) == 8 and chunk_end(5, 4, aligned=False) == 9
    assert uncovered([(2, 4), (6, 7)], 10) == [(0, 2), (4, 6), (7, 10)]


@given(matches, sizes)
def test_fixed_chunks_tile_the_batch_at_multiples_of_the_size(total: int, size: int) -> None:
    ranges = chunk_ranges(total, size)
    assert indices(ranges) == list(range(total))
    assert all(a % size == 0 and 0 < b - a <= size for a, b in ranges)
    assert chunks_total(total, size, written=0, finished=0) == len(ranges)


@given(matches, matches, sizes)
def test_aligned_pieces_are_pieces_of_the_fixed_chunking(a: int, b: int, size: int) -> None:
    start, stop = min(a, b), max(a, b)
    pieces = split_aligned(start, stop, size)
    assert indices(pieces) == list(range(start, stop))
    # Each piece lies inside one chunk [k*size, (k+1)*size) and is the largest such piece.
    for lo, hi in pieces:
        assert lo // size == (hi - 1) // size
        assert hi == stop or hi % size == 0


@given(matches, matches, sizes)
def test_consecutive_pieces_have_the_size_but_the_last(a: int, b: int, size: int) -> None:
    start, stop = min(a, b), max(a, b)
    pieces = cut(start, stop, size)
    assert indices(pieces) == list(range(start, stop))
    assert all(hi - lo == size for lo, hi in pieces[:-1])


@given(matches, st.lists(st.tuples(matches, st.integers(min_value=1, max_value=30))))
def test_uncovered_ranges_are_exactly_the_indices_no_range_holds(
    total: int, spans: list[tuple[int, int]]
) -> None:
    written = sorted((a, a + n) for a, n in spans)
    covered = {i for a, b in written for i in range(a, b)}
    gaps = uncovered(written, total)
    assert indices(gaps) == [i for i in range(total) if i not in covered]
    # Maximal: two gaps never touch.
    assert all(b1 < a2 for (_a1, b1), (a2, _b2) in itertools.pairwise(gaps))


@given(matches, sizes, st.data())
def test_missing_pieces_follow_the_chunk_size(total: int, size: int, data: st.DataObject) -> None:
    written = data.draw(st.lists(st.sampled_from(chunk_ranges(total, size) or [(0, 0)])))
    gaps = uncovered(sorted(set(written)), total)
    assert missing_pieces(gaps, AUTO_CHUNK_SIZE) == gaps
    pieces = missing_pieces(gaps, size)
    assert indices(pieces) == indices(gaps)
    assert set(pieces) <= set(chunk_ranges(total, size))


@pytest.mark.parametrize(
    ("matches", "written", "finished", "expected"),
    [
        (100, 0, 0, 1),  # nothing measured: at least one more chunk
        (100, 4, 0, 5),  # chunks written but no match in them yet
        (100, 4, 40, 10),  # 60 left at 10 a chunk: 6 more
        (100, 3, 40, 8),  # 60 left at 13.3 a chunk: 4.5, rounded up to 5 more
        (100, 7, 100, 7),  # complete: the chunks written
    ],
)
def test_measured_batches_estimate_their_chunks_from_the_average_so_far(
    matches: int, written: int, finished: int, expected: int
) -> None:
    assert chunks_total(matches, AUTO_CHUNK_SIZE, written, finished) == expected
