"""The README's "What we found": every published study's verdict in one short line, written
from the pages' JSON twins (their ``summary``, else their first ``verdict`` sentence, with the
page) between the README's ``<!-- what-we-found:begin -->`` and ``<!-- what-we-found:end -->``
markers, so no figure in it is kept by hand. ``study report`` rewrites the block with the index
(``index.update_index``).

Each item is wrapped at ``WIDTH`` characters, so the block reads as a list to scan in a
terminal as on GitHub.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

BEGIN, END = "<!-- what-we-found:begin -->", "<!-- what-we-found:end -->"
WIDTH = 100


def found_lines(folder: Path) -> list[str]:
    """One item per study with a verdict, in the order of the pages' names: its title, its
    verdict's line and its page, wrapped at ``WIDTH``. A study whose only verdict is a
    figure's own (``figure_verdicts``: how close the players are to perfect) is listed by that
    verdict's line."""
    lines = []
    for twin in sorted(folder.glob("*.json")):
        try:
            data = json.loads(twin.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        verdict = data.get("verdict") or data.get("figure_verdicts")
        if not verdict:
            continue
        page = verdict[0]["page"]
        text = str(data.get("summary") or verdict[0]["text"])
        item = f"- [**{data.get('title', twin.stem)}**]({page}): {text}"
        lines += _wrapped(item)
    return lines


def _wrapped(item: str) -> list[str]:
    """``item`` wrapped at ``WIDTH``, never inside a link, an interval or between a figure and
    its ``%`` (a line break there would split what reads as one figure)."""
    keep = "\x00"
    held = re.sub(r"\[[+-]?\d[^\]]*\]", lambda m: m.group(0).replace(" ", keep), item)
    held = held.replace(" %", keep + "%")
    lines = textwrap.wrap(held, WIDTH, subsequent_indent="  ", break_long_words=False,
                          break_on_hyphens=False)  # fmt: skip
    return [line.replace(keep, " ") for line in lines]


def readme_text(text: str, folder: Path) -> str:
    """``text`` with the block between the markers made the verdicts of ``folder``'s twins;
    ``text`` itself when it has no markers."""
    if BEGIN not in text or END not in text:
        return text
    head, _, rest = text.partition(BEGIN)
    tail = rest.partition(END)[2]
    return "\n".join([head + BEGIN, *found_lines(folder), END]) + tail


def update_readme(readme: Path, folder: Path) -> None:
    """Rewrite ``readme``'s "What we found" block from ``folder``'s twins, when it has one."""
    if not readme.is_file():
        return
    text = readme.read_text(encoding="utf-8")
    new = readme_text(text, folder)
    if new != text:
        readme.write_text(new, encoding="utf-8")
