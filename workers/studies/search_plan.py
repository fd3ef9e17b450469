"""What a study's ``[tune]`` search will cost, from the same short calibration as its batches.

A search plays four kinds of batch: its trials at the screening level (``screen_matches``
each at most: a trial found clearly unfair stops sooner, so this is the most it can take),
the base variant screened the same way as a control (one batch at a trial's cost), the
``rerank`` best played again at the base batch's level (``rerank_matches`` each), and the
best variant and the base confirmed at that level (each to the study's ``half_width`` when it
states one, else ``confirm_matches``). One trial and one confirmation are calibrated; a
re-ranking batch plays at the confirmation's level, so it costs what a confirmation's match
costs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from analysis.studies.definition import Study
from storage.settings import Settings
from workers.studies.calibrate import Estimate, calibrate
from workers.studies.search import plan_search
from workers.studies.tuning import TuneKey, TuneSpec, parse_tune


class StageKind(StrEnum):
    TRIALS = "trials"
    CONTROL = "control"
    RERANKINGS = "re-rankings"
    CONFIRMATIONS = "confirmations"


@dataclass(frozen=True)
class Stage:
    """One kind of batch the search plays: how many, each of how many matches, at what CPU
    time a match."""

    kind: StageKind
    batches: int
    matches: int
    cpu_per_match: float

    @property
    def cpu_seconds(self) -> float:
        return self.batches * self.matches * self.cpu_per_match


@dataclass(frozen=True)
class SearchEstimate:
    spec: TuneSpec
    confirm: Estimate
    """A confirmation's calibration, with the matches its precision stop needs."""
    stages: tuple[Stage, ...]

    @property
    def matches(self) -> int:
        return sum(s.batches * s.matches for s in self.stages)

    @property
    def cpu_seconds(self) -> float:
        return sum(s.cpu_seconds for s in self.stages)


def estimate_search(
    study: Study,
    settings: Settings,
    calibration: int,
    confirm_base: bool = True,
    announce: Callable[[Estimate], None] = lambda _e: None,
) -> SearchEstimate:
    """Calibrate a trial and a confirmation of the study's search and estimate every stage."""
    spec = parse_tune(study)
    search = plan_search(study, spec, settings)
    confirm = next(p for key, p in search.checks if key is TuneKey.CONFIRM_MATCHES)
    trial, confirmed = calibrate(study, [search.trial, confirm], calibration, announce)
    screen = search.trial.plan.matches
    stages = [
        Stage(StageKind.TRIALS, spec.trials, screen, trial.cpu_per_match),
        Stage(StageKind.CONTROL, 1, screen, trial.cpu_per_match),
    ]
    if spec.rerank:
        rerank = next(p for key, p in search.checks if key is TuneKey.RERANK_MATCHES)
        stages.append(
            Stage(StageKind.RERANKINGS, spec.rerank, rerank.plan.matches, confirmed.cpu_per_match)
        )
    stages.append(
        Stage(
            StageKind.CONFIRMATIONS,
            2 if confirm_base else 1,
            confirmed.matches,
            confirmed.cpu_per_match,
        )
    )
    return SearchEstimate(spec, confirmed, tuple(stages))
