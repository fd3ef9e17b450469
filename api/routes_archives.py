"""Batches as archives over HTTP: ``GET /batches/{id}/archive`` downloads a stored batch as the
zip of the folder ``playtester export`` writes, ``POST /batches/import`` merges such a zip in as
``playtester import`` does. ``playtester study run --service`` keeps a study's results with
them and gives a server the results it lacks.

Neither holds an archive in memory as bytes: the download is exported and zipped in a temporary
folder and streamed from disk; an upload is written to disk as it arrives (at most
``api.middleware.MAX_ARCHIVE_BYTES``, its length declared) and unpacked there under the checks
of ``storage.archive.zipped``, then imported by ``workers.imports``, as the command line
imports a folder.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Annotated

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
from storage.archive import MANIFEST, ArchiveError, export_batch
from storage.archive.zipped import member_of, pack
from storage.crud import find_batch
from storage.models import BatchStatus
from storage.settings import Settings
from storage.submissions import key_scope, request_start
from workers.dispatchers import Dispatcher
from workers.imports import (
    RETRY_AFTER_SECONDS,
    ImportBusyError,
    ImportConflictError,
    ImportGate,
    ImportKey,
    import_upload,
)

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
    replayed: int
    """Matches replayed with the agents from their seeds before the import was accepted."""
    replayed_moves: int
    """Matches whose stored moves were replayed through the rules (every played one, when
    the archive holds moves)."""
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
        409: {"model": ErrorOut, "description": "The batch is queued or running here."},
        429: {"model": ErrorOut, "description": "Too many imports at once; see Retry-After."},
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
    database as ``playtester import`` does (``workers.imports``): every row is checked
    against the batch this server plans from it, its matches replayed (``replayed``: how
    many, with the agents and through the rules), its state derived from its rows. A batch
    queued or running here, or made by another key holder, is refused (409). With an
    ``Idempotency-Key``, ``GET /batches?key=`` finds the batch; a ``POST /batches`` with that
    key still plays its own. A batch new here and unfinished is started. A refused upload
    stores nothing; the 422 names the archive's file and field at fault. At most
    ``MAX_CONCURRENT_IMPORTS`` imports run at once: one more is answered 429 with
    ``Retry-After``."""
    limit = middleware.ROUTE_LIMITS.get(IMPORT_PATH, middleware.MAX_BODY_BYTES)
    gate = getattr(request.app.state, "import_gate", None)
    if gate is None:  # one per app, made by its first import (no await in between)
        gate = request.app.state.import_gate = ImportGate(settings.max_concurrent_imports)
    try:
        with gate.slot(), tempfile.TemporaryDirectory(prefix="playtester-import-") as work:
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
    except ImportBusyError as exc:
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        return error_response(429, str(exc), "body", headers=headers)


def _refused(exc: ArchiveError, folder: Path) -> JSONResponse:
    message, member = member_of(str(exc), folder)
    member = exc.member or member
    field = exc.field if exc.field == "Idempotency-Key" else None
    if field is None:
        field = member if exc.field is None else f"{member or MANIFEST}: {exc.field}"
    code = 409 if isinstance(exc, ImportConflictError) else 422
    return error_response(code, message, field or "body")


def _import(
    request: Request,
    engine: Engine,
    settings: Settings,
    dispatcher: Dispatcher,
    upload: Path,
    key: str | None,
) -> ArchiveImported | JSONResponse:
    keyed = None if key is None else ImportKey(scope=key_scope(settings.api_key), key=key)
    try:
        done = import_upload(engine, upload, settings=settings, key=keyed)
    except ArchiveError as exc:
        return _refused(exc, upload.with_name(f"{upload.stem}-archive"))
    summary = done.summary
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
        replayed=done.replayed_agents,
        replayed_moves=done.replayed_moves,
        links={"self": f"{base}/batches/{summary.batch_id}"},
    )
    code = status.HTTP_201_CREATED if summary.created else status.HTTP_200_OK
    return JSONResponse(answer.model_dump(mode="json"), status_code=code)
