"""Text typed by people used as a filter on stored text.

PostgreSQL text cannot hold a NUL character, and its driver refuses a query parameter holding
one with an error rather than an empty answer; neither database can hold a lone surrogate
(``"\\ud800"`` in JSON), which is no UTF-8 at all. No stored value holds either, so a filter that
does matches nothing: the queries that filter on typed text ask ``matches_nothing`` before they
ask the database.
"""

from __future__ import annotations

from collections.abc import Mapping

NUL = "\x00"


def matches_nothing(*texts: str | None) -> bool:
    """True when one of ``texts`` holds a character no stored text can hold."""
    return any(text is not None and not storable(text) for text in texts)


def storable(text: str) -> bool:
    """False for text no database column can hold: a NUL, or a lone surrogate."""
    if NUL in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unstorable_field(value: object, field: str) -> str | None:
    """The path of the first text in ``value`` (a JSON-like request part named ``field``:
    text, numbers, lists, dicts with text keys) that no column can store, or None."""
    if isinstance(value, str):
        return None if storable(value) else field
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and not storable(key):
                return field
            found = unstorable_field(item, f"{field}.{key}")
            if found is not None:
                return found
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = unstorable_field(item, f"{field}[{i}]")
            if found is not None:
                return found
    return None
