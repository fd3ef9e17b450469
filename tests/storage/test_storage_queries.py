"""The read queries the faces use (``storage.queries``), on both dialects, and the rule that
the faces (``api/``) build no query of their own."""

from __future__ import annotations

import ast

import pytest
from repo_paths import REPO
from storage_rows import make_plan, record

from storage import crud
from storage.db import get_engine
from storage.queries import (
    EXPORT_COLUMNS,
    export_row_slices,
    get_match,
    list_matches,
    ping,
)

API = REPO / "api"


@pytest.fixture
def stored(db_url: str) -> tuple[str, str, list]:
    """Two batches of 6 matches each, match 2 of the first one failed (no seat rows)."""
    engine = get_engine(db_url)
    records = [record(i, ok=i != 2) for i in range(6)]
    ids = []
    for _ in range(2):
        batch = crud.create_batch(engine, plan=make_plan(matches=6, chunk_size=4))
        for start, stop in ((0, 4), (4, 6)):
            assert crud.write_chunk(
                engine,
                batch_id=batch.id,
                start=start,
                stop=stop,
                records=records[start:stop],
                duration=0.1,
            )
        ids.append(batch.id)
    return db_url, ids[0], records


SEAT_FIELDS = ("seat", "agent", "agent_index", "points", "win_share", "rank", "move_ms")


def seat_dicts(batch_id: str, r) -> list[dict]:
    """The seat rows a record should give, keyed by the seat_result table's column names."""
    return [
        {
            "batch_id": batch_id,
            "match_index": r.match_index,
            **dict(zip(SEAT_FIELDS, s, strict=True)),
        }
        for s in r.seats
    ]


def test_list_matches_pages_in_index_order_with_their_seats(stored) -> None:
    url, batch_id, records = stored
    page = list_matches(get_engine(url), batch_id, limit=3, offset=1)
    assert [m.match["match_index"] for m in page] == [1, 2, 3]
    assert all(m.match["batch_id"] == batch_id for m in page)
    for m in page:
        assert m.seats == seat_dicts(batch_id, records[m.match["match_index"]])
    assert page[1].seats == [] and page[1].match["error"] == "RuntimeError: boom"
    assert [m.match["match_index"] for m in list_matches(get_engine(url), batch_id, limit=50)] == [
        0,
        1,
        2,
        3,
        4,
        5,
    ]
    assert list_matches(get_engine(url), batch_id, limit=10, offset=6) == []
    assert list_matches(get_engine(url), "nosuchbatch", limit=10) == []


def test_get_match_is_one_match_of_one_batch(stored) -> None:
    url, batch_id, records = stored
    engine = get_engine(url)
    found = get_match(engine, batch_id, 3)
    assert found is not None
    match, seats = found
    assert (match["batch_id"], match["match_index"], match["seed"]) == (batch_id, 3, 1003)
    assert match["moves"] == "a1-b2\nc3xd4\n" and match["ok"] is True
    assert match["stats"] == {"per_seat": [{"captures": 3}, {"captures": 0}]}
    assert seats == seat_dicts(batch_id, records[3])
    assert get_match(engine, batch_id, 6) is None
    # Full ids only: a prefix names no batch here (prefixes are resolved at the edges).
    assert get_match(engine, batch_id[:6], 3) is None


def test_export_rows_come_in_slices_of_matches(stored) -> None:
    url, batch_id, records = stored
    slices = list(export_row_slices(get_engine(url), batch_id, size=2))
    assert [sorted({r["match_index"] for r in s}) for s in slices] == [[0, 1], [2, 3], [4, 5]]
    rows = [r for s in slices for r in s]
    assert all(tuple(r) == EXPORT_COLUMNS for r in rows)
    assert [(r["match_index"], r["seat"]) for r in rows] == [
        (i, seat) for i in range(6) for seat in ((None,) if i == 2 else (0, 1))
    ]
    failed = rows[4]
    assert failed["ok"] is False and failed["error"] == "RuntimeError: boom"
    assert failed["agent"] is None and failed["win_share"] is None
    match_part = {
        "batch_id": batch_id,
        "match_index": 0,
        "seed": 1000,
        "ok": True,
        "plies": 20,
        "ended_by": "normal",
        "duration": 0.01,
        "error": None,
        "first_seat": None,
        "opening": None,
    }
    assert rows[0] == {**match_part, **seat_dicts(batch_id, records[0])[0]}
    assert list(export_row_slices(get_engine(url), "nosuchbatch")) == []


def test_the_parquet_schema_follows_the_export_columns() -> None:
    from api.exports import SCHEMA

    assert tuple(SCHEMA.names) == EXPORT_COLUMNS


def test_ping_answers_and_fails_loudly(db_url: str) -> None:
    import sqlalchemy.exc

    ping(get_engine(db_url))
    with pytest.raises(sqlalchemy.exc.OperationalError):
        ping(get_engine("postgresql+psycopg://postgres@127.0.0.1:1/nothing"))


def test_the_faces_build_no_queries() -> None:
    """Every query of the HTTP API and the command line lives in ``storage``: no ``select(``
    in ``api/``, and of SQLAlchemy the faces import only the ``Engine`` type and errors."""
    selects = []
    imported = set()
    for path in sorted(API.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        where = path.relative_to(API.parent)
        selects += [
            f"{where}:{n}" for n, line in enumerate(source.splitlines(), 1) if "select(" in line
        ]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
                imported |= {f"{node.module}.{alias.name}" for alias in node.names}
            elif isinstance(node, ast.Import):
                imported |= {a.name for a in node.names if a.name.startswith("sqlalchemy")}
    assert selects == []
    assert imported <= {"sqlalchemy.Engine", "sqlalchemy.exc", "sqlalchemy.exc.SQLAlchemyError"}
