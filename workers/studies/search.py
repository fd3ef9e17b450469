"""The Optuna side of ``playtester tune``: the search checked whole before anything is stored,
how a trial turns Optuna's proposal into a batch, and the confirmation of the best variant."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.stopping import PrecisionRule, of_batch
from analysis.studies.definition import Study, StudyBatch, StudyError
from analysis.studies.search_page import CONTROL
from engines.options import PlacementSpace
from engines.registry import build_game
from storage.models import definition_key
from storage.settings import Settings
from workers.studies.plan import Checker, PlannedBatch, check_on_server, plan_one
from workers.studies.tuning import (
    Runner,
    Sampler,
    Space,
    TuneKey,
    TuneSpec,
    clearly_unfair,
    confirm_batch,
    rerank_batch,
    screen_batch,
    tune_error,
)


class SearchError(Exception):
    """A search that ran but has no answer (every trial stopped as clearly unfair)."""


@dataclass(frozen=True)
class SearchPlan:
    """A search whose every kind of batch was planned before anything is stored."""

    study: Study
    spec: TuneSpec
    base: PlannedBatch
    placed: Any
    """The base batch's value of the option, validated: the values the ``permute`` space
    places anew (None for ``choices``)."""
    checks: tuple[tuple[TuneKey | None, PlannedBatch], ...]
    """One batch of each kind the search makes (the base, each choice or a placed layout,
    a re-ranking, a confirmation), with the ``[tune]`` key behind it (None: the base batch as
    written): what a server is asked to check before the first is sent."""
    trial: PlannedBatch
    """A trial as the search plays it (at the screening level, if any)."""

    @property
    def name(self) -> str:
        """The Optuna study's name: the study's and its base batch's definition, and the
        screening level's when trials screen, so that trials of another fidelity never mix."""
        key = definition_key(self.base.plan)[:16]
        if self.spec.screen_agents is None and self.spec.screen_matches is None:
            return f"{self.study.name}:{key}"
        return f"{self.study.name}:{key}:screen-{definition_key(self.trial.plan)[:12]}"


def _planned(study: Study, key: TuneKey, batch: StudyBatch, settings: Settings) -> PlannedBatch:
    try:
        return plan_one(study, batch, settings)
    except StudyError as exc:
        raise tune_error(study, key, f"{exc.field}: {exc.message}") from None


def plan_search(study: Study, spec: TuneSpec, settings: Settings) -> SearchPlan:
    """Plan the base batch, a trial of each choice (or one placed layout) and a confirmation of
    ``confirm_matches``, as ``playtester run`` would: ``StudyError`` names the ``[tune]`` key
    behind the first bad one, before an Optuna study or a batch exists."""
    base = plan_one(study, study.batch(spec.batch), settings)
    base_batch = study.batch(spec.batch)
    placed: Any = None
    if spec.space == Space.PERMUTE:
        space = _space(spec)
        # The base batch is planned, so its options are valid; the game validates them again
        # into the form its space works on.
        placed = build_game(base.plan.game, base.plan.players, base.plan.options).options[
            spec.option
        ]
        try:
            keys = [0.5] * space.cells(placed, spec.symmetry)
            sample: Any = space.decode(placed, keys, spec.symmetry)
        except (ValueError, TypeError) as exc:
            raise tune_error(study, TuneKey.SPACE, f"{spec.batch}'s {spec.option}: {exc}") from None
        trials = [screen_batch(base_batch, spec, "trial", sample)]
    else:
        sample = spec.choices[0]
        trials = [
            screen_batch(base_batch, spec, f"choice-{i}", value)
            for i, value in enumerate(spec.choices)
        ]
    # A trial's faults are the screening keys' when it screens, else the space's.
    trial_key = TuneKey.SCREEN_AGENTS if spec.screen_agents is not None else TuneKey.CHOICES
    keyed = [(trial_key, batch) for batch in trials]
    base_value = base.plan.options.get(spec.option)
    keyed.append((trial_key, screen_batch(base_batch, spec, CONTROL, base_value)))
    if spec.rerank:
        keyed.append((TuneKey.RERANK_MATCHES, rerank_batch(base_batch, spec, "rerank", sample)))
    confirm = confirm_batch(base_batch, spec, "confirm", sample, study.half_width)
    keyed.append((TuneKey.CONFIRM_MATCHES, confirm))
    checks = [(key, _planned(study, key, batch, settings)) for key, batch in keyed]
    return SearchPlan(study, spec, base, placed, ((None, base), *checks), checks[0][1])


