"""One ladder match in a worker process: seated as the service seats it, its CPU time measured
per seat with ``time.process_time``, returned as the line the results file stores."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from typing import Any

from analysis.ladder.ladders import Ladder, ladder_for, pairing_name
from engines.core import Action, Agent, Game, LoadingAgent, MatchResult, State, play_match
from engines.seating import opening_round
from storage.models import BatchPlan
from storage.settings import get_settings
from workers.batches import plan_batch
from workers.play import SeatedMatch, build_game, seat_match


def pairing_batch(ladder: Ladder, a: str, b: str, games: int) -> BatchPlan:
    """The batch pairing ``a-b`` is: the service's plan, so seating and variation are its.
    Its match ``i`` does not depend on ``games``: a pairing can be extended later."""
    return plan_batch(
        game=ladder.game,
        players=ladder.players,
        options=dict(ladder.options),
        agents=ladder.seat_agents(a, b),
        matches=games,
        seed=ladder.seed(a, b),
        seat_policy=None,
        chunk_size=None,
        max_plies=None,
        variation=ladder.variation(),
        settings=get_settings(),
    )


def round_size(batch: BatchPlan) -> int:
    """Matches in one round of the batch's seating design: its unit of sampling at least."""
    return opening_round(batch.players, batch.seat_policy)


class CpuTimed:
    """A player whose every move is timed in CPU seconds of this process."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.seconds = 0.0

    def step(self, state: State) -> Action:
        began = time.process_time()
        try:
            return self.inner.step(state)
        finally:
            self.seconds += time.process_time() - began


@dataclass(frozen=True)
class TimedMatch:
    """A match played with its CPU seconds: each seat's moves and the whole match's."""

    seated: SeatedMatch
    result: MatchResult
    cpu: list[float]
    match_cpu: float


def play_timed(game: Game, batch: BatchPlan, index: int) -> TimedMatch:
    """Match ``index`` of ``batch``, seated as the service seats it, every move timed.

    Compiled searches load (or compile) before any clock starts, as a clocked match does, so
    a process's first match costs what every later one does.
    """
    seated = seat_match(game, batch, index)
    for player in seated.players:
        if isinstance(player, LoadingAgent):
            player.preload()
    began = time.process_time()
    timed = [CpuTimed(p) for p in seated.players]
    result = play_match(game, timed, seated.game_seed, batch.max_plies, seated.labels)
    match_cpu = time.process_time() - began
    return TimedMatch(seated, result, [t.seconds for t in timed], match_cpu)


@cache
def _batch(game: str, a: str, b: str, games: int) -> tuple[Game, BatchPlan]:
    batch = pairing_batch(ladder_for(game), a, b, games)
    return build_game(batch), batch


def play_ladder_match(game_name: str, a: str, b: str, games: int, index: int) -> dict[str, Any]:
    """Match ``index`` of pairing ``a-b``: the line the results file stores."""
    game, batch = _batch(game_name, a, b, games)
    played = play_timed(game, batch, index)
    seated, result = played.seated, played.result
    levels = ladder_for(game_name).seat_agents(a, b)
    return {
        "pairing": pairing_name(a, b),
        "index": index,
        "round": index // round_size(batch),
        "seats": [levels[i] for i in seated.order],
        "returns": [round(float(r), 6) for r in result.returns],
        "cpu": [round(t, 4) for t in played.cpu],
        "match_cpu": round(played.match_cpu, 4),
        "plies": result.plies,
        "ended_by": str(result.ended_by),
        "opening": seated.opening(result.moves),
    }
