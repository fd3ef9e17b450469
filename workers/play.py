"""Playing a range of matches of a batch: pure computation, no database.

A batch here is what a request decides (``storage.models.BatchBase``): a stored ``Batch`` or a
``BatchPlan``. Match ``i`` of a batch is fully determined by the batch and ``i``: its seed is
``match_seed(batch.seed, i)``, the seat order comes from the seat policy, each seat's agent
draws from ``agent_rng(seed, seat)``, and the batch's variation (``engines.variation``) adds
the round's opening or the players' noise, and in a game with chance may give the game the
round's seed. Replaying ``(batch, i)`` gives the same moves, except in a batch with clocks
(``time_control``): there how far a search gets depends on the machine, so only the stored
moves replay a match.

A chunk can be cut short by the soft time limit of a Celery worker, which raises
``SoftTimeLimitExceeded`` wherever the match is (``workers.timelimit``): the matches finished
so far are kept and the rest come back as failed with ``Ending.TIME_LIMIT``, so the chunk
can still be stored.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from engines.clock import TimeControl, parse_time_control
from engines.core import Agent, Ending, Game, agent_rng, match_seed, play_match
from engines.registry import has_chance, load_game, make_agent
from engines.seating import opening_round, seat_agents
from engines.variation import (
    MatchVariation,
    Variation,
    game_seed,
    match_variation,
    vary_agents,
)
from storage.models import BatchBase
from storage.records import OPENING_PLIES, MatchRecord, SeatRecord, move_ms, opening_key
from workers.native_games import is_native, iter_isolated
from workers.timelimit import is_soft_limit


def build_game(batch: BatchBase) -> Game:
    """The batch's game with its stored options."""
    return load_game(batch.game, players=batch.players, **batch.options)


def time_control(batch: BatchBase) -> TimeControl | None:
    """The batch's clocks, None without them."""
    return parse_time_control(batch.time_control)


def _variation(batch: BatchBase) -> Variation | None:
    return None if batch.variation is None else Variation.from_record(batch.variation)


def stored_seed(batch: BatchBase, index: int) -> int:
    """The seed match ``index`` stores: its game's seed, which replaying its moves needs (a
    round's shared deal under ``openings`` in a game with chance)."""
    variation = _variation(batch)
    if variation is None:
        return match_seed(batch.seed, index)
    size = opening_round(batch.players, batch.seat_policy)
    return game_seed(variation, has_chance(batch.game), batch.seed, size, index)


@dataclass(frozen=True)
class SeatedMatch:
    """Match ``index`` of a batch before its first move: who sits where, the players as they
    play (the variation's noise included), the game's seed and the match's own seed."""

    order: list[int]
    labels: list[str]
    players: list[Agent]
    game_seed: int
    seed: int
    varied: MatchVariation | None

    def opening(self, moves: Sequence[str]) -> int:
        """The opening key the match stores (``storage.records.opening_key``): its first
        moves, or the variation's key moves (the round's deal or opening) when it has one."""
        if self.varied is None:
            return opening_key(moves)
        key = self.varied.key_moves(moves, OPENING_PLIES)
        return opening_key(key, len(key))


def seat_match(game: Game, batch: BatchBase, index: int) -> SeatedMatch:
    """Seat match ``index`` of ``batch``: its agents built, each from ``agent_rng(seed,
    seat)``, and passed through the batch's variation when it has one."""
    seed = match_seed(batch.seed, index)
    order = seat_agents(len(batch.agents), batch.seat_policy, index)
    agents = [
        make_agent(game, batch.agents[a], agent_rng(seed, seat), field=f"agents[{a}]")
        for seat, a in enumerate(order)
    ]
    labels = [batch.labels[a] for a in order]
    variation = _variation(batch)
    if variation is None:
        return SeatedMatch(order, labels, agents, seed, seed, None)
    size = opening_round(batch.players, batch.seat_policy)
    varied = match_variation(variation, game, batch.seed, size, index)
    players = vary_agents(agents, varied, seed)
    return SeatedMatch(order, labels, players, varied.game_seed, seed, varied)


