"""Verified reproduction: replay a seeded sample of a batch's stored matches from their seeds
and compare every move and the result with what is stored. By default the sample is drawn
apart among the decided matches and among the drawn ones (``ByResult``: its docstring gives
the arithmetic), so a batch full of draws cannot hide a change of its decided results.

A match of a batch is determined by the batch and its index (``workers.play``), so a stored
match that replays differently was changed after it was played, or was played by different
code: either way its figures cannot be trusted as this code's. Batches with clocks are refused:
how far a search gets there depends on the machine, so their moves do not replay from seeds.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from analysis.frames import seat_results_numeric
from engines.core import OptionError
from storage.models import BatchBase
from storage.queries import find_match, played_match_indices
from storage.records import MatchRecord, split_moves
from workers.play import build_game, play_one

PER_RESULT = 10
"""Matches the default sample draws among the decided matches, and as many among the drawn."""


@dataclass(frozen=True)
class ByResult:
    """A sample of ``per_result`` decided matches and ``per_result`` drawn ones (all of a kind
    when it has fewer), each drawn at random.

    Sized to catch a forgery that changes results, however many draws a batch has. A change
    of a share ``f`` of the decided results escapes only if none of the ``n`` decided matches
    drawn is among the changed ones: probability at most ``(1 − f)ⁿ`` (less when drawn without
    replacement). With ``n`` = 10, a change of at least half of them escapes with probability
    at most 2⁻¹⁰ < 0.001, so it is caught with probability ≥ 0.999; a change of every decided
    result (a wholesale flip) is caught with certainty whenever the batch has a decided match;
    and likewise for the drawn ones. A sample drawn among all matches gives no such bound: 3
    matches of Alquerque's `hard` batch, 37 % of them draws, missed every decided one with
    probability 0.37³ ≈ 5 %, and 10 of a batch that is 90 % draws with 35 %.
    """

    per_result: int = PER_RESULT


DEFAULT_SAMPLE = ByResult()
"""What ``verify_batch`` replays when not told how many."""

_MATCH_FIELDS = ("seed", "ok", "plies", "ended_by", "first_seat", "opening")
_SEAT_FIELDS = (
    ("agent", "agent_label"),
    ("agent_index", "agent_index"),
    ("points", "points"),
    ("win_share", "win_share"),
    ("rank", "rank"),
)
"""Stored seat columns and the ``SeatRecord`` fields a replay gives them from."""


@dataclass(frozen=True)
class Mismatch:
    """One way a replayed match differs from the stored one.

    ``what`` names the column (``moves``, ``plies``, ``seat 1 win_share``, ...); for ``moves``,
    ``ply`` is the first differing ply (1-based) and ``stored`` / ``replayed`` are the moves
    there (``(end)`` where one list is shorter).
    """

    match_index: int
    what: str
    stored: str
    replayed: str
    ply: int | None = None

    def describe(self) -> str:
        where = f" at ply {self.ply}" if self.ply is not None else ""
        return (
            f"match {self.match_index}: {self.what}{where} differs: stored {self.stored}, "
            f"replayed {self.replayed}"
        )


@dataclass(frozen=True)
class Verdict:
    """What ``verify_batch`` found. ``sampled``: the match indices replayed, in order, out of
    ``played`` stored played matches; ``mismatches``: every difference, by match then column;
    ``without_moves``: sampled matches whose moves were not stored (exported without them),
    checked on everything else."""

    batch_id: str
    seed: int
    played: int
    sampled: tuple[int, ...]
    mismatches: tuple[Mismatch, ...]
    without_moves: int

    @property
    def ok(self) -> bool:
        """True when every sampled match replayed as stored."""
        return not self.mismatches


def by_result(decided: list[int], drawn: list[int], per_result: int, seed: int) -> list[int]:
    """``per_result`` of the ``decided`` indices and as many of the ``drawn`` ones (all of a
    kind when it has fewer), drawn with ``seed``, sorted."""
    rng = random.Random(seed)
    chosen = [rng.sample(kind, min(per_result, len(kind))) for kind in (decided, drawn)]
    return sorted(chosen[0] + chosen[1])


def decided_matches(engine: Engine, batch: BatchBase, played: list[int]) -> list[int]:
    """The ``played`` matches some seat won more of than another (by the stored results)."""
    seats = seat_results_numeric(engine, batch.id, batch.labels)
    shares = seats.groupby("match_index")["win_share"]
    spread = shares.max() - shares.min()
    won = {int(i) for i in spread.index[spread.to_numpy() > 0]}
    return [i for i in played if i in won]


def sample_indices(indices: list[int], sample: int | None, seed: int) -> list[int]:
    """``sample`` of ``indices`` drawn with ``seed`` (all of them when ``sample`` is None or
    not smaller), sorted."""
    if sample is None or sample >= len(indices):
        return list(indices)
    return sorted(random.Random(seed).sample(indices, sample))


def _chosen(played: list[int], matches: Sequence[int]) -> list[int]:
    """The asked ``matches``, sorted and once each; each must be a played match."""
    known = set(played)
    for index in matches:
        if index not in known:
            raise OptionError(
                f"--match {index}: no played match has that index "
                f"({len(played)} played, indices {_span(played)})",
                field="match",
            )
    return sorted(set(matches))


def _span(indices: list[int]) -> str:
    return f"{indices[0]}–{indices[-1]}" if indices else "none"


def verify_batch(
    engine: Engine,
    batch: BatchBase,
    *,
    sample: int | ByResult | None = DEFAULT_SAMPLE,
    seed: int = 0,
    matches: Sequence[int] = (),
) -> Verdict:
    """Replay ``sample`` of ``batch``'s played matches (a number drawn among all of them, a
    ``ByResult`` sample by default, None: all), drawn with ``seed``, or exactly the played
    ``matches`` when given, and compare each with its stored rows. Raises ``OptionError`` for
    a batch with clocks, a sample below one or a match not played."""
    if isinstance(sample, ByResult) and sample.per_result < 1:
        raise OptionError(f"a sample per result must be at least 1, not {sample.per_result}",
                          field="sample")  # fmt: skip
    if isinstance(sample, int) and sample < 1:
        raise OptionError(f"--sample must be at least 1, not {sample}", field="sample")
    if batch.time_control is not None:
        raise OptionError(
            f"batch {batch.id} plays with clocks ({batch.time_control}): how far a search gets "
            "depends on the machine, so its matches do not replay from their seeds",
            field="batch",
        )
    played = played_match_indices(engine, batch.id)
    if matches:
        chosen = _chosen(played, matches)
    elif isinstance(sample, ByResult):
        decided = decided_matches(engine, batch, played)
        drawn = sorted(set(played) - set(decided))
        chosen = by_result(decided, drawn, sample.per_result, seed)
    else:
        chosen = sample_indices(played, sample, seed)
    game = build_game(batch)
    mismatches: list[Mismatch] = []
    bare = 0
    for index in chosen:
        stored = find_match(engine, batch.id, index)
        replayed = play_one(game, batch, index)
        found, has_moves = compare_match(stored.match, stored.seats, replayed)
        mismatches.extend(found)
        bare += not has_moves
    return Verdict(
        batch_id=batch.id,
        seed=seed,
        played=len(played),
        sampled=tuple(chosen),
        mismatches=tuple(mismatches),
        without_moves=bare,
    )


def compare_match(
    match: dict[str, Any], seats: list[dict[str, Any]], replayed: MatchRecord
) -> tuple[list[Mismatch], bool]:
    """The differences between a stored match (its row and seat rows, by column) and its
    replay, and whether the stored row held moves to compare."""
    index = int(match["match_index"])
    found: list[Mismatch] = []

    def differ(what: str, stored: Any, again: Any) -> None:
        if stored != again:
            found.append(Mismatch(index, what, repr(stored), repr(again)))

    if not replayed.ok:
        differ("ok", match["ok"], f"failed: {replayed.error}")
        return found, True
    stored_moves = split_moves(match["moves"])
    has_moves = bool(stored_moves) or match["plies"] == 0
    if has_moves:
        found.extend(_first_move_difference(index, stored_moves, list(replayed.moves)))
    for name in _MATCH_FIELDS:
        differ(name, match[name], getattr(replayed, name))
    # Compared as stored: through JSON, which turns tuples into lists.
    differ("stats", match["stats"], json.loads(json.dumps(replayed.stats)))
    if len(seats) != len(replayed.seats):
        differ("seats", len(seats), len(replayed.seats))
        return found, has_moves
    for row, seat in zip(seats, replayed.seats, strict=True):
        for column, attribute in _SEAT_FIELDS:
            differ(f"seat {row['seat']} {column}", row[column], getattr(seat, attribute))
    return found, has_moves


def _first_move_difference(index: int, stored: list[str], replayed: list[str]) -> list[Mismatch]:
    for ply, (a, b) in enumerate(zip(stored, replayed, strict=False), start=1):
        if a != b:
            return [Mismatch(index, "moves", a, b, ply)]
    if len(stored) != len(replayed):
        ply = min(len(stored), len(replayed)) + 1
        shorter = "(end)"
        a = stored[ply - 1] if len(stored) >= ply else shorter
        b = replayed[ply - 1] if len(replayed) >= ply else shorter
        return [Mismatch(index, "moves", a, b, ply)]
    return []
