"""Playing a range of matches of a batch: pure computation, no database.

Match ``i`` of a batch is fully determined by the batch and ``i``: its seed is
``match_seed(batch.seed, i)``, the seat order comes from the seat policy, and each seat's
agent draws from ``agent_rng(seed, seat)``. Replaying ``(batch, i)`` gives the same moves.

A chunk can be cut short by the soft time limit of a Celery worker, which raises
``SoftTimeLimitExceeded`` wherever the match is (``workers.timelimit``): the matches finished
so far are kept and the rest come back as failed with ``ended_by="time_limit"``, so the chunk
can still be stored.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from engines.core import Game, agent_rng, match_seed, play_match
from engines.registry import load_game, make_agent
from engines.seating import seat_agents
from workers.timelimit import is_soft_limit

TIME_LIMIT = "time_limit"
"""``ended_by`` of a match stopped, or never started, because its chunk ran out of time."""
ABANDONED = "abandoned"
"""``ended_by`` of a match whose chunk was given up after too many deliveries without result."""


class SeatRecord(NamedTuple):
    """One seat of one match, in the column order of the seat_result table."""

    seat: int
    agent_label: str
    agent_index: int
    points: float
    win_share: float
    rank: int


@dataclass(slots=True)
class MatchRecord:
    """Everything stored about one match; ``ok`` False means it raised and ``error`` says how."""

    match_index: int
    seed: int
    ok: bool
    plies: int
    ended_by: str
    moves: tuple[str, ...]
    stats: dict[str, Any]
    duration: float
    error: str | None = None
    seats: list[SeatRecord] = field(default_factory=list)


class BatchLike(Protocol):
    """What playing needs from a batch: a stored ``Batch`` and a ``BatchPlan`` both fit."""

    @property
    def game(self) -> str: ...
    @property
    def players(self) -> int: ...
    @property
    def options(self) -> dict[str, Any]: ...
    @property
    def agents(self) -> list[dict[str, Any]]: ...
    @property
    def labels(self) -> list[str]: ...
    @property
    def seed(self) -> int: ...
    @property
    def seat_policy(self) -> str: ...
    @property
    def max_plies(self) -> int: ...


def build_game(batch: BatchLike) -> Game:
    """The batch's game with its stored options."""
    return load_game(batch.game, players=batch.players, **batch.options)


def play_one(game: Game, batch: BatchLike, index: int) -> MatchRecord:
    """Play match ``index`` of ``batch``; a match that raises comes back with ok=False."""
    seed = match_seed(batch.seed, index)
    started = time.perf_counter()
    try:
        order = seat_agents(len(batch.agents), batch.seat_policy, index)
        agents = [
            make_agent(game, batch.agents[a], agent_rng(seed, seat), field=f"agents[{a}]")
            for seat, a in enumerate(order)
        ]
        labels = [batch.labels[a] for a in order]
        result = play_match(game, agents, seed, batch.max_plies, labels)
        # A stats dict that cannot be stored would fail the whole chunk's transaction.
        json.dumps(result.stats)
    except Exception as exc:
        if is_soft_limit(exc):
            raise  # the chunk's time is up: not this match's fault, and no further match starts
        return MatchRecord(
            match_index=index,
            seed=seed,
            ok=False,
            plies=0,
            ended_by="error",
            moves=(),
            stats={},
            duration=time.perf_counter() - started,
            error=f"{type(exc).__name__}: {exc}",
        )
    ranks = result.ranks()
    seats = [
        SeatRecord(
            seat=s,
            agent_label=labels[s],
            agent_index=order[s],
            points=float(result.scores[s]),
            win_share=float(result.returns[s]),
            rank=ranks[s],
        )
        for s in range(game.num_players)
    ]
    return MatchRecord(
        match_index=index,
        seed=seed,
        ok=True,
        plies=result.plies,
        ended_by=result.ended_by,
        moves=result.moves,
        stats=result.stats,
        duration=result.duration,
        seats=seats,
    )


def failed_record(
    batch: BatchLike, index: int, ended_by: str, error: str, duration: float = 0.0
) -> MatchRecord:
    """The record of match ``index`` when it was not (fully) played: failed, with the reason."""
    return MatchRecord(
        match_index=index,
        seed=match_seed(batch.seed, index),
        ok=False,
        plies=0,
        ended_by=ended_by,
        moves=(),
        stats={},
        duration=duration,
        error=error,
    )


def play_chunk(batch: BatchLike, start: int, stop: int) -> list[MatchRecord]:
    """Play matches ``start`` .. ``stop - 1`` of ``batch``, one record each, in order.

    When the soft time limit interrupts match ``i``, matches ``i`` .. ``stop - 1`` are
    recorded as failed with ``ended_by="time_limit"`` and the reason in ``error``.
    """
    if not 0 <= start <= stop:
        raise ValueError(f"bad chunk range [{start}, {stop})")
    game = build_game(batch)
    records: list[MatchRecord] = []
    for i in range(start, stop):
        began = time.perf_counter()
        try:
            records.append(play_one(game, batch, i))
        except Exception as exc:
            if not is_soft_limit(exc):
                raise
            interrupted = (
                "time limit: the chunk's soft time limit (TASK_SOFT_TIME_LIMIT) ran out "
                "during this match"
            )
            records.append(
                failed_record(batch, i, TIME_LIMIT, interrupted, time.perf_counter() - began)
            )
            skipped = f"time limit: not played, the chunk's soft time limit ran out at match {i}"
            records.extend(failed_record(batch, j, TIME_LIMIT, skipped) for j in range(i + 1, stop))
            break
    return records
