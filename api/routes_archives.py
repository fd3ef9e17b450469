"""Batches as archives over HTTP: ``GET /batches/{id}/archive`` downloads a stored batch as the
zip of the folder ``playtester export`` writes, ``POST /batches/import`` merges such a zip in as
``playtester import`` does. ``playtester study run --service`` keeps a study's results with
them and gives a server the results it lacks.

Neither holds an archive in memory as bytes: the download is exported and zipped in a temporary
folder and streamed from disk; an upload is written to disk as it arrives (at most
``api.middleware.MAX_ARCHIVE_BYTES``, its length declared) and unpacked there under the checks
of ``storage.archive.zipped``. The export and the import read the batch's rows in memory, as the
command line's do.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, JSONResponse
from pydantic import BaseModel
from sqlalchemy import Engine
from starlette.background import BackgroundTask

from api import middleware
from api.auth import require_read, require_write
from api.deps import DispatcherDep, EngineDep, SettingsDep
from api.errors import error_response
from api.routes_batches import IdempotencyKeyHeader
from api.schemas import ERRORS, BatchId, ErrorOut
from engines.core import OptionError
from storage.archive import MANIFEST, Archive, ArchiveError, export_batch, import_batch
from storage.archive import read_archive as read_folder
from storage.archive.zipped import check_decoded, member_of, pack, unpack
from storage.crud import find_batch
from storage.models import BatchBase, BatchPlan, BatchStatus
from storage.settings import Settings
from storage.submissions import (
    Idempotency,
    batch_for_key,
    key_scope,
    remember_submission,
    request_start,
)
from workers.dispatchers import Dispatcher
from workers.studies.plan import definition_key

router = APIRouter(prefix="/batches", tags=["archives"], responses=ERRORS)

IMPORT_PATH = "/batches/import"


class ArchiveImported(BaseModel):
    """What an import did: ``created`` when the batch was new here; the chunk rows added and
    those skipped (stored already, or overlapping stored ones); the matches added; stored
    matches without moves that got them; the batch's status after it."""

    id: str
    created: bool
    chunks_added: int
    chunks_skipped: int
    matches_added: int
    moves_filled: int
    status: str
    links: dict[str, str]


@router.get(
    "/{batch_id}/archive",
    dependencies=[Depends(require_read)],
    summary="Download a batch as an archive (zip)",
    response_class=FileResponse,
    responses={200: {"content": {"application/zip": {}}}},
)
def download_archive(
    batch_id: BatchId,
    engine: EngineDep,
    moves: Annotated[bool, Query(description="Keep each match's moves.")] = True,
) -> FileResponse:
    """The folder ``playtester export`` writes (``batch.json`` and three Parquet tables) as
    one zip, finished batch or not: ``POST /batches/import`` or ``playtester import`` (once
    unzipped) takes it elsewhere."""
    full = find_batch(engine, batch_id).id
    work = Path(tempfile.mkdtemp(prefix="playtester-archive-"))
    try:
        folder = work / full
        export_batch(engine, full, folder, moves=moves)
        target = work / f"{full}.zip"
        with target.open("wb") as sink:
            pack(folder, sink)
        shutil.rmtree(folder)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return FileResponse(
        target,
        media_type="application/zip",
        filename=f"{full}.zip",
        background=BackgroundTask(shutil.rmtree, work, ignore_errors=True),
    )


@router.post(
    "/import",
    dependencies=[Depends(require_write)],
    response_model=ArchiveImported,
    summary="Import a batch archive (zip)",
    status_code=status.HTTP_200_OK,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
    responses={
        201: {"model": ArchiveImported, "description": "The batch was new here."},
        411: {"model": ErrorOut, "description": "No Content-Length."},
        413: {"model": ErrorOut, "description": "Larger than MAX_ARCHIVE_BYTES."},
    },
)
async def import_archive(
    request: Request,
    engine: EngineDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    idempotency_key: IdempotencyKeyHeader = None,
) -> ArchiveImported | JSONResponse:
    """Merge a batch archive (``GET /batches/{id}/archive``'s zip) into this server's
    database as ``playtester import`` does: what it lacks is added, a batch stored here with
    another definition is refused. With an ``Idempotency-Key``, a later ``POST /batches``
    with that key and a body planning the same batch answers with this one (how a study's
    results reach a server). A batch new here and unfinished is started: its missing matches
    are played. A refused upload stores nothing; the 422 names the archive's file at fault."""
    limit = middleware.ROUTE_LIMITS.get(IMPORT_PATH, middleware.MAX_BODY_BYTES)
    with tempfile.TemporaryDirectory(prefix="playtester-import-") as work:
        upload = Path(work) / "upload.zip"
        size = 0
        with upload.open("wb") as sink:
            async for piece in request.stream():
                size += len(piece)
                if size > limit:
                    return error_response(
                        413,
                        f"request body is larger than {limit} bytes; send a smaller one",
                        "body",
                    )
                sink.write(piece)
        return await run_in_threadpool(
            _import, request, engine, settings, dispatcher, upload, idempotency_key
        )


