"""``playtester tune``: a search over a game's options for the fairest variant, each trial a
batch, with Optuna choosing the next one.

A study file's ``[tune]`` table names a base batch (its game, agents, players and matches per
trial) and the option searched:

- ``space = "permute"`` (the default) keeps the values the base batch's setting of the option
  puts on its cells and places them anew, for an option whose game declares that space
  (``Option.space``, an :class:`engines.options.PlacementSpace`: its cells, the symmetries a
  placement may keep, ``symmetry`` choosing one, and how a placement is written as the option's
  value). Optuna proposes one number in [0, 1) per free cell; the cells sorted by their numbers
  take the values sorted from the largest (the random-key encoding of a permutation, which
  suits both TPE and CMA-ES). Without ``option`` the first option of the game that declares
  such a space is searched.
- ``space = "choices"`` with ``choices = [...]`` picks among declared values, for any option.

The target is the smallest absolute first-player advantage. A trial's batch is checked as it
runs (every ``check_every`` matches): once its 95 % interval lies wholly outside
±``prune_outside`` the variant is clearly unfair, the batch is cancelled and the trial pruned.
Trials live in Optuna's storage beside the project's database
(:func:`storage.tuning.optuna_storage`), and trial batches carry content keys like every study
batch, so an interrupted search resumes.
The best variant is then confirmed by a batch of at most ``confirm_matches`` matches, beside
the base variant confirmed the same way; where the study file states its ``half_width``, each
confirmation stops once its first-player advantage's 95 % interval is that narrow (the
precision stop), so that it ends at the precision asked rather than at a round number.

A search can spend its compute where it matters (multi-fidelity): trials **screen** at a
cheaper level (``screen_agents``, ``screen_matches`` a trial), then the ``rerank`` best
screened variants are played again at the base batch's own level (``rerank_matches`` each)
and the best there is confirmed. With ``common_openings`` (the default) every trial and every
re-ranking batch keeps the base batch's seed, so all variants meet the same openings and noise
draws and their differences are not blurred by different luck.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, TypeVar

from analysis.studies.definition import (
    BatchKey,
    Study,
    StudyBatch,
    StudyError,
    TopKey,
    header_line,
    key_line,
)
from engines.core import GameError
from engines.options import PlacementSpace
from engines.registry import game_class
from workers.studies.plan import PlannedBatch


class TuneKey(StrEnum):
    """What a ``[tune]`` table may say."""

    BATCH = "batch"
    OPTION = "option"
    SPACE = "space"
    SYMMETRY = "symmetry"
    CHOICES = "choices"
    TRIALS = "trials"
    SAMPLER = "sampler"
    SEED = "seed"
    PRUNE_OUTSIDE = "prune_outside"
    CHECK_EVERY = "check_every"
    CONFIRM_MATCHES = "confirm_matches"
    SCREEN_AGENTS = "screen_agents"
    SCREEN_MATCHES = "screen_matches"
    RERANK = "rerank"
    RERANK_MATCHES = "rerank_matches"
    COMMON_OPENINGS = "common_openings"


class Space(StrEnum):
    """How a trial's value of the option is proposed (the first is the default)."""

    PERMUTE = "permute"
    CHOICES = "choices"


class Sampler(StrEnum):
    """Optuna's sampler for the search: TPE or CMA-ES."""

    TPE = "tpe"
    CMAES = "cmaes"


@dataclass(frozen=True)
class TuneSpec:
    batch: str
    option: str
    space: Space
    symmetry: str
    """The symmetry a ``permute`` placement keeps, one the option's space declares (empty
    for ``choices``)."""
    choices: tuple[Any, ...]
    trials: int
    sampler: Sampler
    seed: int
    prune_outside: float
    check_every: int
    confirm_matches: int
    screen_agents: str | None = None
    """The agents trials are played with (the base batch's when None)."""
    screen_matches: int | None = None
    """Matches a trial (the base batch's when None)."""
    rerank: int = 0
    """How many of the best trials are played again at the base batch's level (0: none)."""
    rerank_matches: int | None = None
    """Matches a re-ranking batch (the base batch's when None)."""
    common_openings: bool = True
    """Trials and re-ranking batches keep the base batch's seed."""
    placement: PlacementSpace | None = None
    """Where ``permute`` places the values: the space the game declares for the option."""


