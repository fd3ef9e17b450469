"""Batch routes: submit, list, read, cancel, delete, browse matches, export results."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import (
    APIRouter,
    Depends,
    Header,
    Path,
    Query,
    Request,
    Response,
    status,
)
from fastapi.responses import JSONResponse, StreamingResponse
from sqlalchemy import Engine
from starlette.convertors import PathConvertor, register_url_convertor

from api import exports
from api.auth import require_read, require_write
from api.deps import DispatcherDep, EngineDep, SettingsDep
from api.schemas import (
    ERRORS,
    GAME_NAME_PATTERN,
    MAX_INT32,
    BatchCreate,
    BatchId,
    BatchList,
    BatchPublic,
    ErrorOut,
    MatchDetail,
    MatchList,
    MatchPublic,
    ProgressPublic,
    SeatPublic,
    UnreadableBatch,
)
from engines.errors import OptionError, UnknownGameError
from storage import submissions
from storage.crud import cancel_batch, delete_batch, find_batch, list_batches, progress
from storage.models import Batch, BatchPlan, BatchStatus, definition_key
from storage.queries import StoredMatch, find_match, list_matches
from storage.records import split_moves
from storage.settings import Settings
from storage.soundness import batch_problem, check_rows
from storage.submissions import Idempotency, IdempotencyConflictError, fingerprint, key_scope
from workers.roster import package_on_workers, roster_client, waiting_note

router = APIRouter(prefix="/batches", tags=["batches"], responses=ERRORS)

Limit = Annotated[int, Query(ge=1, le=1000, description="Page size.")]
Offset = Annotated[int, Query(ge=0, le=10**12, description="Items to skip.")]
MAX_IDEMPOTENCY_KEY = 255
IDEMPOTENCY_KEY_PATTERN = r"^[\x21-\x7e]+$"
"""Printable ASCII without spaces: what a key may be, in the header that stores it and in the
query that looks for it."""


def links(request: Request, batch_id: str) -> dict[str, str]:
    """Where to go from a batch: itself, its matches, report, export and cancel URLs.

    They start with the configured ``PUBLIC_URL``, else they are relative to this server
    (its configured root path): never built from the client's ``Host`` or forwarded headers,
    which anyone can set.
    """
    root = request.app.state.settings.public_url or request.scope.get("root_path", "")
    base = f"{root}/batches/{batch_id}"
    return {
        "self": base,
        "matches": base + "/matches",
        "report": base + "/report",
        "export": base + "/export?format=csv",
        "cancel": base + "/cancel",
    }


def to_public(
    request: Request,
    batch: Batch,
    engine: Engine | None = None,
    *,
    with_progress: bool = True,
    waiting: str | None = None,
) -> BatchPublic:
    """The API view of a batch, with its progress when ``engine`` is given and why it
    waits when no worker can play it (``waiting``)."""
    prog: ProgressPublic | None = None
    if with_progress and engine is not None:
        p = progress(engine, batch.id)
        prog = ProgressPublic(
            done=p.done,
            failed=p.failed,
            finished=p.done + p.failed,
            chunks_written=p.chunks_written,
            chunks_total=p.chunks_total,
            rate=p.rate,
            eta_seconds=p.eta_seconds,
        )
    data = batch.model_dump()
    return BatchPublic(**data, progress=prog, waiting=waiting, links=links(request, batch.id))


IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=MAX_IDEMPOTENCY_KEY,
        pattern=IDEMPOTENCY_KEY_PATTERN,
        description="Any unique text (a UUID): a retried submission with the same key and "
        "body returns the first one's batch instead of making another.",
    ),
]


BUSY = {
    "model": ErrorOut,
    "description": "An OpenSpiel game, and as many checks of one running and waiting as the "
    "server takes (NATIVE_CHECKS_AT_ONCE, NATIVE_CHECKS_WAITING); see Retry-After.",
}


def plan_request(body: BatchCreate, settings: Settings) -> BatchPlan:
    """The batch ``body`` asks for, validated with this server's limits: what a submission
    stores and what a check answers."""
    from workers.batches import plan_batch

    try:
        return plan_batch(body, settings=settings)
    except UnknownGameError as exc:
        # Not installed here, yet a worker may have it: then the package to install is known.
        package = package_on_workers(body.game, roster_client(settings))
        if package is None:
            raise
        raise OptionError(
            f"{exc}; a running worker has {body.game!r} from the package {package}: install "
            f"{package} on this server too",
            field="game",
        ) from exc


@router.post(
    "/check",
    dependencies=[Depends(require_write)],
    summary="Check a batch without storing it",
    responses={
        200: {"description": "The batch as it would be stored (no id): nothing was."},
        429: BUSY,
    },
)
def check_batch(body: BatchCreate, settings: SettingsDep) -> dict[str, Any]:
    """Validate a batch exactly as a submission would, with this server's limits, and store
    nothing: 200 with the plan (every agent parameter filled in), or the 422 naming the
    field that a submission would get. A client sending several batches checks them all
    first, so a refusal never leaves some of them made."""
    return plan_request(body, settings).model_dump(mode="json", exclude={"id"})


@router.post(
    "",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=BatchPublic,
    dependencies=[Depends(require_write)],
    summary="Submit a batch of matches",
    responses={
        200: {"model": BatchPublic, "description": "Same Idempotency-Key and body as before."},
        422: {"model": ErrorOut, "description": "Invalid input, or a key reused for another body."},
        429: BUSY,
    },
)
def submit_batch(
    body: BatchCreate,
    request: Request,
    response: Response,
    engine: EngineDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    idempotency_key: IdempotencyKeyHeader = None,
) -> BatchPublic | JSONResponse:
    """Validate, then store the batch and its start request in one transaction, then hand it
    to the workers (202). If the broker is down the answer is the same: the sweeper starts the
    batch when the broker is back. An ``Idempotency-Key`` seen before answers with its batch
    when the body is the same, or plans the same batch as an archive imported with that key.

    The work done here does not depend on the number of matches: no row and no task is
    created per match; chunks are queued progressively by the workers.
    """
    plan = plan_request(body, settings)
    keyed = None
    if idempotency_key is not None:
        keyed = Idempotency(
            scope=key_scope(settings.api_key),
            key=idempotency_key,
            fingerprint=fingerprint(body.model_dump(mode="json")),
            definition=definition_key(plan),
        )
    try:
        stored = submissions.submit_batch(engine, plan=plan, idempotency=keyed)
    except IdempotencyConflictError as exc:
        return JSONResponse(
            {"message": str(exc), "field": "Idempotency-Key"},
            status_code=422,
        )
    if stored.created:
        dispatcher.start(stored.batch)
    else:
        response.status_code = status.HTTP_200_OK
        response.headers["Idempotent-Replayed"] = "true"
    return to_public(request, stored.batch, with_progress=False)


@router.get(
    "", response_model=BatchList, dependencies=[Depends(require_read)], summary="List batches"
)
def read_batches(
    engine: EngineDep,
    request: Request,
    settings: SettingsDep,
    game: Annotated[str | None, Query(pattern=GAME_NAME_PATTERN, max_length=40)] = None,
    status_: Annotated[BatchStatus | None, Query(alias="status")] = None,
    limit: Limit = 50,
    offset: Offset = 0,
    key: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=MAX_IDEMPOTENCY_KEY,
            pattern=IDEMPOTENCY_KEY_PATTERN,
            description="Only the batch made by a submission with this Idempotency-Key.",
        ),
    ] = None,
) -> BatchList:
    """Batches, newest first, optionally of one game or in one status, or the one batch a
    submission's ``Idempotency-Key`` made (how a study finds its batches again). A stored
    batch whose row cannot be shown is listed apart under ``unreadable``, with the problem."""
    if key is not None:
        keyed = submissions.batch_for_key(engine, key_scope(settings.api_key), key)
        found = [] if keyed is None else [keyed]
    else:
        found = list_batches(engine, game=game, status=status_, limit=limit, offset=offset)
    items, unreadable = [], []
    for batch in found:
        problem = batch_problem(batch)
        if problem is None:
            items.append(to_public(request, batch, with_progress=False))
        else:
            unreadable.append(UnreadableBatch(id=batch.id, problem=problem))
    return BatchList(items=items, limit=limit, offset=offset, unreadable=unreadable)


@router.get(
    "/{batch_id}",
    response_model=BatchPublic,
    dependencies=[Depends(require_read)],
    summary="A batch with its progress",
)
def read_batch(
    batch_id: BatchId, request: Request, engine: EngineDep, settings: SettingsDep
) -> BatchPublic:
    """Status, done/failed counts, rate and ETA of the current run, and ``waiting`` when no
    running worker can play it (e.g. none has its game). Reading changes nothing."""
    batch = find_batch(engine, batch_id)
    note = waiting_note(batch.game, batch.status, roster_client(settings))
    return to_public(request, batch, engine, waiting=note)


@router.post(
    "/{batch_id}/cancel",
    response_model=BatchPublic,
    dependencies=[Depends(require_write)],
    summary="Cancel a batch",
)
def cancel(batch_id: BatchId, request: Request, engine: EngineDep) -> BatchPublic:
    """No chunk starts after this; chunks already running finish and are kept."""
    full = find_batch(engine, batch_id).id
    return to_public(request, cancel_batch(engine, full), engine)


class StoredIdConvertor(PathConvertor):
    """A path parameter that is any stored batch id, slashes included once decoded (an older
    import stored ``../../x``), and never empty: ``/batches/`` stays the listing's redirect."""

    regex = ".+"