def _space(spec: TuneSpec) -> PlacementSpace:
    if spec.placement is None:
        raise ValueError(f"the permute space needs {spec.option!r}'s declared placements")
    return spec.placement


def check_search_on_server(search: SearchPlan, server: Checker) -> None:
    """Have the server check one batch of each kind the search makes before the first is
    sent: ``StudyError`` names the ``[tune]`` key behind the first it refuses."""
    for key, planned in search.checks:
        try:
            check_on_server(search.study, [planned], server)
        except StudyError as exc:
            if key is None:
                raise
            raise tune_error(search.study, key, f"{exc.field}: {exc.message}") from None


@dataclass(frozen=True)
class Confirmed:
    """A variant confirmed by its own batch: the option's value and the batch's report."""

    value: Any
    batch_id: str
    report: dict[str, Any]

    def document(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "batch_id": self.batch_id,
            "first_player_advantage": self.report["first_player_advantage"],
        }


@dataclass(frozen=True)
class Reranked:
    """A screened variant played again at the base batch's level."""

    trial: int
    value: Any
    screened: dict[str, Any]
    """Its first-player advantage at the screening level."""
    batch_id: str
    first_player_advantage: dict[str, Any]

    def document(self) -> dict[str, Any]:
        return {
            "trial": self.trial,
            "value": self.value,
            "screened": self.screened,
            "batch_id": self.batch_id,
            "first_player_advantage": self.first_player_advantage,
        }


@dataclass(frozen=True)
class SearchResult:
    trials: int
    pruned: int
    best: Confirmed
    base: Confirmed | None
    reranked: tuple[Reranked, ...] = ()
    control: Confirmed | None = None
    """The base variant screened as the trials are (:data:`CONTROL`)."""

    def document(self, study: str, option: str) -> dict[str, Any]:
        """The result as JSON data: the best value and the base one, with their figures, the
        re-ranked variants and the base's screening control."""
        return {
            "control": None if self.control is None else self.control.document(),
            "study": study,
            "option": option,
            "best": self.best.document(),
            "base": None if self.base is None else self.base.document(),
            "trials": self.trials,
            "pruned": self.pruned,
            "reranked": [r.document() for r in self.reranked],
        }


def _proposal(trial: Any, spec: TuneSpec, placed: Any) -> Any:
    if spec.space == Space.CHOICES:
        index = trial.suggest_categorical("choice", list(range(len(spec.choices))))
        return spec.choices[index]
    space = _space(spec)
    count = space.cells(placed, spec.symmetry)
    keys = [trial.suggest_float(f"key_{i}", 0.0, 1.0) for i in range(count)]
    return space.decode(placed, keys, spec.symmetry)


def _sampler(spec: TuneSpec) -> Any:
    import optuna

    if spec.sampler == Sampler.CMAES:
        return optuna.samplers.CmaEsSampler(seed=spec.seed)
    return optuna.samplers.TPESampler(seed=spec.seed)


