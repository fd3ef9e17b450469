"""The Optuna side of ``playtester tune``: where trials are stored, how a trial turns Optuna's
proposal into a batch, and the confirmation of the best variant."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from api.cli.studies.definition import Study
from api.cli.studies.plan import definition_key, plan_one
from api.cli.studies.tuning import (
    Runner,
    TuneSpec,
    clearly_unfair,
    decode_layout,
    key_count,
    trial_batch,
)
from storage.settings import Settings


@dataclass(frozen=True)
class Confirmed:
    """A variant confirmed by its own batch: the option's value and the batch's report."""

    value: Any
    batch_id: str
    report: dict[str, Any]


@dataclass(frozen=True)
class SearchResult:
    trials: int
    pruned: int
    best: Confirmed
    base: Confirmed | None


def _base_value(study: Study, spec: TuneSpec, settings: Settings) -> Any:
    """The searched option's value in the base batch, as the game normalised it."""
    base = plan_one(study, study.batch(spec.batch), settings)
    return base.plan.options.get(spec.option)


def _proposal(trial: Any, spec: TuneSpec, values: list[int]) -> Any:
    if spec.space == "choices":
        index = trial.suggest_categorical("choice", list(range(len(spec.choices))))
        return spec.choices[index]
    keys = [trial.suggest_float(f"key_{i}", 0.0, 1.0) for i in range(key_count(spec))]
    return decode_layout(keys, values, spec.symmetry)


def _layout_values(study: Study, spec: TuneSpec, settings: Settings) -> list[int]:
    from engines.alveoles.layouts import normalise_layout

    return list(normalise_layout(_base_value(study, spec, settings)))


def run_search(
    study: Study,
    spec: TuneSpec,
    settings: Settings,
    runner: Runner,
    storage: Any,
    announce: Callable[[str], None] = lambda _line: None,
    confirm_base: bool = True,
) -> SearchResult:
    """Run ``spec.trials`` trials (counting those an earlier run stored), then confirm the
    best variant, and the base one when ``confirm_base``, with ``confirm_matches`` each."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    values = _layout_values(study, spec, settings) if spec.space == "permute" else []
    base = study.batch(spec.batch)
    sampler = (
        optuna.samplers.CmaEsSampler(seed=spec.seed)
        if spec.sampler == "cmaes"
        else optuna.samplers.TPESampler(seed=spec.seed)
    )
    name = f"{study.name}:{definition_key(plan_one(study, base, settings).plan)[:16]}"
    search = optuna.create_study(
        storage=storage, sampler=sampler, study_name=name, direction="minimize", load_if_exists=True
    )

    def objective(trial: Any) -> float:
        value = _proposal(trial, spec, values)
        planned = plan_one(study, trial_batch(base, spec, f"trial-{trial.number}", value), settings)
        outcome = runner(
            planned,
            lambda report: clearly_unfair(report["first_player_advantage"], spec.prune_outside),
        )
        first = outcome.report["first_player_advantage"]
        trial.set_user_attr("batch_id", outcome.batch_id)
        trial.set_user_attr("value", value)
        trial.set_user_attr("first_player_advantage", first)
        announce(
            f"trial {trial.number}: batch {outcome.batch_id}, first-player advantage "
            f"{first['estimate'] * 100:+.1f} % [{first['ci_low'] * 100:+.1f}, "
            f"{first['ci_high'] * 100:+.1f}]"
            + (" — clearly unfair, stopped" if outcome.stopped else "")
        )
        if outcome.stopped:
            raise optuna.TrialPruned()
        return abs(float(first["estimate"]))

    done = len([t for t in search.trials if t.state.is_finished()])
    if done < spec.trials:
        search.optimize(objective, n_trials=spec.trials - done)
    complete = [t for t in search.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if not complete:
        raise RuntimeError("every trial was stopped as clearly unfair: widen prune_outside")
    best_value = search.best_trial.user_attrs["value"]

    def confirm(label: str, value: Any) -> Confirmed:
        batch = trial_batch(base, spec, label, value, matches=spec.confirm_matches)
        outcome = runner(plan_one(study, batch, settings), lambda _report: False)
        return Confirmed(value, outcome.batch_id, outcome.report)

    announce(f"confirming the best variant with {spec.confirm_matches:,} matches")
    best = confirm("confirm-best", best_value)
    base_confirmed = None
    if confirm_base:
        announce(f"confirming the base variant with {spec.confirm_matches:,} matches")
        base_confirmed = confirm("confirm-base", _base_value(study, spec, settings))
    pruned = len([t for t in search.trials if t.state == optuna.trial.TrialState.PRUNED])
    return SearchResult(len(search.trials), pruned, best, base_confirmed)


def result_lines(spec: TuneSpec, result: SearchResult) -> list[str]:
    """The result as plain lines: both confirmations with their intervals, the best value."""

    def figure(c: Confirmed) -> str:
        f = c.report["first_player_advantage"]
        return (
            f"{f['estimate'] * 100:+.2f} % [{f['ci_low'] * 100:+.2f}, {f['ci_high'] * 100:+.2f}] "
            f"(95 %, {f['interval']}; p = {f['p_value']:.3g}; batch {c.batch_id}, "
            f"{c.report['batch']['matches_done']:,} matches)"
        )

    lines = [f"{result.trials} trials, {result.pruned} stopped as clearly unfair"]
    lines.append(f"best {spec.option}: first-player advantage {figure(result.best)}")
    if result.base is not None:
        lines.append(f"base {spec.option}: first-player advantage {figure(result.base)}")
    return lines
