"""Chunk arithmetic: how a batch's match indices are cut into ``[start, stop)`` ranges.

Pure functions, no database. A batch with a fixed ``chunk_size`` is cut at the multiples of
that size (its *fixed chunking*), so every range ever handed out for it, by local mode or by the
distributed dispatcher, is a piece of ``[k * size, (k + 1) * size)``. A batch sized by the runner
(``AUTO_CHUNK_SIZE``) is cut into consecutive pieces from wherever a range starts.
"""

from __future__ import annotations

from collections.abc import Iterable

from storage.models import AUTO_CHUNK_SIZE

Range = tuple[int, int]
"""Match indices ``[start, stop)``."""


def is_fixed(chunk_size: int) -> bool:
    """True for a fixed chunk size asked for, False when the runner sizes chunks."""
    return chunk_size != AUTO_CHUNK_SIZE


def chunk_end(start: int, size: int, *, aligned: bool) -> int:
    """Where a chunk of at most ``size`` matches from ``start`` ends: at the next multiple of
    ``size`` when ``aligned`` (the fixed chunking's boundary), else ``size`` matches on."""
    return (start // size + 1) * size if aligned else start + size


def cut(start: int, stop: int, size: int) -> list[Range]:
    """``[start, stop)`` as consecutive pieces of ``size`` matches (the last may be shorter)."""
    return [(s, min(s + size, stop)) for s in range(start, stop, size)]


def chunk_ranges(matches: int, chunk_size: int) -> list[Range]:
    """The fixed chunking of a batch: [k*size, min((k+1)*size, matches)) for every k."""
    return cut(0, matches, chunk_size)


def split_aligned(start: int, stop: int, size: int) -> list[Range]:
    """``[start, stop)`` cut at the multiples of ``size``: pieces of the fixed chunking."""
    pieces = []
    while start < stop:
        end = min(stop, chunk_end(start, size, aligned=True))
        pieces.append((start, end))
        start = end
    return pieces


def uncovered(written: Iterable[Range], matches: int) -> list[Range]:
    """The maximal ranges of ``[0, matches)`` that none of the ``written`` ranges covers, in
    order; ``written`` must be sorted by start."""
    out: list[Range] = []
    position = 0
    for start, stop in written:
        if start > position:
            out.append((position, min(start, matches)))
        position = max(position, stop)
    if position < matches:
        out.append((position, matches))
    return out


def missing_pieces(gaps: Iterable[Range], chunk_size: int) -> list[Range]:
    """The ranges to play for these gaps: with a fixed chunk size, the pieces of its fixed
    chunking; otherwise the gaps, whole (the runner cuts them as it measures)."""
    if not is_fixed(chunk_size):
        return list(gaps)
    return [piece for a, b in gaps for piece in split_aligned(a, b, chunk_size)]


def chunks_total(matches: int, chunk_size: int, written: int, finished: int) -> int:
    """How many chunks a batch will have: exact for a fixed chunk size; when the runner sizes
    chunks, the ``written`` ones plus the rest at their average size so far (``finished``
    matches in them)."""
    if is_fixed(chunk_size):
        return -(-matches // chunk_size)
    remaining = matches - finished
    if remaining <= 0:
        return written
    if not written or not finished:
        return written + 1
    return written + -(-remaining * written // finished)