register_url_convertor("stored_id", StoredIdConvertor())


@router.delete(
    "/{batch_id:stored_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    dependencies=[Depends(require_write)],
    summary="Delete a finished or cancelled batch",
    responses={409: {"model": ErrorOut, "description": "The batch is queued or running."}},
)
def remove_batch(
    batch_id: Annotated[
        str,
        Path(
            min_length=1,
            max_length=255,
            description="The batch's full id, percent-encoded (no prefix: nothing is deleted "
            "on a guess). Any stored id is taken, also one an older import stored that is no "
            "batch id, e.g. ../../x as ..%2F..%2Fx.",
        ),
    ],
    engine: EngineDep,
) -> Response:
    """The batch and every row it owns (chunks, matches, seats, outbox, idempotency keys), in
    one transaction: 204. A queued or running batch is refused (409): cancel it first."""
    delete_batch(engine, batch_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _match_fields(stored: StoredMatch) -> dict[str, Any]:
    row, seats = stored
    seat_models = [
        SeatPublic(
            seat=s["seat"],
            agent=s["agent"],
            agent_index=s["agent_index"],
            points=s["points"],
            win_share=s["win_share"],
            rank=s["rank"],
            move_ms=s.get("move_ms"),
        )
        for s in seats
    ]
    return {
        "index": row["match_index"],
        "seed": row["seed"],
        "ok": row["ok"],
        "plies": row["plies"],
        "ended_by": row["ended_by"],
        "duration": row["duration"],
        "error": row["error"],
        "agents": [s.agent for s in seat_models],
        "returns": [s.win_share for s in seat_models],
        "scores": [s.points for s in seat_models],
        "seats": seat_models,
    }


@router.get(
    "/{batch_id}/matches",
    response_model=MatchList,
    dependencies=[Depends(require_read)],
    summary="Stored matches of a batch",
)
def read_matches(
    batch_id: BatchId, engine: EngineDep, limit: Limit = 100, offset: Offset = 0
) -> MatchList:
    """Matches in index order with seats, agents, returns, scores, plies and how they ended."""
    batch = find_batch(engine, batch_id)
    found = list_matches(engine, batch.id, limit=limit, offset=offset)
    if found:
        first, last = found[0].match["match_index"], found[-1].match["match_index"]
        check_rows(engine, batch, start=first, stop=last + 1)
    items = [MatchPublic(**_match_fields(stored)) for stored in found]
    return MatchList(items=items, limit=limit, offset=offset)


@router.get(
    "/{batch_id}/matches/{index}",
    response_model=MatchDetail,
    dependencies=[Depends(require_read)],
    summary="One match with its moves",
)
def read_match(
    batch_id: BatchId,
    index: Annotated[int, Path(ge=0, le=MAX_INT32, description="Match index, from 0.")],
    engine: EngineDep,
) -> MatchDetail:
    """One match with its full move list: replaying the moves gives the same game."""
    batch = find_batch(engine, batch_id)
    stored = find_match(engine, batch.id, index)
    check_rows(engine, batch, start=index, stop=index + 1)
    row = stored.match
    moves = split_moves(row["moves"])
    return MatchDetail(**_match_fields(stored), moves=moves, stats=row["stats"] or {})


@router.get(
    "/{batch_id}/export",
    dependencies=[Depends(require_read)],
    summary="Download every seat result (CSV or Parquet), streamed",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/csv": {}, "application/vnd.apache.parquet": {}}}},
)
def export(
    batch_id: BatchId,
    engine: EngineDep,
    format: Annotated[Literal["csv", "parquet"], Query()] = "csv",
) -> StreamingResponse:
    """One row per seat of every stored match, streamed in slices of matches."""
    full = check_rows(engine, find_batch(engine, batch_id)).id
    if format == "csv":
        body = exports.csv_stream(engine, full)
        media = "text/csv"
    else:
        body = exports.parquet_stream(engine, full)
        media = "application/vnd.apache.parquet"
    headers = {"Content-Disposition": f'attachment; filename="{full}.{format}"'}
    return StreamingResponse(body, media_type=media, headers=headers)