def run_search(
    search: SearchPlan,
    settings: Settings,
    runner: Runner,
    storage: Any,
    announce: Callable[[str], None] = lambda _line: None,
    confirm_base: bool = True,
    trials_path: Path | None = None,
) -> SearchResult:
    """Run ``spec.trials`` trials (counting those an earlier run stored), then confirm the
    best variant, and the base one when ``confirm_base``, with ``confirm_matches`` each.
    With ``trials_path`` the finished trials are written there after each one, and read
    back into an empty storage first (:mod:`workers.studies.trials`)."""
    import optuna

    from workers.studies.trials import restore_trials, save_trials

    study, spec = search.study, search.spec
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    base = study.batch(spec.batch)
    stored = optuna.create_study(
        storage=storage,
        sampler=_sampler(spec),
        study_name=search.name,
        direction="minimize",
        load_if_exists=True,
    )

    def objective(trial: Any) -> float:
        value = _proposal(trial, spec, search.placed)
        planned = plan_one(
            study, screen_batch(base, spec, f"trial-{trial.number}", value), settings
        )
        outcome = runner(
            planned,
            lambda report: clearly_unfair(report["first_player_advantage"], spec.prune_outside),
        )
        first = outcome.report["first_player_advantage"]
        trial.set_user_attr("batch_id", outcome.batch_id)
        trial.set_user_attr("value", value)
        trial.set_user_attr("first_player_advantage", first)
        announce(
            f"trial {trial.number}: batch {outcome.batch_id}, {_percent(first)}"
            + (" — clearly unfair, stopped" if outcome.stopped else "")
        )
        if outcome.stopped:
            raise optuna.TrialPruned()
        return abs(float(first["estimate"]))

    callbacks = []
    if trials_path is not None:
        added = restore_trials(stored, search.name, trials_path, study)
        if added:
            announce(f"{added} trials read from {trials_path}")
        callbacks.append(lambda stored, _trial: save_trials(stored, search.name, trials_path))
    done = len([t for t in stored.trials if t.state.is_finished()])
    if done < spec.trials:
        stored.optimize(objective, n_trials=spec.trials - done, callbacks=callbacks)
    complete = [t for t in stored.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if not complete:
        raise SearchError("every trial was stopped as clearly unfair: widen prune_outside")
    best_value = stored.best_trial.user_attrs["value"]
    control = _screen_control(search, settings, runner, announce)
    reranked: list[Reranked] = []
    if spec.rerank:
        leaders = sorted(complete, key=lambda t: (t.value, t.number))[: spec.rerank]
        announce(f"re-ranking the best {len(leaders)} at {spec.batch}'s own level")
        for t in leaders:
            batch = rerank_batch(base, spec, f"rerank-{t.number}", t.user_attrs["value"])
            outcome = runner(plan_one(study, batch, settings), lambda _report: False)
            first = outcome.report["first_player_advantage"]
            announce(f"trial {t.number} re-ranked: batch {outcome.batch_id}, {_percent(first)}")
            reranked.append(
                Reranked(
                    t.number,
                    t.user_attrs["value"],
                    t.user_attrs["first_player_advantage"],
                    outcome.batch_id,
                    first,
                )
            )
        best_value = min(
            reranked, key=lambda r: (abs(float(r.first_player_advantage["estimate"])), r.trial)
        ).value

    def confirm(label: str, which: str, value: Any) -> Confirmed:
        batch = confirm_batch(base, spec, label, value, study.half_width)
        planned = plan_one(study, batch, settings)
        announce(f"confirming the {which} variant: {_extent(planned)}")
        outcome = runner(planned, lambda _report: False)
        return Confirmed(value, outcome.batch_id, outcome.report)

    best = confirm("confirm-best", "best", best_value)
    base_confirmed = None
    if confirm_base:
        base_confirmed = confirm("confirm-base", "base", search.base.plan.options.get(spec.option))
    pruned = len([t for t in stored.trials if t.state == optuna.trial.TrialState.PRUNED])
    return SearchResult(len(stored.trials), pruned, best, base_confirmed, tuple(reranked), control)


def _screen_control(
    search: SearchPlan, settings: Settings, runner: Runner, announce: Callable[[str], None]
) -> Confirmed:
    """The base variant played as a trial is (same agents, matches and openings), outside
    Optuna: what the screen says of the variant the search must beat, so that the trials'
    figures can be read against it and the sampler learns nothing from it."""
    study, spec = search.study, search.spec
    value = search.base.plan.options.get(spec.option)
    batch = screen_batch(study.batch(spec.batch), spec, CONTROL, value)
    outcome = runner(plan_one(study, batch, settings), lambda _report: False)
    first = outcome.report["first_player_advantage"]
    announce(f"the base variant screened as a control: batch {outcome.batch_id}, {_percent(first)}")
    return Confirmed(value, outcome.batch_id, outcome.report)


def _extent(planned: PlannedBatch) -> str:
    """How long a batch plays: its matches, or the precision it stops at and its cap."""
    rule = of_batch(planned.plan)
    cap = f"{planned.plan.matches:,} matches"
    if rule is None:
        return cap
    if isinstance(rule, PrecisionRule):
        figure = rule.figure.replace("_", "-")
        return f"until its {figure} interval is ±{rule.half_width * 100:g} points, at most {cap}"
    return f"until its {rule.type} test decides, at most {cap}"


def _percent(first: dict[str, Any]) -> str:
    def pct(value: float | None) -> str:
        return "–" if value is None else f"{value * 100:+.1f}"

    return (
        f"first-player advantage {pct(first['estimate'])} % "
        f"[{pct(first['ci_low'])}, {pct(first['ci_high'])}]"
    )
