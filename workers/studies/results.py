"""A study's results as files beside it: ``<study folder>/results/<study>/<batch>/``, one
archive folder (``storage.archive``) per batch, so that a study outlives any database.

``study run`` brings what is there into the database before it decides what is missing
(:func:`restore`; on a server, :func:`restore_to` uploads what the server lacks), and saves
each batch as it plays (:class:`Checkpoints`; :class:`Keeper` for the batches a server plays):
every few minutes, when the batch ends and on Ctrl-C, so a study stopped anywhere goes on
elsewhere from the files alone. A save takes what fetches the batch (:data:`Fetch`): an export
from this database, or a download from the server. ``study report`` and ``study verify`` read
them into a database of their own (:func:`throwaway_engine`).

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
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import Engine

from analysis.ladder.fit import ladder_table
from analysis.ladder.ladders import ladder_for
from analysis.ladder.results import FOLDER, read_results, results_path
from analysis.studies.definition import Study, StudyError
from analysis.studies.levels import LevelsInput
from storage.db import dispose_engine, get_engine, upgrade
from storage.models import BatchBase, BatchPlan, BatchStatus, definition_key
from storage.submissions import batch_for_key, remember_submission
from workers.studies.plan import PlannedBatch
from workers.studies.runner import LOCAL_SCOPE, Restored, StudyRun, idempotency

if TYPE_CHECKING:
    from storage.archive import Archive, ExportSummary

# storage.archive is imported where it is used: it loads pyarrow, which the command line
# should not pay for on every command.

RESULTS = "results"
"""The folder beside the study files that holds their results, one sub-folder per study."""
CHECKPOINT_MINUTES = 5.0
"""How often ``study run`` saves a batch it is playing, by default."""


def results_folder(study: Study) -> Path:
    """Where ``study``'s results live: ``<its folder>/results/<its name>``."""
    return study.path.parent / RESULTS / study.name


def committed_ladder(study: Study) -> LevelsInput | None:
    """The strength ladder of the study's game, fitted from its file beside the results
    (``results/ladder/<game>.jsonl``), when the study plays one game and that file holds
    matches. The page names the file relative to the study's folder's parent, as the
    repository does, so that it reads the same in any clone. The ladder is the game's own
    (``analysis.ladder.ladders.ladder_for``: a built-in's, an installed game's ``LADDER``,
    or the generic one)."""
    games = {str(b.keys.get("game")) for b in study.batches}
    if len(games) != 1:
        return None
    game = games.pop()
    folder = study.path.parent / RESULTS / FOLDER
    rows = read_results(game, folder)
    if not rows:
        return None
    source = results_path(game, Path(study.path.parent.name) / RESULTS / FOLDER)
    return LevelsInput(ladder_table(ladder_for(game), rows), source.as_posix())


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


Fetch = Callable[[Path], "ExportSummary"]
"""Writes one batch's archive into the folder it is given (new, beside the batch's results
folder) and says what it wrote: an export from this database (:func:`exporter`), or a download
from a server."""


def exporter(engine: Engine, batch_id: str, *, moves: bool = True) -> Fetch:
    """Fetch batch ``batch_id`` by exporting it from ``engine``'s database."""
    from storage.archive import export_batch

    return lambda folder: export_batch(engine, batch_id, folder, moves=moves)


def keep(fetch: Fetch, folder: Path) -> ExportSummary:
    """Replace what ``folder`` holds by what ``fetch`` writes, in whole or not at all (see the
    module docstring)."""
    recover(folder)
    staged = _staged(folder)
    summary = fetch(staged)
    if folder.exists():
        os.replace(folder, _old(folder))
    os.replace(staged, folder)
    if _old(folder).exists():
        shutil.rmtree(_old(folder))
    return replace(summary, path=folder)


def save(engine: Engine, batch_id: str, folder: Path, *, moves: bool = True) -> ExportSummary:
    """Export batch ``batch_id`` to ``folder``, replacing what it held in whole or not at all."""
    return keep(exporter(engine, batch_id, moves=moves), folder)


class Checkpoints:
    """Saves one playing batch, fetched by ``fetch``, every ``every`` seconds (``tick`` after
    each chunk or look at it) and when asked (``save``: at its end, on Ctrl-C)."""

    def __init__(
        self,
        fetch: Fetch,
        folder: Path,
        *,
        every: float,
        clock: Callable[[], float] = time.monotonic,
        saved: Callable[[ExportSummary], None] = lambda _s: None,
    ) -> None:
        self.fetch, self.folder = fetch, folder
        self.every, self.clock, self.saved = every, clock, saved
        self.last = clock()

    def tick(self, _progress: Any = None) -> None:
        if self.clock() - self.last >= self.every:
            self.save()

    def save(self) -> ExportSummary:
        summary = keep(self.fetch, self.folder)
        self.last = self.clock()
        self.saved(summary)
        return summary


