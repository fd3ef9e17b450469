"""The README's "What we found": every published study's verdict, written from the pages' JSON
twins (their ``verdict`` sentences, each with its page) between the README's
``<!-- what-we-found:begin -->`` and ``<!-- what-we-found:end -->`` markers, so no figure in it
is kept by hand. ``study report`` rewrites the block with the index (``index.update_index``).
"""

from __future__ import annotations

import json
from pathlib import Path

BEGIN, END = "<!-- what-we-found:begin -->", "<!-- what-we-found:end -->"


def found_lines(folder: Path) -> list[str]:
    """One item per study with a verdict, in the order of the pages' names: its title, its
    page and its verdict's sentences."""
    lines = []
    for twin in sorted(folder.glob("*.json")):
        try:
            data = json.loads(twin.read_text(encoding="utf-8"))
        except ValueError:
            continue
        verdict = data.get("verdict") if isinstance(data, dict) else None
        if not verdict:
            continue
        page = verdict[0]["page"]
        text = " ".join(str(v["text"]) for v in verdict)
        lines.append(f"- **{data.get('title', twin.stem)}** ([page]({page})): {text}")
    return lines


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
