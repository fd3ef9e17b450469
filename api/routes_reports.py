"""Report routes of the HTTP API: a batch's report as JSON, CSV or HTML, and batch comparison.

Routes are plain functions (run in the thread pool) because a report over millions of matches is
CPU work. Errors are JSON on every route, the CSV and HTML reports' too, and their schema says
so (``JSON_ERRORS``). Batch ids (or unique prefixes) are resolved here; unknown batches raise
``storage.crud.NotFound``, which the app answers with 404.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import HTMLResponse, PlainTextResponse

from analysis.compare import compare
from analysis.render_html import render_html
from analysis.report import build_report, to_csv
from api.auth import require_read
from api.deps import EngineDep
from api.schemas import BATCH_ID_PATTERN, ERRORS, JSON_ERRORS, BatchId
from storage.crud import resolve_batch_id

router = APIRouter(tags=["reports"], dependencies=[Depends(require_read)], responses=ERRORS)


class CsvResponse(PlainTextResponse):
    """CSV text: the media type the schema states for the answer."""

    media_type = "text/csv"


@router.get("/batches/{batch_id}/report", summary="A batch's report (JSON)")
def report_json(
    batch_id: BatchId,
    engine: EngineDep,
    compensation: Annotated[
        bool,
        Query(
            description="Compute the fair compensation (komi); false leaves "
            "`fair_compensation` null and skips its bootstrap, most of a points game's report"
        ),
    ] = True,
) -> dict[str, Any]:
    """Seats, first-player advantage, agents, pairings, shape, komi, game section and SPRT."""
    return build_report(engine, resolve_batch_id(engine, batch_id), compensation=compensation)


@router.get(
    "/batches/{batch_id}/report.csv",
    response_class=CsvResponse,
    summary="A batch's report (long CSV: section,item,value)",
    responses=JSON_ERRORS,
)
def report_csv(batch_id: BatchId, engine: EngineDep) -> CsvResponse:
    """The report as CSV, one figure a line."""
    report = build_report(engine, resolve_batch_id(engine, batch_id))
    return CsvResponse(
        to_csv(report),
        media_type="text/csv; charset=utf-8",
        headers={
            "Content-Disposition": f'attachment; filename="report-{report["batch"]["id"]}.csv"'
        },
    )


@router.get(
    "/batches/{batch_id}/report.html",
    response_class=HTMLResponse,
    summary="A batch's report as a self-contained HTML page",
    responses=JSON_ERRORS,
)
def report_html(batch_id: BatchId, engine: EngineDep) -> HTMLResponse:
    """Tables and inline SVG figures; viewing it needs no network."""
    return HTMLResponse(render_html(build_report(engine, resolve_batch_id(engine, batch_id))))


@router.get("/compare", summary="Compare two batches (differences a − b)")
def compare_batches(
    a: Annotated[
        str,
        Query(pattern=BATCH_ID_PATTERN, max_length=32, description="First batch id (or prefix)"),
    ],
    b: Annotated[
        str,
        Query(pattern=BATCH_ID_PATTERN, max_length=32, description="Second batch id (or prefix)"),
    ],
    engine: EngineDep,
) -> dict[str, Any]:
    """First-player advantage and per-seat win-share differences with intervals and p-values."""
    return compare(engine, resolve_batch_id(engine, a), resolve_batch_id(engine, b))
