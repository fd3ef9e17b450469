"""How many matches go in the next chunk: measured from the batch's own chunks, no probe match.

A batch without a fixed ``chunk_size`` starts with one small chunk (one match, or one
seat-swapped pair when a stop rule needs whole pairs). From then on every chunk handed out is
sized from all the batch's matches played so far (its matches are alike, so their mean time
is the best estimate), so that a chunk carries about ``chunk_seconds`` of work:

    next = CHUNK_SECONDS × matches played / seconds they took,
           at most GROWTH × matches played, at most MAX_CHUNK_SIZE,
           at most the stop rule's cap, at least the smallest chunk.

The growth bound keeps one lucky short match from sizing a chunk many times too large while
little is measured.

Toward the end of a batch the chunks shrink (factoring, a form of guided self-scheduling):
with ``remaining`` matches not handed out yet and ``workers`` workers playing the batch, a
chunk holds at most ``remaining / (TAIL_SPLIT × workers)`` matches, so each round of chunks
hands out about half of what is left and the last chunks end close together; never fewer than
the matches of ``chunk_seconds / SMALLEST_SHARE`` of work, so a chunk's fixed cost (its
transaction, its messages) stays small beside its play. A large batch is not touched until its
last ``TAIL_SPLIT × workers`` chunks: its per-chunk overhead does not rise. ``bench/scaling.py``
simulates both rules over 1 to 1,000 workers.

A batch with clocks (``time_control``) also keeps each chunk within the soft time limit at
the longest its matches can last on their clocks (``clock_seconds``), and a chunk whose
matches could outlast the limits gets limits of its own (``chunk_time_limits``): a
worker's time limit must never end a match its clocks let go on.

A measurement is always of real matches of the batch, played with its own ``max_plies`` and
under its time limits. Pure functions plus ``RangePlanner`` (local mode's
cutter): no I/O here. Every sizing setting is read here, from the ``Settings`` the caller
passes (the worker's, or the local run's), so a new one needs no change at the call sites.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any, Protocol

from engines.clock import parse_time_control
from engines.seating import seat_swapped_pairs
from storage.chunking import chunk_end, is_fixed
from storage.settings import Settings
from workers.batches import MAX_CHUNK_SIZE, stop_rule_chunk_cap

GROWTH = 8
"""A chunk holds at most this many times the matches of the chunk it was measured from."""
TAIL_SPLIT = 2
"""Late chunks hold at most the matches left divided by this many times the workers."""
SMALLEST_SHARE = 32
"""A late chunk still holds at least ``chunk_seconds`` divided by this of measured work."""
ACTIVE_CHUNKS = 4
"""A worker counts as playing a batch when it took or wrote one of its chunks within this
many ``chunk_seconds``."""
CLOCK_MARGIN = 1.5
"""Time a clocked match may take beyond its clocks, as a factor: the clocks are charged only
for the players' steps, not for the rules, the position handed over or the overshoot of the
move that runs a clock out."""
CLOCK_SLACK = 10.0
"""Seconds added to a clocked chunk's time limits for starting and storing it."""


class Sized(Protocol):
    """What sizing needs from a batch (a stored ``Batch`` fits)."""

    @property
    def matches(self) -> int: ...
    @property
    def players(self) -> int: ...
    @property
    def seat_policy(self) -> str: ...
    @property
    def chunk_size(self) -> int: ...
    @property
    def stop_rule(self) -> dict[str, Any] | None: ...
    @property
    def max_plies(self) -> int: ...
    @property
    def time_control(self) -> str | None: ...


def clock_seconds(batch: Sized) -> float:
    """The longest one match of the batch may take when it has clocks: every seat's clock
    and an increment for every ply (``TimeControl.match_bound``), times ``CLOCK_MARGIN``;
    0.0 without clocks."""
    control = parse_time_control(batch.time_control)
    if control is None:
        return 0.0
    return CLOCK_MARGIN * control.match_bound(batch.players, batch.max_plies)


def chunk_time_limits(batch: Sized, size: int, settings: Settings) -> tuple[float, float] | None:
    """The (soft, hard) time limits a chunk of ``size`` matches needs beyond the worker's own
    (``settings``): None when those suffice, as always without clocks. A clocked chunk gets a
    soft limit that lets each of its matches use its whole clocks, and keeps the settings' gap
    between the soft and the hard limit."""
    longest = clock_seconds(batch) * size
    if longest == 0.0 or longest + CLOCK_SLACK <= settings.soft_time_limit:
        return None
    soft = longest + CLOCK_SLACK
    return soft, soft + (settings.task_time_limit - settings.soft_time_limit)


def whole_pairs(batch: Sized) -> bool:
    """Chunks must hold whole seat-swapped pairs: the stop rule scores pairs."""
    return bool(batch.stop_rule) and seat_swapped_pairs(batch.players, batch.seat_policy)


