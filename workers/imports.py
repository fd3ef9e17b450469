"""The one archive import: unpack, check, plan, rows, replay, store. ``POST /batches/import``
and ``playtester import`` both call :func:`import_folder` (the route through
:func:`import_upload`), so both accept exactly the same archives.

1. **Structure before content** (``storage.archive``): the zip's members, the manifest's size,
   nesting and batch row, each table's footer and page headers against the batch's own size,
   then its rows in bounded pieces.
2. **Plan**: the manifest's batch re-planned by this server as a submission would be
   (:func:`planned`); any column that differs from the plan is refused by name.
3. **Rows** (``workers.import_rows``): every chunk, match and seat row against that plan.
4. **Replay**: every match's stored moves through the rules; a sample with the agents.
5. **State rules**: a batch queued or running here, or one another key holder made, is never
   touched (:class:`ImportConflictError`, a 409); the state stored is derived from the rows
   (:func:`derived_state`), never taken from the file.
6. **Store**: ``storage.archive.import_batch``, in one transaction with the import's key.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import IntegrityError

from engines.core import OptionError
from storage.archive import MANIFEST, Archive, ArchiveError, ImportSummary, import_batch
from storage.archive import read_archive as read_folder
from storage.archive.load import definition_differs
from storage.archive.zipped import unpack
from storage.chunking import uncovered
from storage.crud import get_batch
from storage.db import dispose_engine, get_engine, upgrade
from storage.models import BatchBase, BatchPlan, BatchStatus, definition_key
from storage.settings import Settings
from storage.submissions import imported_for_key, key_holders, remember_import
from workers.import_rows import check_rows, replay_moves, replay_sample

MAX_IMPORT_MATCHES = 200_000
"""Most matches one archive may bring (its rows are held in memory while they are checked);
the largest committed batch has 9,674."""
RETRY_AFTER_SECONDS = 5
PLAYING = frozenset({BatchStatus.QUEUED, BatchStatus.RUNNING})


class ImportConflictError(ArchiveError):
    """The archive's batch is one this import may not touch here (a 409)."""


class ImportBusyError(RuntimeError):
    """As many imports as allowed run already (a 429)."""


@dataclass(frozen=True)
class ImportKey:
    """The ``Idempotency-Key`` an import came with, and whose it is (``key_scope``)."""

    scope: str
    key: str


@dataclass(frozen=True)
class Imported:
    """What an import did (``summary``), and what was replayed before it was stored: matches
    whose stored moves were replayed through the rules, and matches replayed with the agents
    from their seeds."""

    summary: ImportSummary
    replayed_moves: int
    replayed_agents: int

    def describe(self) -> str:
        """How many matches were replayed, in words."""
        return (
            f"{self.replayed_agents} replayed with the agents, {self.replayed_moves} replayed "
            "through the rules"
        )


class ImportGate:
    """At most ``limit`` imports at once (the API's ``MAX_CONCURRENT_IMPORTS``): :meth:`slot`
    raises ``ImportBusyError`` beyond."""

    def __init__(self, limit: int) -> None:
        self._free = threading.BoundedSemaphore(limit)

    @contextmanager
    def slot(self) -> Iterator[None]:
        if not self._free.acquire(blocking=False):
            raise ImportBusyError("as many archive imports as allowed are running; retry later")
        try:
            yield
        finally:
            self._free.release()


def import_upload(
    engine: Engine, upload: Path, *, settings: Settings, key: ImportKey | None = None
) -> Imported:
    """Unpack the zip ``upload`` beside itself (``storage.archive.zipped.unpack``), then
    :func:`import_folder`; the unpacked folder is removed after."""
    folder = upload.with_name(f"{upload.stem}-archive")
    try:
        unpack(upload, folder)
        upload.unlink()
        return import_folder(engine, folder, settings=settings, key=key)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def import_folder(
    engine: Engine, folder: Path, *, settings: Settings, key: ImportKey | None = None
) -> Imported:
    """Check the archive folder ``folder`` whole, replay it, and merge it into the database
    with ``key`` (see the module docstring). ``ArchiveError`` (naming the member and field)
    for an archive refused, ``ImportConflictError`` for a batch it may not touch."""
    archive = read_folder(folder, max_matches=MAX_IMPORT_MATCHES)
    plan = planned(archive, settings)
    check_rows(plan, archive)
    moves = replay_moves(plan, archive)
    agents = replay_sample(plan, archive)
    definition = definition_key(plan)
    for attempt in (1, 2):
        stored = get_batch(engine, archive.batch_id)
        playing = stored is not None and stored.status in PLAYING
        _may_touch(engine, archive, stored, key, repeat=playing)
        state = derived_state(plan, archive, stored, folder)
        within = _keep(key, definition, archive.batch_id)
        try:
            summary = import_batch(
                engine, folder, archive=archive, state=state, within=within, frozen=playing
            )
        except IntegrityError:
            # Another import stored the batch (or the key) meanwhile: look again, once.
            if attempt == 2:
                raise
            continue
        except ArchiveError as exc:
            if not playing:
                raise
            raise _playing(archive.batch_id, str(getattr(stored, "status", ""))) from exc
        return Imported(summary, moves, agents)
    raise AssertionError("unreachable")  # pragma: no cover


