"""Text typed by people used as a filter on stored text.

PostgreSQL text cannot hold a NUL character, and its driver refuses a query parameter holding
one with an error rather than an empty answer. No stored value holds one on any database, so a
filter that does matches nothing: the queries that filter on typed text ask ``matches_nothing``
before they ask the database.
"""

from __future__ import annotations

NUL = "\x00"


def matches_nothing(*texts: str | None) -> bool:
    """True when one of ``texts`` holds a character no stored text can hold."""
    return any(text is not None and NUL in text for text in texts)
