"""Batch ids typed by people: what "not found" means, and short prefixes resolved to full ids.

Only the edges (the command line and the HTTP API) resolve prefixes, on user input, with
``resolve_batch_id``; everything past them, the worker path included, takes full ids.
"""

from __future__ import annotations

from sqlalchemy import Engine, select

from storage.models import BATCH
from storage.usertext import matches_nothing

MIN_PREFIX = 4
"""Shortest batch id prefix accepted in place of a full id."""


class NotFound(LookupError):  # noqa: N818 - the name the API and CLI speak of
    """No stored batch (or match) answers to the id given; the message says what to try.

    Callers catch this class, never ``LookupError`` as a whole: a ``KeyError`` or
    ``IndexError`` raised by a bug must surface as the bug it is, not as "not found".
    """


def resolve_batch_id(engine: Engine, text: str) -> str:
    """The full id of the batch named by ``text`` (a full id or a unique prefix of at least
    ``MIN_PREFIX`` characters); ``NotFound`` says why when there is none."""
    wanted = text.strip()
    if matches_nothing(wanted):
        raise NotFound(f"no batch {wanted!r}: a batch id is hexadecimal digits")
    with engine.connect() as conn:
        if conn.execute(select(BATCH.c.id).where(BATCH.c.id == wanted)).first() is not None:
            return wanted
        if len(wanted) < MIN_PREFIX:
            raise NotFound(
                f"no batch {wanted!r}; give the full id or at least {MIN_PREFIX} characters of it"
            )
        escaped = wanted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        found = (
            conn.execute(
                select(BATCH.c.id).where(BATCH.c.id.like(escaped + "%", escape="\\")).limit(3)
            )
            .scalars()
            .all()
        )
    if not found:
        raise NotFound(f"no batch {wanted!r}; `playtester batches` lists them")
    if len(found) > 1:
        raise NotFound(f"batch prefix {wanted!r} is ambiguous ({', '.join(found)}, ...)")
    return str(found[0])
