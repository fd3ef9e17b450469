"""The published studies on the dashboard: ``/ui/studies`` lists them, ``/ui/studies/{name}``
shows one page, ``/ui/studies/figures/{file}`` its plots.

They are read from the pages ``playtester study report`` wrote (``docs/studies/`` of the
folder the server runs in): each study's JSON twin for the list, its Markdown for the page.
A name from the path reaches the filesystem only when it is a study name (``a-z0-9_-``) or a
figure's file name, and only as one of the files the folder holds. The Markdown is rendered
with raw HTML off, so every text of the page is escaped, and links other than to the web are
dropped by the renderer's own check; images may only be the study's own figures.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, HTMLResponse, Response
from markdown_it import MarkdownIt

from api.auth import require_read
from api.web.errors import error_page
from api.web.templating import page

router = APIRouter(include_in_schema=False, dependencies=[Depends(require_read)])

PAGES = Path("docs/studies")
"""Where the pages are, relative to the folder the server runs in (as for ``study report``)."""
NAME = r"^[a-z0-9][a-z0-9_-]{0,63}$"
FIGURE = r"^[a-z0-9][a-z0-9_-]{0,120}\.svg$"
FIGURE_POLICY = "default-src 'none'; style-src 'unsafe-inline'"
"""A figure opened on its own may draw and style itself, and do nothing else."""


def _twin(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == "playtester-study" else None


def published() -> dict[str, dict[str, Any]]:
    """Study name -> its twin, for every page with a readable twin, by name."""
    if not PAGES.is_dir():
        return {}
    found = {}
    for path in sorted(PAGES.glob("*.json")):
        data = _twin(path)
        if re.match(NAME, path.stem) and data is not None and (PAGES / f"{path.stem}.md").is_file():
            found[path.stem] = data
    return found


def render_markdown(text: str, figures: str) -> str:
    """The page's Markdown as HTML: raw HTML escaped, images only the study's own figures
    (served under ``figures``/)."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    for token in tokens:
        for child in token.children or []:
            if child.type != "image":
                continue
            src = str(child.attrGet("src") or "")
            if re.match(FIGURE, src):
                child.attrSet("src", f"{figures}/{src}")
            else:
                child.type, child.tag, child.attrs = "text", "", {}
                child.content = child.content or src
    return str(md.renderer.render(tokens, md.options, {}))


def _strongest(data: dict[str, Any]) -> dict[str, Any] | None:
    """The strongest level a study plays, with its ladder row, when its twin names one."""
    levels = data.get("levels")
    if not isinstance(levels, dict) or not isinstance(levels.get("strongest"), str):
        return None
    rows = [r for r in levels.get("rows") or [] if isinstance(r, dict)]
    row = next((r for r in rows if r.get("level") == levels["strongest"]), None)
    return row if row is not None and isinstance(row.get("cpu_per_game"), int | float) else None


@router.get("/ui/studies", response_class=HTMLResponse)
def studies_page(request: Request) -> HTMLResponse:
    """Every published study: its title, questions, matches, playing time and strongest level."""
    rows = [
        {
            "name": name,
            "title": data.get("title", name),
            # A series is one question more, asked across its batches.
            "questions": len(data.get("questions") or []) + bool(data.get("series")),
            "matches": data.get("matches"),
            "play_seconds": data.get("play_seconds"),
            "strongest": _strongest(data),
        }
        for name, data in published().items()
    ]
    return page(request, "studies.html", {"title": "Studies", "rows": rows})


# Declared HTML: what it answers besides the figure is an error page.
@router.get("/ui/studies/figures/{file}", response_class=HTMLResponse)
def study_figure(
    request: Request, file: Annotated[str, PathParam(pattern=FIGURE, max_length=130)]
) -> Response:
    """One plot of a study page, as written beside it."""
    found = {p.name: p for p in PAGES.glob("*.svg")} if PAGES.is_dir() else {}
    if file not in found:
        return error_page(request, 404, f"no study figure {file!r}", None)
    return FileResponse(
        found[file],
        media_type="image/svg+xml",
        headers={"Content-Security-Policy": FIGURE_POLICY, "X-Content-Type-Options": "nosniff"},
    )


@router.get("/ui/studies/{name}", response_class=HTMLResponse)
def study_page(
    request: Request, name: Annotated[str, PathParam(pattern=NAME, max_length=64)]
) -> HTMLResponse:
    """One study's page, rendered from its Markdown."""
    studies = published()
    if name not in studies:
        return error_page(request, 404, f"no published study {name!r}", None)
    text = (PAGES / f"{name}.md").read_text(encoding="utf-8")
    root = request.scope.get("root_path", "")
    html = render_markdown(text, f"{root}/ui/studies/figures")
    return page(
        request,
        "study.html",
        {"title": studies[name].get("title", name), "name": name, "html": html},
    )