def smallest_chunk(batch: Sized) -> int:
    """The first (measuring) chunk's size, and the least any chunk of the batch gets."""
    return 2 if whole_pairs(batch) else 1


def largest_chunk(batch: Sized, settings: Settings | None = None) -> int:
    """The most matches a measured chunk of the batch may hold: with clocks, no more than fit
    in the soft time limit of ``settings`` at their longest (at least the smallest chunk)."""
    cap = MAX_CHUNK_SIZE
    if batch.stop_rule:
        cap = min(cap, stop_rule_chunk_cap(batch.matches, pairs=whole_pairs(batch)))
    longest = clock_seconds(batch)
    if longest > 0 and settings is not None:
        fits = int((settings.soft_time_limit - CLOCK_SLACK) // longest)
        cap = min(cap, max(smallest_chunk(batch), fits))
    return cap


def active_window(settings: Settings) -> float:
    """Seconds within which a worker that wrote a chunk of a batch counts as playing it."""
    return ACTIVE_CHUNKS * settings.chunk_seconds


def next_chunk_size(
    batch: Sized,
    *,
    matches: int,
    seconds: float,
    settings: Settings,
    remaining: int | None = None,
    workers: int = 0,
    count: int = 1,
) -> int:
    """Size of the next chunk once ``matches`` matches of the batch took ``seconds`` to play:
    about ``settings.chunk_seconds`` of work, and, given the ``remaining`` matches not handed
    out yet and the ``workers`` playing the batch (two or more), at most ``remaining /
    (TAIL_SPLIT × workers)`` but no less than ``chunk_seconds / SMALLEST_SHARE`` of work.

    ``count`` chunks of this size handed out at once (the pipeline filled once the first
    chunk has measured the batch) hold together no more than ``remaining``: a small batch is
    spread over them instead of going to the first few.

    A fixed ``chunk_size`` is returned as it is. With nothing measured (no match played) the
    smallest chunk is the answer.
    """
    if is_fixed(batch.chunk_size):
        return batch.chunk_size
    low = smallest_chunk(batch)
    if matches <= 0 or seconds <= 0:
        return low
    per_second = matches / seconds
    size = int(settings.chunk_seconds * per_second)
    size = min(size, GROWTH * matches, largest_chunk(batch, settings))
    if remaining is not None and workers > 1:  # one worker has no others to finish with
        late = -(-max(0, remaining) // (TAIL_SPLIT * workers))
        floor = int(settings.chunk_seconds * per_second / SMALLEST_SHARE)
        size = min(size, max(late, floor))
    if remaining is not None and count > 1:
        size = min(size, -(-max(0, remaining) // count))
    size = max(size, low)
    if low == 2:
        size -= size % 2
    return size


class RangePlanner:
    """Cuts the missing ranges of a batch into chunks as they are handed out (local mode).

    With a fixed chunk size the pieces follow the fixed chunking. Otherwise the first piece is
    the smallest chunk and nothing more is handed out until it is measured (``take`` answers
    None meanwhile); after that every piece is sized from all the chunks measured so far, and
    with ``workers`` given, shrinks toward the end (``next_chunk_size``).
    """

    def __init__(
        self,
        batch: Sized,
        missing: Iterable[tuple[int, int]],
        *,
        settings: Settings,
        workers: int = 0,
    ) -> None:
        self.batch = batch
        self.settings = settings
        self.workers = workers
        self.todo: deque[tuple[int, int]] = deque((a, b) for a, b in missing if a < b)
        self.size: int | None = batch.chunk_size if is_fixed(batch.chunk_size) else None
        self.measuring = False
        self.played = 0
        self.seconds = 0.0

    @property
    def exhausted(self) -> bool:
        """Every missing match has been handed out."""
        return not self.todo

    def take(self) -> tuple[int, int] | None:
        """The next ``[start, stop)`` to play, or None (all handed out, or waiting to measure)."""
        if not self.todo:
            return None
        if self.size is None:
            if self.measuring:
                return None
            self.measuring = True
            size = smallest_chunk(self.batch)
        else:
            size = self.size
        start, stop = self.todo[0]
        end = min(stop, chunk_end(start, size, aligned=is_fixed(self.batch.chunk_size)))
        if end == stop:
            self.todo.popleft()
        else:
            self.todo[0] = (end, stop)
        return start, end

    def measured(self, matches: int, seconds: float) -> None:
        """A chunk played ``matches`` matches in ``seconds``: size what follows by it too."""
        self.played += max(0, matches)
        self.seconds += seconds if matches > 0 else 0.0
        self.size = next_chunk_size(
            self.batch,
            matches=self.played,
            seconds=self.seconds,
            settings=self.settings,
            remaining=sum(b - a for a, b in self.todo),
            workers=self.workers,
        )