def _refused(exc: Exception, folder: Path, fallback: str) -> JSONResponse:
    message, member = member_of(str(exc), folder)
    return error_response(422, message, member or fallback)


def _import(
    request: Request,
    engine: Engine,
    settings: Settings,
    dispatcher: Dispatcher,
    upload: Path,
    key: str | None,
) -> ArchiveImported | JSONResponse:
    folder = upload.with_name("archive")
    try:
        unpack(upload, folder)
        check_decoded(folder)
        archive = read_folder(folder)
    except ArchiveError as exc:
        return _refused(exc, folder, "body")
    upload.unlink()
    try:
        definition = _definition(archive, settings)
    except OptionError as exc:
        return error_response(422, f"{MANIFEST}: {exc}", f"{MANIFEST}: batch.{exc.field}")
    keyed = None
    if key is not None:
        keyed = Idempotency(scope=key_scope(settings.api_key), key=key, fingerprint=definition)
        held = batch_for_key(engine, keyed.scope, key)
        if held is not None and held.id != archive.batch_id:
            return error_response(
                422,
                f"Idempotency-Key {key!r} names batch {held.id} here, not the archive's batch "
                f"{archive.batch_id}",
                "Idempotency-Key",
            )
    try:
        summary = import_batch(engine, folder, archive=archive)
    except ArchiveError as exc:
        return _refused(exc, folder, MANIFEST)
    if keyed is not None:
        remember_submission(engine, keyed, summary.batch_id)
    if summary.created and summary.status not in BatchStatus.FINISHED:
        request_start(engine, summary.batch_id)
        dispatcher.start(find_batch(engine, summary.batch_id))
    base = f"{request.app.state.settings.public_url or request.scope.get('root_path', '')}"
    answer = ArchiveImported(
        id=summary.batch_id,
        created=summary.created,
        chunks_added=summary.chunks_added,
        chunks_skipped=summary.chunks_skipped,
        matches_added=summary.matches_added,
        moves_filled=summary.moves_filled,
        status=summary.status,
        links={"self": f"{base}/batches/{summary.batch_id}"},
    )
    code = status.HTTP_201_CREATED if summary.created else status.HTTP_200_OK
    return JSONResponse(answer.model_dump(mode="json"), status_code=code)


def _definition(archive: Archive, settings: Settings) -> str:
    """The archive's batch's definition digest, once this server has planned the batch from it
    as it would a submission (its games, agents and caps): ``OptionError`` naming the field
    it refuses, or the field where the archive's batch differs from the plan."""
    from workers.batches import plan_batch

    row = archive.batch
    try:
        stored = BatchPlan(**{name: row[name] for name in BatchBase.model_fields})
    except ValueError as exc:
        raise OptionError(f"not a batch's columns ({exc})", field="definition") from None
    options: dict[str, Any] = dict(stored.options)
    if stored.time_control is not None:
        options["time_control"] = stored.time_control
    # A variation the planner chose (``default``) is asked for as it was: by asking none.
    variation = stored.variation
    if variation is not None and variation.get("default"):
        variation = None
    planned = plan_batch(
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
    differs = [
        name
        for name in BatchBase.model_fields
        if name not in {"id", "chunk_size"} and getattr(planned, name) != getattr(stored, name)
    ]
    if differs:
        raise OptionError(
            f"the batch's {', '.join(differs)} differ from what this server plans from its request",
            field=differs[0],
        )
    return definition_key(stored)