def play_one(game: Game, batch: BatchBase, index: int) -> MatchRecord:
    """Play match ``index`` of ``batch``; a match that raises comes back with ok=False.

    A batch with a variation plays the match through it (``engines.variation``): the agents
    still draw from ``agent_rng(match_seed, seat)``, the game from the seed the variation
    gives, and the opening key covers the variation's plies. A batch without one (stored
    before variations existed) plays exactly as it always did.
    """
    started = time.perf_counter()
    clocks = time_control(batch)
    try:
        seated = seat_match(game, batch, index)
        order, labels = seated.order, seated.labels
        result = play_match(
            game, seated.players, seated.game_seed, batch.max_plies, labels, time_control=clocks
        )
        opening = seated.opening(result.moves)
        # A stats dict that cannot be stored would fail the whole chunk's transaction.
        json.dumps(result.stats)
    except Exception as exc:
        if is_soft_limit(exc):
            raise  # the chunk's time is up: not this match's fault, and no further match starts
        error = f"{type(exc).__name__}: {exc}"
        return failed_record(batch, index, Ending.ERROR, error, time.perf_counter() - started)
    ranks = result.ranks()
    times = result.move_times
    seats = [
        SeatRecord(
            seat=s,
            agent_label=labels[s],
            agent_index=order[s],
            points=float(result.scores[s]),
            win_share=float(result.returns[s]),
            rank=ranks[s],
            move_ms=None if times is None else move_ms(times[s]),
        )
        for s in range(game.num_players)
    ]
    return MatchRecord(
        match_index=index,
        seed=result.seed,
        ok=True,
        plies=result.plies,
        ended_by=result.ended_by,
        moves=result.moves,
        stats=result.stats,
        duration=result.duration,
        seats=seats,
        first_seat=result.first_player,
        opening=opening,
    )


def failed_record(
    batch: BatchBase, index: int, ended_by: Ending, error: str, duration: float = 0.0
) -> MatchRecord:
    """The record of match ``index`` when it was not (fully) played: failed, with the reason."""
    return MatchRecord(
        match_index=index,
        seed=stored_seed(batch, index),
        ok=False,
        plies=0,
        ended_by=ended_by,
        moves=(),
        stats={},
        duration=duration,
        error=error,
    )


def play_range(
    batch: BatchBase, start: int, stop: int
) -> Iterator[tuple[str, int, int] | MatchRecord]:
    """Matches ``start`` .. ``stop - 1`` of ``batch``, each announced before it is played:
    ``("begin", index, stored seed)``, then its record. What ``workers.native_games`` runs in
    a child process, so that the parent knows which match a crash ended."""
    game = build_game(batch)
    for i in range(start, stop):
        yield ("begin", i, stored_seed(batch, i))
        yield play_one(game, batch, i)


def _played_here(batch: BatchBase, start: int, stop: int) -> Iterator[MatchRecord]:
    game = build_game(batch)
    for i in range(start, stop):
        yield play_one(game, batch, i)


def play_chunk(batch: BatchBase, start: int, stop: int) -> list[MatchRecord]:
    """Play matches ``start`` .. ``stop - 1`` of ``batch``, one record each, in order.

    A game with native code (OpenSpiel) is played in child processes
    (``workers.native_games``), so a crash fails a match and not this process.
    When the soft time limit interrupts match ``i``, matches ``i`` .. ``stop - 1`` are
    recorded as failed with ``Ending.TIME_LIMIT`` and the reason in ``error``.
    """
    if not 0 <= start <= stop:
        raise ValueError(f"bad chunk range [{start}, {stop})")
    matches = iter_isolated(batch, start, stop) if is_native(batch.game) else None
    if matches is None:
        matches = _played_here(batch, start, stop)
    records: list[MatchRecord] = []
    began = time.perf_counter()
    try:
        for record in matches:
            records.append(record)
            began = time.perf_counter()
    except Exception as exc:
        if not is_soft_limit(exc):
            raise
        i = start + len(records)
        interrupted = (
            "time limit: the chunk's soft time limit (TASK_SOFT_TIME_LIMIT) ran out "
            "during this match"
        )
        records.append(
            failed_record(batch, i, Ending.TIME_LIMIT, interrupted, time.perf_counter() - began)
        )
        skipped = f"time limit: not played, the chunk's soft time limit ran out at match {i}"
        records.extend(
            failed_record(batch, j, Ending.TIME_LIMIT, skipped) for j in range(i + 1, stop)
        )
    return records
