"""How many matches, and how much CPU time, each batch of a study needs: a short calibration.

Each batch's first few matches are played here, one after another in this process (the very
matches the batch will store: match ``i`` is decided by the batch and ``i``), and each is timed
in CPU seconds (``time.process_time``). Compiled searches are compiled (or loaded from numba's
cache) before the clock starts, so a cold cache does not count as playing time.

The matches a batch needs follow from the normal interval of a mean: a 95 % half-width ``h``
needs ``n = (z · s / h)²`` matches, with ``s`` the standard deviation of the figure's value per
match: the first mover's win share for the first-player advantage (draws count a half), an
agent's win share for its score. The calibration's ``s`` comes from a few matches, so it is
shrunk toward the widest case: one won and one lost match are added to those played before
``s`` is computed (as Agresti and Coull add successes and failures to a small sample), which
keeps it above zero when every calibration match ended alike and fades as matches are added.
Matches count as independent here; where a batch's matches share openings the report's
clustered interval is somewhat wider.

A batch with a precision stop (``stop = "precision:<figure>,half_width=<h>..."``) plays until
its figure's half-width reaches ``h``, at most its ``matches``; any other batch plays its
``matches``, measured against the study's own ``half_width``. The precision stop is read from
the batch's plan, the very rule it stops by (read by ``analysis.stopping``), so the calibration
and the batch agree whatever form it was written in.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from analysis.stopping import FIRST_PLAYER, PrecisionRule, of_batch
from analysis.studies.definition import Figure, Study
from storage.records import MatchRecord
from workers.play import build_game, play_one
from workers.studies.plan import PlannedBatch

Z95 = 1.959963984540054
"""The standard normal quantile of 0.975."""
SCORE = "score"


@dataclass(frozen=True)
class Target:
    """What a batch's matches are counted for: a figure (``first_player_advantage``,
    ``score:LABEL``, or ``score``: the agent whose score varies most) and the half-width asked,
    from the batch's precision stop or else the study's."""

    figure: str
    half_width: float | None
    stops: bool
    """True when the batch stops at that half-width (a precision stop)."""


def target_of(study: Study, p: PlannedBatch) -> Target:
    """The batch's target: its precision stop's (the very rule the batch stops by, read from
    its plan), else the study's half-width on the figure its first question asks (an agents
    question: the scores; any other: the first mover's edge)."""
    rule = of_batch(p.plan)
    if isinstance(rule, PrecisionRule):
        return Target(rule.figure, rule.half_width, True)
    asked = [q.figure for q in study.questions if q.batch == p.batch.name]
    figure = SCORE if asked and asked[0] is Figure.AGENTS else FIRST_PLAYER
    return Target(figure, study.half_width, False)


def values(records: Sequence[MatchRecord], figure: str) -> list[list[float]]:
    """The figure's value per played match: one list for the first mover's win share, one per
    agent for ``score`` (every agent) or ``score:LABEL`` (that one)."""
    played = [r for r in records if r.ok]
    if figure == FIRST_PLAYER:
        return [[_first_share(r) for r in played]]
    labels = sorted({_base(s.agent_label) for r in played for s in r.seats})
    if figure.startswith(SCORE + ":"):
        labels = [figure.split(":", 1)[1]]
    return [[_share_of(r, label) for r in played] for label in labels]


def _base(label: str) -> str:
    return label.split("#", 1)[0]


def _first_share(r: MatchRecord) -> float:
    first = 0 if r.first_seat is None else r.first_seat
    return next(s.win_share for s in r.seats if s.seat == first)


def _share_of(r: MatchRecord, label: str) -> float:
    seats = [s for s in r.seats if s.agent_label == label or _base(s.agent_label) == label]
    return sum(s.win_share for s in seats) / max(1, len(seats))


def shrunk_sd(xs: Sequence[float]) -> float:
    """The standard deviation of ``xs`` with one 0 and one 1 added (module docstring)."""
    return statistics.stdev([*xs, 0.0, 1.0])


@dataclass(frozen=True)
class Estimate:
    """One batch's calibration and what follows from it."""

    name: str
    calibration: int
    """Calibration matches played (and failed, among them: ``failed``)."""
    failed: int
    cpu_per_match: float
    """Mean CPU seconds a match, over the calibration."""
    compile_seconds: float
    target: Target
    sd: float
    """The figure's standard deviation per match, shrunk (the largest over agents for
    ``score``)."""
    needed: int | None
    """Matches for the target half-width; None without a target."""
    matches: int
    """What the batch will play: ``needed`` capped at its ``matches`` under a precision stop,
    else its ``matches``."""
    cap: int

    @property
    def cpu_seconds(self) -> float:
        return self.matches * self.cpu_per_match

    @property
    def half_width(self) -> float:
        """The half-width expected after ``matches``."""
        return Z95 * self.sd / math.sqrt(max(1, self.matches))

    @property
    def reaches(self) -> bool | None:
        """Whether ``matches`` reach the target; None without a target."""
        return None if self.needed is None else self.matches >= self.needed


def estimate(
    name: str,
    records: Sequence[MatchRecord],
    cpu: Sequence[float],
    compile_seconds: float,
    target: Target,
    cap: int,
) -> Estimate:
    """What a batch of at most ``cap`` matches needs, from its calibration ``records`` and
    their CPU seconds ``cpu``."""
    sd = max(shrunk_sd(xs) for xs in values(records, target.figure))
    needed = None
    if target.half_width is not None:
        needed = max(1, math.ceil((Z95 * sd / target.half_width) ** 2))
    matches = min(needed, cap) if target.stops and needed is not None else cap
    return Estimate(
        name=name,
        calibration=len(records),
        failed=sum(not r.ok for r in records),
        cpu_per_match=sum(cpu) / max(1, len(cpu)),
        compile_seconds=compile_seconds,
        target=target,
        sd=sd,
        needed=needed,
        matches=matches,
        cap=cap,
    )


def _compile(p: PlannedBatch) -> float:
    """Compile (or load) the searches the batch's agents call; the seconds it took."""
    from engines.compiled.warm import compile_need, needs

    began = time.perf_counter()
    for need in sorted(needs(build_game(p.plan), p.plan.agents)):
        compile_need(need)
    return time.perf_counter() - began


def calibrate(
    study: Study,
    planned: Sequence[PlannedBatch],
    matches: int,
    announce: Callable[[Estimate], None] = lambda _e: None,
) -> list[Estimate]:
    """Play the first ``matches`` matches of each batch here, timed, and estimate each."""
    found = []
    for p in planned:
        compile_seconds = _compile(p)
        game = build_game(p.plan)
        records, cpu = [], []
        for index in range(min(matches, p.plan.matches)):
            began = time.process_time()
            records.append(play_one(game, p.plan, index))
            cpu.append(time.process_time() - began)
        target = target_of(study, p)
        result = estimate(p.batch.name, records, cpu, compile_seconds, target, p.plan.matches)
        announce(result)
        found.append(result)
    return found