def _playing(batch_id: str, status: str) -> ImportConflictError:
    return ImportConflictError(
        f"batch {batch_id} is {status} here: an import never touches a batch that may be "
        "playing (only one that adds nothing to it passes); import it once it has finished "
        "or been cancelled",
        member=MANIFEST,
        field="batch.id",
    )


def _keep(key: ImportKey | None, definition: str, batch_id: str) -> Any:
    """What stores the import's key in the import's own transaction (None without a key)."""
    if key is None:
        return None

    def within(conn: Connection, _created: bool) -> None:
        remember_import(
            conn, scope=key.scope, key=key.key, definition=definition, batch_id=batch_id
        )

    return within


def planned(archive: Archive, settings: Settings) -> BatchPlan:
    """The archive's batch as stored (its id kept), once this server has planned it from the
    same request as a submission would be (its games, agents and caps): ``ArchiveError``
    naming ``batch.<field>`` for what the planner refuses or what differs from the plan."""
    from workers.batches import plan_batch

    row = archive.batch
    try:
        stored = BatchPlan(**{name: row[name] for name in BatchBase.model_fields})
    except ValueError as exc:
        raise _manifest_error(f"not a batch's columns ({exc})", "batch") from None
    options: dict[str, Any] = dict(stored.options)
    if stored.time_control is not None:
        options["time_control"] = stored.time_control
    # A variation the planner chose (``default``) is asked for as it was: by asking none.
    variation = stored.variation
    if variation is not None and variation.get("default"):
        variation = None
    try:
        again = plan_batch(
            game=stored.game,
            players=stored.players,
            options=options,
            agents=stored.agents,
            matches=stored.matches,
            seed=stored.seed,
            seat_policy=stored.seat_policy,
            chunk_size=stored.chunk_size or None,
            max_plies=stored.max_plies,
            stop_rule=stored.stop_rule,
            variation=variation,
            settings=settings,
        )
    except OptionError as exc:
        raise _manifest_error(str(exc), f"batch.{exc.field}") from None
    differs = [
        name
        for name in BatchBase.model_fields
        if name not in {"id", "chunk_size"} and _plain(again, name) != _plain(stored, name)
    ]
    if differs:
        raise _manifest_error(
            f"the batch's {', '.join(differs)} differ from what this server plans from its request",
            f"batch.{differs[0]}",
        )
    return stored


def _plain(plan: BatchPlan, name: str) -> Any:
    value = getattr(plan, name)
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def _manifest_error(message: str, field: str) -> ArchiveError:
    return ArchiveError(f"{MANIFEST}: {message}", member=MANIFEST, field=field)


def _may_touch(
    engine: Engine, archive: Archive, stored: Any, key: ImportKey | None, *, repeat: bool = False
) -> None:
    """Refuse an import this key holder may not make of this batch here. ``repeat``: let a
    batch queued or running here through, to be stored only if the archive adds nothing to
    it (``import_batch``'s ``frozen``)."""
    batch_id = archive.batch_id
    if key is not None:
        held = imported_for_key(engine, key.scope, key.key)
        if held is not None and held != batch_id:
            raise ArchiveError(
                f"Idempotency-Key {key.key!r} names batch {held} here, not the archive's "
                f"batch {batch_id}",
                field="Idempotency-Key",
            )
    if stored is None:
        return
    differs = definition_differs(stored.model_dump(), archive)
    if differs:
        raise ArchiveError(
            f"batch {batch_id} is stored here with a different definition "
            f"({', '.join(differs)} differ); not imported",
            member=MANIFEST,
        )
    if stored.status in PLAYING and not repeat:
        raise _playing(batch_id, stored.status)
    scope = key.scope if key is not None else None
    others = key_holders(engine, batch_id) - ({scope} if scope is not None else set())
    if others:
        raise ImportConflictError(
            f"batch {batch_id} was made here by another key holder; not imported",
            member=MANIFEST,
            field="batch.id",
        )


