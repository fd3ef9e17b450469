"""A ``tune`` search's results as files beside its study, so that a search of many CPU-hours
outlives its database as a study does (:mod:`workers.studies.results`).

- **Trials**: every finished trial (its proposal, state, objective and figures) is written to
  ``results/<study>/tune-trials.json`` after each trial (:mod:`workers.studies.trials`).
- **The control, re-rankings and confirmations** (the batches a page quotes: the base variant
  screened as the trials are, the variants played again, the best and the base confirmed) are
  saved as archive folders,
  ``results/<study>/tune-<batch>/``, every few minutes while they play and when they end, and
  imported again before one is played, so a stopped confirmation of 10,000 matches goes on
  from its checkpoint. Trial batches are not kept: their figures are in the trials file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from analysis.studies.definition import Study, StudyError, TopKey, header_line
from analysis.studies.search_page import KEPT_PREFIX, SearchInput
from workers.studies.plan import PlannedBatch
from workers.studies.results import (
    Checkpoints,
    batch_folder,
    exporter,
    has_results,
    holds_finished,
    recover,
    restore,
    results_folder,
    save,
)
from workers.studies.tuning import Runner, TrialOutcome

TRIALS_FILE = "tune-trials.json"
TRIAL_PREFIX = "trial-"
"""The search's trial batches are named ``trial-N``; the others are kept as folders."""


def trials_file(study: Study) -> Path:
    return results_folder(study) / TRIALS_FILE


class KeptBatches:
    """Keeps a local search's re-rankings and confirmations as results folders: wraps its
    runner (:meth:`runner`) and plays each batch through :meth:`play`, which checkpoints it."""

    def __init__(
        self,
        engine: Engine,
        study: Study,
        play: Callable[[str, Callable[[Any], None]], object],
        *,
        every: float,
        saved: Callable[[Any], None] = lambda _summary: None,
    ) -> None:
        self.engine, self.study, self.inner_play = engine, study, play
        self.every, self.saved = every, saved
        self.folder: Path | None = None

    def runner(self, inner: Runner) -> Runner:
        def run(p: PlannedBatch, should_stop: Callable[[dict[str, Any]], bool]) -> TrialOutcome:
            if p.batch.name.startswith(TRIAL_PREFIX):
                self.folder = None
                return inner(p, should_stop)
            kept = replace(p, batch=replace(p.batch, name=KEPT_PREFIX + p.batch.name))
            restore(self.engine, self.study, [kept])
            self.folder = batch_folder(self.study, kept.batch.name)
            try:
                outcome = inner(p, should_stop)
            finally:
                folder, self.folder = self.folder, None
            # A batch its folder already holds finished (read back on a resume) is not
            # exported again.
            if not holds_finished(folder, outcome.batch_id):
                self.saved(save(self.engine, outcome.batch_id, folder))
            return outcome

        return run

    def play(self, batch_id: str, progress: Callable[[Any], None]) -> None:
        """Play ``batch_id``, saving it every ``every`` seconds when it is kept, and on
        Ctrl-C before the interruption goes on."""
        if self.folder is None:
            self.inner_play(batch_id, progress)
            return
        points = Checkpoints(
            exporter(self.engine, batch_id), self.folder, every=self.every, saved=self.saved
        )

        def both(state: Any) -> None:
            progress(state)
            points.tick(state)

        try:
            self.inner_play(batch_id, both)
        except KeyboardInterrupt:
            points.save()
            raise


@dataclass(frozen=True)
class SearchRecord:
    """A search as its files keep it: the finished trials and the kept batches (name without
    the ``tune-`` prefix -> batch id in the database they were read into)."""

    trials: list[dict[str, Any]]
    kept: dict[str, str]


def read_search(engine: Engine, study: Study) -> SearchRecord | None:
    """The search of ``study`` from its results folder, its kept batches imported into
    ``engine``; None when the study has no search or its trials were never saved."""
    from storage.archive import ArchiveError, import_batch

    path = trials_file(study)
    if study.tune is None or not path.is_file():
        return None
    line = header_line(study.text, TopKey.TUNE, 0) or 1
    try:
        trials = json.loads(path.read_text(encoding="utf-8"))["trials"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StudyError(study.path, line, "tune", f"{path} cannot be read: {exc}") from None
    kept = {}
    for folder in sorted(results_folder(study).glob(f"{KEPT_PREFIX}*")):
        if not folder.is_dir():
            continue
        recover(folder)
        if not has_results(folder):
            continue
        try:
            summary = import_batch(engine, folder)
        except ArchiveError as exc:
            raise StudyError(study.path, line, "tune", f"{folder}: {exc}") from None
        kept[folder.name.removeprefix(KEPT_PREFIX)] = summary.batch_id
    return SearchRecord(trials, kept)


def search_input(engine: Engine, study: Study) -> SearchInput | None:
    """What the study's page shows of its search (:func:`read_search`), or None."""
    from workers.studies.tuning import parse_tune

    record = read_search(engine, study)
    if record is None:
        return None
    spec = parse_tune(study)
    return SearchInput(record.trials, record.kept, spec.option, spec.screen_agents)
