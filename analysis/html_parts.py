"""Pieces of the HTML report shared by the generic page and the game sections."""

from __future__ import annotations

import html
from collections.abc import Sequence

from analysis.formatting import TextTable


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    """A table; ``rows`` hold HTML already (escape text before passing it)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def figure(fig_id: str, svg: str, caption: str, small: bool = False) -> str:
    """An inline SVG figure with its caption."""
    cls = ' class="small"' if small else ""
    return (
        f'<figure id="{fig_id}"{cls}>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>'
    )


def text_table(t: TextTable, heading: str = "h3") -> str:
    """A ``TextTable`` under its title, with its note below."""
    rows = [[html.escape(c) for c in row] for row in t.rows]
    note = f'<p class="note">{html.escape(t.note)}</p>' if t.note else ""
    return (
        f"<{heading}>{html.escape(t.title)}</{heading}>"
        + table(t.columns, rows, t.css_class)
        + note
    )