_E = TypeVar("_E", bound=StrEnum)


def tune_error(study: Study, key: str, message: str) -> StudyError:
    """An error about ``key`` of the ``[tune]`` table, at the line where it is written."""
    line = header_line(study.text, TopKey.TUNE, 0) or 1
    return StudyError(study.path, key_line(study.text, line, key) or line, f"tune.{key}", message)


class _Table:
    """The ``[tune]`` table of ``study`` being read: each error at its key's line."""

    def __init__(self, study: Study, raw: Mapping[str, Any]) -> None:
        self.study = study
        self.raw = raw

    def error(self, key: TuneKey, message: str) -> StudyError:
        return tune_error(self.study, key, message)

    def number(self, key: TuneKey, default: float, kind: type) -> Any:
        value = self.raw.get(key, default)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if (
            not ok
            or not math.isfinite(value)
            or value <= 0
            or (kind is int and value != int(value))
        ):
            raise self.error(key, f"{value!r}: give a positive {kind.__name__}")
        return kind(value)

    def optional_number(self, key: TuneKey, kind: type) -> Any:
        return None if key not in self.raw else self.number(key, 1, kind)

    def flag(self, key: TuneKey, default: bool) -> bool:
        value = self.raw.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"{value!r}: give true or false")
        return value

    def choice(self, key: TuneKey, allowed: type[_E]) -> _E:
        value = self.raw.get(key, next(iter(allowed)))
        if value not in set(allowed):
            raise self.error(key, f"{value!r}; use one of {', '.join(allowed)}")
        return allowed(value)


def parse_tune(study: Study) -> TuneSpec:
    """The study's ``[tune]`` table, checked; ``StudyError`` names the line and field."""
    if study.tune is None:
        raise StudyError(study.path, 1, "tune", "this study has no [tune] table")
    table = _Table(study, study.tune)
    unknown = sorted(set(study.tune) - set(TuneKey))
    if unknown:
        raise tune_error(study, unknown[0], f"unknown key; use one of {', '.join(TuneKey)}")
    batch = study.tune.get(TuneKey.BATCH)
    if batch not in {b.name for b in study.batches}:
        raise table.error(TuneKey.BATCH, f"no batch named {batch!r}")
    space = table.choice(TuneKey.SPACE, Space)
    choices = study.tune.get(TuneKey.CHOICES, [])
    if space == Space.CHOICES and (not isinstance(choices, list) or len(choices) < 2):
        raise table.error(TuneKey.CHOICES, "give at least two values to choose among")
    option, symmetry, placement = _searched(table, str(batch), space)
    screen_agents = study.tune.get(TuneKey.SCREEN_AGENTS)
    if screen_agents is not None and (not isinstance(screen_agents, str) or not screen_agents):
        raise table.error(TuneKey.SCREEN_AGENTS, "give the agents as `playtester run` takes them")
    trials = table.number(TuneKey.TRIALS, 30, int)
    rerank = int(table.raw.get(TuneKey.RERANK, 0))
    if TuneKey.RERANK in table.raw:
        rerank = table.number(TuneKey.RERANK, 1, int)
        if rerank > trials:
            raise table.error(TuneKey.RERANK, f"{rerank}: at most the {trials} trials")
    return TuneSpec(
        batch=str(batch),
        option=option,
        space=space,
        symmetry=symmetry,
        placement=placement,
        choices=tuple(choices) if space == Space.CHOICES else (),
        trials=trials,
        sampler=table.choice(TuneKey.SAMPLER, Sampler),
        seed=table.number(TuneKey.SEED, 1, int),
        prune_outside=table.number(TuneKey.PRUNE_OUTSIDE, 0.05, float),
        check_every=table.number(TuneKey.CHECK_EVERY, 200, int),
        confirm_matches=table.number(TuneKey.CONFIRM_MATCHES, 10_000, int),
        screen_agents=screen_agents,
        screen_matches=table.optional_number(TuneKey.SCREEN_MATCHES, int),
        rerank=rerank,
        rerank_matches=table.optional_number(TuneKey.RERANK_MATCHES, int),
        common_openings=table.flag(TuneKey.COMMON_OPENINGS, True),
    )


