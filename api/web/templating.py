"""The dashboard's Jinja2 templates and the filters they format numbers with.

Numbers are formatted by ``analysis.formatting``, the report's own formatter, so the pages
and the report never disagree on a figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates
from starlette.responses import HTMLResponse

from analysis.formatting import num, p_value, pct, span
from engines.seating import SeatPolicy
from storage.models import BatchStatus

HERE = Path(__file__).resolve().parent
TEMPLATES = Jinja2Templates(directory=HERE / "templates")


def points(value: float) -> str:
    """Game points: whole numbers as such (``1,250``), others with one decimal."""
    x = float(value)
    return f"{int(x):,}" if x.is_integer() else num(x, 1)


TEMPLATES.env.filters.update(num=num, pct=pct, p_value=p_value, span=span, points=points)
TEMPLATES.env.globals["STATUSES"] = tuple(BatchStatus)
TEMPLATES.env.globals["SEAT_POLICIES"] = tuple(SeatPolicy)


def page(
    request: Request, template: str, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    """Render ``template`` with ``context`` (plus the request and the app's root path)."""
    root = request.scope.get("root_path", "")
    return TEMPLATES.TemplateResponse(
        request, template, {"root": root, **context}, status_code=status_code
    )