def holds_finished(folder: Path, batch_id: str) -> bool:
    """True when ``folder`` holds batch ``batch_id`` saved once it had finished (its manifest
    says so): nothing a later save could add. A manifest this version cannot read (another
    format, a damaged file) holds nothing finished: the batch is saved again over it."""
    from storage.archive import ArchiveError, read_batch

    try:
        batch = read_batch(folder)
    except ArchiveError:
        return False
    return batch["id"] == batch_id and batch["status"] in BatchStatus.FINISHED


class Keeper:
    """Keeps the batches of a study played elsewhere (on a server) in their results folders
    as they are watched: ``polled`` after each look saves a batch every ``every`` seconds and
    once when it has finished; ``save_all`` (on Ctrl-C) saves every unfinished one now.
    ``fetch(batch_id)`` fetches a batch."""

    def __init__(
        self,
        study: Study,
        fetch: Callable[[str], Fetch],
        *,
        every: float,
        clock: Callable[[], float] = time.monotonic,
        saved: Callable[[ExportSummary], None] = lambda _s: None,
    ) -> None:
        self.study, self.fetch = study, fetch
        self.every, self.clock, self.saved = every, clock, saved
        self.points: dict[str, Checkpoints] = {}
        self.kept: set[str] = set()
        """Batches saved finished (or found so in their folder)."""

    def _points(self, run: StudyRun) -> Checkpoints:
        points = self.points.get(run.name)
        if points is None:
            fetch, folder = self.fetch(run.batch_id), batch_folder(self.study, run.name)
            points = Checkpoints(
                fetch, folder, every=self.every, clock=self.clock, saved=self.saved
            )
            self.points[run.name] = points
        return points

    def polled(self, runs: Sequence[StudyRun]) -> None:
        for run in runs:
            if run.name in self.kept:
                continue
            points = self._points(run)
            if run.status not in BatchStatus.FINISHED:
                points.tick()
                continue
            if not holds_finished(points.folder, run.batch_id):
                points.save()
            self.kept.add(run.name)

    def save_all(self) -> None:
        for name, points in self.points.items():
            if name not in self.kept:
                points.save()


def _plan_of(batch: dict[str, Any]) -> BatchPlan:
    return BatchPlan(**{name: batch[name] for name in BatchBase.model_fields})


class Destination(Protocol):
    """Where :func:`restore_to` brings a study's results: this database (:class:`Here`) or a
    server (``workers.studies.remote.OnService``)."""

    merges: bool
    """Whether a folder is brought in again when the destination holds its batch already
    (merging what the folder has more); else it is left alone."""
    where: str
    """How a refusal names the destination (``this database``)."""

    def held(self, p: PlannedBatch) -> str | None:
        """The id of the batch the key of ``p`` names there, if any."""
        ...

    def bring(self, p: PlannedBatch, folder: Path, archive: Archive) -> Restored:
        """Import ``folder`` (read as ``archive``) so that the key of ``p`` finds it."""
        ...


class Here:
    """This database as a :class:`Destination`: the folder is imported, its key remembered."""

    merges = True
    where = "this database"

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def held(self, p: PlannedBatch) -> str | None:
        batch = batch_for_key(self.engine, LOCAL_SCOPE, p.key)
        return None if batch is None else batch.id

    def bring(self, p: PlannedBatch, folder: Path, archive: Archive) -> Restored:
        from storage.archive import import_batch

        summary = import_batch(self.engine, folder, archive=archive)
        remember_submission(self.engine, idempotency(p), summary.batch_id)
        return Restored(p.batch.name, summary.batch_id, summary.matches_added, summary.status)


def restore(engine: Engine, study: Study, planned: Sequence[PlannedBatch]) -> list[Restored]:
    """Import every batch of ``study`` that has a results folder into ``engine``'s database,
    where ``study run`` then finds it by its key (:func:`restore_to` :class:`Here`)."""
    return restore_to(Here(engine), study, planned)


def restore_to(
    destination: Destination, study: Study, planned: Sequence[PlannedBatch]
) -> list[Restored]:
    """Bring every batch of ``study`` that has a results folder to ``destination``, where
    ``study run`` then finds it by its key. Refused (``StudyError`` at the batch's line,
    nothing brought for it) when the folder holds another definition of the batch, or the
    destination already holds another batch for it."""
    from storage.archive import ArchiveError
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
        held = destination.held(p)
        if held is not None and held != archive.batch_id:
            raise StudyError(
                study.path,
                p.batch.line,
                p.batch.name,
                f"{destination.where} holds batch {held} for it but {folder} holds batch "
                f"{archive.batch_id}; use another database (--db) or server to go on from "
                "the files",
            )
        if held is not None and not destination.merges:
            continue
        try:
            restored.append(destination.bring(p, folder, archive))
        except ArchiveError as exc:
            raise StudyError(study.path, p.batch.line, p.batch.name, str(exc)) from None
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