def _searched(table: _Table, batch: str, space: Space) -> tuple[str, str, PlacementSpace | None]:
    """The option searched and, for ``permute``, the symmetry its placements keep and the space
    they are made in: all checked against what the base batch's game declares."""
    raw = table.raw
    game = table.study.batch(batch).keys.get(BatchKey.GAME)
    try:
        declared = {o.name: o for o in game_class(str(game)).game_type.options}
    except (GameError, ImportError) as exc:
        if space == Space.PERMUTE:
            raise table.error(TuneKey.BATCH, f"{batch}'s game: {exc}") from None
        declared = {}
    placed = [o.name for o in declared.values() if o.space is not None]
    option = raw.get(TuneKey.OPTION, placed[0] if placed else None)
    if option is None and space == Space.PERMUTE:
        raise table.error(
            TuneKey.SPACE, f"{game} declares no option whose values permute can place"
        )
    if not isinstance(option, str) or not option:
        raise table.error(TuneKey.OPTION, "name the option searched")
    if space == Space.CHOICES:
        return option, "", None  # a symmetry, if written, is the permute space's: unused here
    searched = declared.get(option)
    placement = None if searched is None else searched.space
    if placement is None:
        raise table.error(
            TuneKey.SPACE,
            f"{game}'s {option!r} declares no values permute can place; use choices for it",
        )
    symmetry = raw.get(TuneKey.SYMMETRY, placement.symmetries[0])
    if symmetry not in placement.symmetries:
        raise table.error(
            TuneKey.SYMMETRY, f"{symmetry!r}; use one of {', '.join(placement.symmetries)}"
        )
    return option, str(symmetry), placement


def clearly_unfair(first_player: Mapping[str, Any], margin: float) -> bool:
    """Whether a first-player advantage's 95 % interval lies wholly outside ±``margin``."""
    low, high = first_player.get("ci_low"), first_player.get("ci_high")
    return low is not None and high is not None and (low > margin or high < -margin)


@dataclass(frozen=True)
class TrialOutcome:
    batch_id: str
    report: dict[str, Any]
    stopped: bool
    """Cancelled as clearly unfair before its last match."""


Runner = Callable[[PlannedBatch, Callable[[dict[str, Any]], bool]], TrialOutcome]
"""Plays a trial's batch (here or on a server), calling ``should_stop(report)`` every
``check_every`` matches; cancels the batch when it answers true."""


def trial_batch(
    base: StudyBatch,
    spec: TuneSpec,
    name: str,
    value: Any,
    matches: int | None = None,
    *,
    agents: str | None = None,
    keep_seed: bool = False,
) -> StudyBatch:
    """The base batch with the searched option set to ``value`` (and ``matches``, ``agents``
    when given). Without ``keep_seed`` it has no seed, so each variant gets its own, derived
    from its definition; with it, every variant plays the base batch's openings."""
    keys = {k: v for k, v in base.keys.items() if keep_seed or k != "seed"}
    keys["options"] = {**base.keys.get("options", {}), spec.option: value}
    if matches is not None:
        keys["matches"] = matches
    if agents is not None:
        keys["agents"] = agents
    return replace(base, name=name, keys=keys)


def screen_batch(base: StudyBatch, spec: TuneSpec, name: str, value: Any) -> StudyBatch:
    """A trial: ``value`` played at the screening level."""
    return trial_batch(
        base,
        spec,
        name,
        value,
        spec.screen_matches,
        agents=spec.screen_agents,
        keep_seed=spec.common_openings,
    )


def confirm_batch(
    base: StudyBatch, spec: TuneSpec, name: str, value: Any, half_width: float | None
) -> StudyBatch:
    """A confirmation of ``value`` at the base batch's level: ``confirm_matches`` at most,
    stopped at the study's ``half_width`` unless the base batch has a stop rule of its own."""
    batch = trial_batch(base, spec, name, value, matches=spec.confirm_matches)
    if half_width is None or BatchKey.STOP in batch.keys:
        return batch
    stop = f"precision:first_player_advantage,half_width={half_width:g}"
    return replace(batch, keys={**batch.keys, BatchKey.STOP: stop})


def rerank_batch(base: StudyBatch, spec: TuneSpec, name: str, value: Any) -> StudyBatch:
    """A screened variant played again at the base batch's own level."""
    return trial_batch(base, spec, name, value, spec.rerank_matches, keep_seed=spec.common_openings)
