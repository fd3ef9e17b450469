"""The list of published study pages, kept in two places: the studies index
(``docs/studies/index.md``, between its ``<!-- pages -->`` markers) and the site's navigation
(``mkdocs.yml``, the ``Studies`` section). ``study report`` rewrites both from the pages the
folder holds, so no page is left unlinked (mkdocs, strict, refuses a page outside the nav).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from analysis.studies.found import update_readme

START, END = "<!-- pages -->", "<!-- /pages -->"
NONE_YET = "No study has published results yet."
NAV = re.compile(r"^  - Studies:.*?(?=^  - |^\S|\Z)", re.M | re.S)


def pages(folder: Path) -> dict[str, str]:
    """Study name -> title, for every page in ``folder`` with its JSON twin, by name."""
    found = {}
    for page in sorted(folder.glob("*.md")):
        twin = page.with_suffix(".json")
        if page.name == "index.md" or not twin.is_file():
            continue
        try:
            title = json.loads(twin.read_text(encoding="utf-8")).get("title", page.stem)
        except (OSError, ValueError, AttributeError):
            title = page.stem
        found[page.stem] = str(title)
    return found


def index_text(text: str, listed: dict[str, str]) -> str:
    """The index's text with its list of pages (between the markers) made ``listed``."""
    lines = [f"- [{title}]({name}.md)" for name, title in listed.items()] or [NONE_YET]
    block = "\n".join([START, *lines, END])
    if START in text and END in text:
        head, _, rest = text.partition(START)
        return head + block + rest.partition(END)[2]
    return text.rstrip() + "\n\n" + block + "\n"


def nav_text(text: str, listed: dict[str, str]) -> str:
    """``mkdocs.yml``'s text with its ``Studies`` section listing the index and ``listed``."""
    entries = "".join(f"      - {json.dumps(t)}: studies/{n}.md\n" for n, t in listed.items())
    section = "  - Studies:\n      - studies/index.md\n" + entries
    if not NAV.search(text):
        raise ValueError("mkdocs.yml has no '  - Studies:' entry in its nav")
    return NAV.sub(lambda _m: section, text, count=1)


def update_index(folder: Path, mkdocs: Path) -> dict[str, str]:
    """Rewrite ``folder``'s ``index.md`` list, ``mkdocs``' Studies nav and the "What we found"
    block of the README beside it (``analysis.studies.found``); the pages listed."""
    listed = pages(folder)
    index = folder / "index.md"
    index.write_text(index_text(index.read_text(encoding="utf-8"), listed), encoding="utf-8")
    mkdocs.write_text(nav_text(mkdocs.read_text(encoding="utf-8"), listed), encoding="utf-8")
    update_readme(mkdocs.parent / "README.md", folder)
    return listed