def derived_state(
    plan: BatchPlan, archive: Archive, stored: Any, folder: Path
) -> dict[str, Any] | None:
    """The batch's state columns as its rows say, never as the manifest does.

    All matches covered (by the archive's chunks and, for a batch stored here, the stored
    ones): ``done`` (``failed`` when no match was played). Fewer, under a stop rule that
    decides on the rows (recomputed on them, :func:`_stop_decision`): ``done``, stopped early.
    Fewer otherwise: a new one is ``cancelled`` if its manifest says so (a claim of less,
    which costs nothing), else ``queued``, to be played on. A batch stored here (finished:
    one queued or running is never touched) keeps its state: None.
    """
    row = archive.batch
    ranges = list(zip(archive.chunks["start"], archive.chunks["stop"], strict=True))
    if stored is not None:
        return None
    state: dict[str, Any] = {
        "stopped_early": False,
        "decision": None,
        "error": None,
        "run_start_finished": row["run_start_finished"],
        "run_started_at": row["run_started_at"],
        "started_at": row["started_at"],
        "finished_at": row["finished_at"],
    }
    if not uncovered(sorted(ranges), plan.matches):
        return {**state, **_complete(plan, archive, row)}
    if plan.stop_rule:
        decision = _stop_decision(plan, archive, folder)
        if decision is not None:
            written = sum(b - a for a, b in ranges)
            kept = _kept_decision(row["decision"], decision, written)
            return {**state, "status": BatchStatus.DONE, "stopped_early": True, "decision": kept}
    if row["status"] == BatchStatus.CANCELLED:
        return {**state, "status": BatchStatus.CANCELLED}
    return {**state, "status": BatchStatus.QUEUED, "finished_at": None}


def _complete(plan: BatchPlan, archive: Archive, row: dict[str, Any]) -> dict[str, Any]:
    m = archive.matches
    if any(m["ok"]):
        decision = _kept_decision(row["decision"], None, plan.matches) if plan.stop_rule else None
        return {"status": BatchStatus.DONE, "decision": decision}
    first = next((e for e in m["error"] if e), None) or "every match failed"
    return {"status": BatchStatus.FAILED, "error": first}


def _kept_decision(
    claimed: Any, recomputed: dict[str, Any] | None, written: int
) -> dict[str, Any] | None:
    """The manifest's decision when the recomputed one agrees on its rule and result and it
    was taken on at most the ``written`` matches (its figures are then the ones the batch
    stopped on, kept so that a re-export gives the same bytes), else the recomputed one.
    Without a recomputation (a complete batch), the claimed one when it has a decision's
    shape, else none."""
    shaped = (
        isinstance(claimed, dict)
        and isinstance(claimed.get("verdict"), str)
        and isinstance(claimed.get("decided_at_matches"), int)
        and 0 < claimed["decided_at_matches"] <= written
    )
    if recomputed is None:
        return dict(claimed) if shaped else None
    if (
        shaped
        and claimed.get("type", "sprt") == recomputed.get("type", "sprt")
        and claimed.get("result") == recomputed.get("result")
    ):
        return dict(claimed)
    return recomputed


def _stop_decision(plan: BatchPlan, archive: Archive, folder: Path) -> dict[str, Any] | None:
    """The stop rule's decision on the archive's rows alone, as the workers would take it after
    a chunk: the rows stored in a throwaway database and the rule checked there."""
    from analysis.stop_rule import check_stop_rule

    work = Path(tempfile.mkdtemp(prefix="playtester-stop-"))
    url = f"sqlite:///{work}/stop.db"
    try:
        upgrade(url)
        engine = get_engine(url)
        running = {"status": BatchStatus.RUNNING, "stopped_early": False, "decision": None}
        import_batch(engine, folder, archive=archive, state=running)
        batch = get_batch(engine, archive.batch_id)
        assert batch is not None
        decision = check_stop_rule(engine, batch)
        return None if decision is None else dict(decision)
    finally:
        dispose_engine(url)
        shutil.rmtree(work, ignore_errors=True)
