"""Dashboard pages: the batch list, a batch with its report and matches, and the comparison;
plus the small JSON the pages poll for live progress.

Every page is complete without JavaScript; scripts only keep progress live and send writes
with the key kept in the browser's session storage.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse
from sqlalchemy import Engine

from analysis.compare import compare
from analysis.render_html import render_sections
from analysis.report import build_report
from api.auth import require_read
from api.deps import EngineDep
from api.schemas import BATCH_ID_PATTERN, GAME_NAME_PATTERN, BatchId
from api.web.errors import error_page
from api.web.summaries import batch_rows
from api.web.templating import page
from engines.core import Ending, OptionError
from engines.registry import game_names
from storage.crud import NotFound, find_batch, get_batch, list_batches, resolve_batch_id
from storage.models import Batch, BatchStatus
from storage.queries import (
    count_batches,
    list_matches_page,
    match_endings,
)
from storage.soundness import check_rows
from workers.roster import roster_client, waiting_note

router = APIRouter(include_in_schema=False, dependencies=[Depends(require_read)])

BATCHES_PER_PAGE = 50
MATCHES_PER_PAGE = 50


def not_found(request: Request, message: str) -> HTMLResponse:
    return error_page(request, 404, message, None)


def _pages(total: int, size: int) -> int:
    return max(1, math.ceil(total / size))


@router.get("/", response_class=HTMLResponse)
def batches_page(
    request: Request,
    engine: EngineDep,
    game: Annotated[str | None, Query(pattern=f"{GAME_NAME_PATTERN}|^$", max_length=40)] = None,
    status: Annotated[BatchStatus | Literal[""] | None, Query()] = None,
    page_no: Annotated[int, Query(alias="page", ge=1, le=10**9)] = 1,
) -> HTMLResponse:
    """Every batch, newest first, filtered by game and status, one page at a time."""
    game = game or None
    status_ = status or None
    total = count_batches(engine, game=game, status=status_)
    found = list_batches(
        engine,
        game=game,
        status=status_,
        limit=BATCHES_PER_PAGE,
        offset=(page_no - 1) * BATCHES_PER_PAGE,
    )
    return page(
        request,
        "batches.html",
        {
            "title": "Batches",
            "rows": batch_rows(engine, found),
            "games": game_names(),
            "game": game or "",
            "status": status_ or "",
            "page": page_no,
            "pages": _pages(total, BATCHES_PER_PAGE),
            "total": total,
        },
    )


@router.get("/ui/live")
def live(
    engine: EngineDep,
    ids: Annotated[str, Query(max_length=50 * 33, pattern=r"^[0-9a-f,]*$")] = "",
) -> JSONResponse:
    """The rows of the batches ``ids`` (comma-separated full ids), for the pages' polling."""
    wanted = [i for i in ids.split(",") if i][:BATCHES_PER_PAGE]
    batches = [b for b in (get_batch(engine, i) for i in wanted) if b is not None]
    return JSONResponse({"items": batch_rows(engine, batches)})


@lru_cache(maxsize=32)
def _cached_report(url: str, batch_id: str, status: str, finished: int) -> str:
    from storage.db import get_engine

    return render_sections(build_report(get_engine(url), batch_id))


def _report_html(engine: Engine, batch: Batch, finished: int) -> str:
    """The report's sections; kept while the batch's status and finished count stand still,
    so paging through its matches does not rebuild it."""
    url = engine.url.render_as_string(hide_password=False)
    return _cached_report(url, batch.id, str(batch.status), finished)


@router.get("/ui/batches/{batch_id}", response_class=HTMLResponse)
def batch_page(
    batch_id: BatchId,
    request: Request,
    engine: EngineDep,
    sort: Annotated[Literal["index", "plies", "points"], Query()] = "index",
    order: Annotated[Literal["asc", "desc"], Query()] = "asc",
    ended: Annotated[Ending | Literal[""] | None, Query()] = None,
    page_no: Annotated[int, Query(alias="page", ge=1, le=10**9)] = 1,
) -> HTMLResponse:
    """A batch: progress, report (once any match is stored), exports and its matches."""
    try:
        batch = find_batch(engine, batch_id)
    except NotFound as exc:
        return not_found(request, str(exc))
    check_rows(engine, batch)  # a stored row no match can produce: 409 naming it
    row = batch_rows(engine, [batch])[0]
    ended = ended or None
    failed = ended == Ending.FAILED
    matches, total = list_matches_page(
        engine,
        batch.id,
        sort=sort,
        descending=order == "desc",
        ended_by=None if failed else ended,
        failed=failed,
        limit=MATCHES_PER_PAGE,
        offset=(page_no - 1) * MATCHES_PER_PAGE,
    )
    report = _report_html(engine, batch, row["finished"]) if row["finished"] else ""
    return page(
        request,
        "batch.html",
        {
            "title": f"Batch {batch.id}",
            "batch": batch,
            "row": row,
            "waiting": waiting_note(
                batch.game, batch.status, roster_client(request.app.state.settings)
            ),
            "report": report,
            "matches": [_match_view(m.match, m.seats) for m in matches],
            "endings": match_endings(engine, batch.id, failed_as=Ending.FAILED),
            "sort": sort,
            "order": order,
            "ended": ended or "",
            "page": page_no,
            "pages": _pages(total, MATCHES_PER_PAGE),
            "total": total,
        },
    )


def _match_view(match: dict[str, Any], seats: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "index": match["match_index"],
        "ok": match["ok"],
        "plies": match["plies"],
        "ended_by": match["ended_by"] if match["ok"] else Ending.FAILED,
        "seats": seats,
        "error": match["error"],
    }


@router.get("/ui/compare", response_class=HTMLResponse)
def compare_page(
    request: Request,
    engine: EngineDep,
    a: Annotated[str, Query(max_length=32)] = "",
    b: Annotated[str, Query(max_length=32)] = "",
) -> HTMLResponse:
    """Two batches side by side: first-player advantage and each seat's win share, with the
    difference a − b and its interval."""
    result: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    if a or b:
        try:
            ids = []
            for field, value in (("a", a), ("b", b)):
                if not value:
                    raise OptionError("give the id (or a unique prefix) of a batch", field=field)
                if not _is_id(value):
                    raise OptionError(
                        f"{value!r} is not a batch id: lower-case hexadecimal digits",
                        field=field,
                    )
                try:
                    ids.append(resolve_batch_id(engine, value))
                except NotFound as exc:
                    raise OptionError(str(exc), field=field) from exc
            result = compare(engine, ids[0], ids[1])
        except OptionError as exc:
            error = {"message": str(exc), "field": exc.field}
    recent = list_batches(engine, limit=BATCHES_PER_PAGE)
    return page(
        request,
        "compare.html",
        {
            "title": "Compare batches",
            "a": a,
            "b": b,
            "result": result,
            "error": error,
            "recent": recent,
        },
        422 if error else 200,
    )


def _is_id(value: str) -> bool:
    return re.fullmatch(BATCH_ID_PATTERN, value) is not None
