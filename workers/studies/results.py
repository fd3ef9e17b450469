"""A study's results as files beside it: ``<study folder>/results/<study>/<batch>/``, one
archive folder (``storage.archive``) per batch, so that a study outlives any database.

``study run`` brings what is there into the database before it decides what is missing
(:func:`restore`), and saves each batch as it plays (:class:`Checkpoints`): every few minutes,
when the batch ends and on Ctrl-C, so a study stopped anywhere goes on elsewhere from the files
alone. ``study report`` and ``study verify`` read them into a database of their own
(:func:`throwaway_engine`).

A save never leaves a folder half-written: the batch is exported beside its folder
(``.<batch>.new``), the old folder moved aside (``.<batch>.old``) and the new one moved in, then
the old one removed. Each step is one rename, so after a stop at any point :func:`recover` finds
a whole folder: the new one if its export was complete, else the old one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from analysis.studies.definition import Study, StudyError
from storage.db import dispose_engine, get_engine, upgrade
from storage.models import BatchBase, BatchPlan
from storage.submissions import batch_for_key, remember_submission
from workers.studies.plan import PlannedBatch, definition_key
from workers.studies.runner import LOCAL_SCOPE, idempotency

if TYPE_CHECKING:
    from storage.archive import ExportSummary

# storage.archive is imported where it is used: it loads pyarrow, which the command line
# should not pay for on every command.

RESULTS = "results"
"""The folder beside the study files that holds their results, one sub-folder per study."""
CHECKPOINT_MINUTES = 5.0
"""How often ``study run`` saves a batch it is playing, by default."""


def results_folder(study: Study) -> Path:
    """Where ``study``'s results live: ``<its folder>/results/<its name>``."""
    return study.path.parent / RESULTS / study.name


def batch_folder(study: Study, name: str) -> Path:
    return results_folder(study) / name


def _staged(folder: Path) -> Path:
    return folder.with_name(f".{folder.name}.new")


def _old(folder: Path) -> Path:
    return folder.with_name(f".{folder.name}.old")


def has_results(folder: Path) -> bool:
    """True when ``folder`` holds a saved batch (a manifest)."""
    from storage.archive import MANIFEST

    return (folder / MANIFEST).is_file()


def _whole(folder: Path) -> bool:
    from storage.archive import ArchiveError
    from storage.archive import read_archive as read_folder

    try:
        read_folder(folder)
    except ArchiveError:
        return False
    return True


def recover(folder: Path) -> None:
    """Finish or undo a save that was stopped midway (see the module docstring)."""
    staged, old = _staged(folder), _old(folder)
    if not folder.exists():
        if staged.is_dir() and _whole(staged):
            os.replace(staged, folder)
        elif old.is_dir():
            os.replace(old, folder)
    for leftover in (staged, old):
        if leftover.exists():
            shutil.rmtree(leftover)


def save(engine: Engine, batch_id: str, folder: Path, *, moves: bool = True) -> ExportSummary:
    """Export batch ``batch_id`` to ``folder``, replacing what it held in whole or not at all."""
    from storage.archive import export_batch

    recover(folder)
    staged = _staged(folder)
    summary = export_batch(engine, batch_id, staged, moves=moves)
    if folder.exists():
        os.replace(folder, _old(folder))
    os.replace(staged, folder)
    if _old(folder).exists():
        shutil.rmtree(_old(folder))
    return replace(summary, path=folder)


class Checkpoints:
    """Saves one playing batch every ``every`` seconds (``tick`` after each chunk) and when
    asked (``save``: at its end, on Ctrl-C)."""

    def __init__(
        self,
        engine: Engine,
        batch_id: str,
        folder: Path,
        *,
        every: float,
        moves: bool = True,
        clock: Callable[[], float] = time.monotonic,
        saved: Callable[[ExportSummary], None] = lambda _s: None,
    ) -> None:
        self.engine, self.batch_id, self.folder = engine, batch_id, folder
        self.every, self.moves, self.clock, self.saved = every, moves, clock, saved
        self.last = clock()

    def tick(self, _progress: Any = None) -> None:
        if self.clock() - self.last >= self.every:
            self.save()

    def save(self) -> ExportSummary:
        summary = save(self.engine, self.batch_id, self.folder, moves=self.moves)
        self.last = self.clock()
        self.saved(summary)
        return summary


@dataclass(frozen=True)
class Restored:
    """A study batch brought in from its results folder: what the import added."""

    name: str
    batch_id: str
    matches_added: int
    status: str


def _plan_of(batch: dict[str, Any]) -> BatchPlan:
    return BatchPlan(**{name: batch[name] for name in BatchBase.model_fields})


def restore(engine: Engine, study: Study, planned: Sequence[PlannedBatch]) -> list[Restored]:
    """Import every batch of ``study`` that has a results folder into ``engine``'s database,
    where ``study run`` then finds it by its key. Refused (``StudyError`` at the batch's line,
    nothing imported for it) when the folder holds another definition of the batch, or the
    database already holds another batch for it."""
    from storage.archive import ArchiveError, import_batch
    from storage.archive import read_archive as read_folder

    restored = []
    for p in planned:
        folder = batch_folder(study, p.batch.name)
        recover(folder)
        if not has_results(folder):
            continue
        try:
            archive = read_folder(folder)
        except ArchiveError as exc:
            raise StudyError(study.path, p.batch.line, p.batch.name, str(exc)) from None
        if definition_key(_plan_of(archive.batch)) != definition_key(p.plan):
            raise StudyError(
                study.path,
                p.batch.line,
                p.batch.name,
                f"{folder} holds batch {archive.batch_id}, played from another definition of "
                "this batch; move that folder away to play the batch anew",
            )
        key = idempotency(p)
        held = batch_for_key(engine, LOCAL_SCOPE, key.key)
        if held is not None and held.id != archive.batch_id:
            raise StudyError(
                study.path,
                p.batch.line,
                p.batch.name,
                f"this database holds batch {held.id} for it but {folder} holds batch "
                f"{archive.batch_id}; use another database (--db) to go on from the files",
            )
        try:
            summary = import_batch(engine, folder)
        except ArchiveError as exc:
            raise StudyError(study.path, p.batch.line, p.batch.name, str(exc)) from None
        remember_submission(engine, key, summary.batch_id)
        restored.append(
            Restored(p.batch.name, summary.batch_id, summary.matches_added, summary.status)
        )
    return restored


@contextmanager
def throwaway_engine() -> Iterator[Engine]:
    """A new SQLite database in a temporary folder, schema made, removed on exit: where the
    committed results are read without touching anyone's database."""
    with tempfile.TemporaryDirectory(prefix="playtester-results-") as folder:
        url = f"sqlite:///{folder}/results.db"
        upgrade(url)
        try:
            yield get_engine(url)
        finally:
            dispose_engine(url)
