"""Read queries the HTTP API and the command line answer from: stored matches with their seats,
the export's rows, and whether the database answers. The faces call these functions (and
``storage.crud``'s) and never build a query themselves.

Rows come back as plain dicts keyed by column name, so callers shape them without knowing the
tables.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Connection, Engine, Select, and_, case, false, func, select, text
from sqlalchemy.sql.elements import ColumnElement

from storage.crud import BATCH, CHUNK, MATCH, SEAT_RESULT, NotFound
from storage.models import MATCH_COLUMNS, SEAT_COLUMNS
from storage.usertext import matches_nothing

EXPORT_SLICE = 2000
"""Matches read per query by ``export_row_slices``."""

EXPORT_MATCH_COLUMNS = tuple(c for c in MATCH_COLUMNS if c not in ("moves", "stats"))
"""A match's columns in an export row: all but its moves and stats (read per match)."""
EXPORT_SEAT_COLUMNS = SEAT_COLUMNS[2:]
"""A seat's columns in an export row: all but the batch id and match index it shares."""
EXPORT_COLUMNS = EXPORT_MATCH_COLUMNS + EXPORT_SEAT_COLUMNS
"""The columns of an export row, in order: the match's, then its seat's."""


class StoredMatch(NamedTuple):
    """A stored match row and its seat rows (in seat order), each as a dict by column name."""

    match: dict[str, Any]
    seats: list[dict[str, Any]]


def ping(engine: Engine) -> None:
    """Run ``SELECT 1``; raises whatever the driver raises when the database does not answer."""
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))


# --------------------------------------------------------------------------- matches


def list_matches(
    engine: Engine, batch_id: str, *, limit: int, offset: int = 0
) -> list[StoredMatch]:
    """Up to ``limit`` stored matches of a batch in index order, after skipping ``offset``."""
    return _with_seats(
        engine, batch_id, select(MATCH).where(MATCH.c.batch_id == batch_id), limit, offset
    )


def get_match(engine: Engine, batch_id: str, match_index: int) -> StoredMatch | None:
    """The stored match ``match_index`` of a batch (a full id) with its seats, else ``None``."""
    query = select(MATCH).where(MATCH.c.batch_id == batch_id, MATCH.c.match_index == match_index)
    found = _with_seats(engine, batch_id, query, 1, 0)
    return found[0] if found else None


def find_match(engine: Engine, batch_id: str, match_index: int) -> StoredMatch:
    """``get_match``, raising ``NotFound`` when that match is not stored."""
    stored = get_match(engine, batch_id, match_index)
    if stored is None:
        raise NotFound(f"match {match_index} of batch {batch_id} is not stored (yet)")
    return stored


def played_match_indices(engine: Engine, batch_id: str) -> list[int]:
    """The indices of a batch's stored matches that were played (not failed), in order."""
    query = (
        select(MATCH.c.match_index)
        .where(MATCH.c.batch_id == batch_id, MATCH.c.ok.is_(True))
        .order_by(MATCH.c.match_index)
    )
    with engine.connect() as conn:
        return [int(i) for i in conn.execute(query).scalars()]


def _with_seats(
    engine: Engine, batch_id: str, query: Select[Any], limit: int, offset: int
) -> list[StoredMatch]:
    """The match rows ``query`` selects (index order, one page), each with its seat rows."""
    query = query.order_by(MATCH.c.match_index).limit(limit).offset(offset)
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(query)]
        if not rows:
            return []
        # A page in index order holds every stored match between its first and last.
        span = SEAT_RESULT.c.match_index.between(rows[0]["match_index"], rows[-1]["match_index"])
        by_match = _seats_of(conn, batch_id, span)
    return [StoredMatch(r, by_match.get(r["match_index"], [])) for r in rows]


# --------------------------------------------------------------------------- export


_EXPORT_SELECT = select(
    *(MATCH.c[name] for name in EXPORT_MATCH_COLUMNS),
    *(SEAT_RESULT.c[name] for name in EXPORT_SEAT_COLUMNS),
).select_from(
    MATCH.outerjoin(
        SEAT_RESULT,
        and_(
            SEAT_RESULT.c.batch_id == MATCH.c.batch_id,
            SEAT_RESULT.c.match_index == MATCH.c.match_index,
        ),
    )
)


def export_row_slices(
    engine: Engine, batch_id: str, size: int = EXPORT_SLICE
) -> Iterator[list[dict[str, Any]]]:
    """Export rows (``EXPORT_COLUMNS``, one per seat of every stored match), ``size`` matches at
    a time, in (match index, seat) order.

    Keyset pagination on the match index: each slice is two queries on a fresh connection, so
    memory does not grow with the batch and no connection is held between slices. A match
    without seat rows gives one row whose seat columns are ``None``.
    """
    after = -1
    while True:
        with engine.connect() as conn:
            indices = list(
                conn.execute(
                    select(MATCH.c.match_index)
                    .where(MATCH.c.batch_id == batch_id, MATCH.c.match_index > after)
                    .order_by(MATCH.c.match_index)
                    .limit(size)
                ).scalars()
            )
            if not indices:
                return
            query = _EXPORT_SELECT.where(
                MATCH.c.batch_id == batch_id,
                MATCH.c.match_index.between(after + 1, indices[-1]),
            ).order_by(MATCH.c.match_index, SEAT_RESULT.c.seat)
            rows = [dict(r._mapping) for r in conn.execute(query)]
        yield rows
        after = indices[-1]


# --------------------------------------------------------------------------- dashboard


class BatchTally(NamedTuple):
    """Finished matches of a batch summed over its chunk rows (``storage.crud.progress`` adds
    rate and ETA, one batch at a time)."""

    done: int
    failed: int
    chunks_written: int


StarterSums = tuple[int, int, float, float, float, float, float, int, int, bool]
"""The starting player's win shares of a batch (the seat that moved first, seat 0 where it was
not recorded), summed by unit of sampling (rounds of the batch's design, or for a batch that
links openings, by opening, a match whose opening was not recorded standing alone): the fields
of ``analysis.stats.UnitSums`` in order — matches, groups, Σ share, Σ share², Σ group total²,
Σ group size², Σ size · total, shares strictly between 0 and 1 — then the distinct move lists
and whether every match's opening was recorded."""


def count_batches(engine: Engine, *, game: str | None = None, status: str | None = None) -> int:
    """How many batches ``storage.crud.list_batches`` pages through with these filters."""
    if matches_nothing(game, status):
        return 0
    query = select(func.count()).select_from(BATCH)
    if game is not None:
        query = query.where(BATCH.c.game == game)
    if status is not None:
        query = query.where(BATCH.c.status == status)
    with engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


def play_seconds(engine: Engine, batch_id: str) -> float:
    """The seconds a batch's stored matches took to play, summed: each match is played in one
    single-threaded process, so on a machine with a free core per process it is CPU time."""
    query = select(func.coalesce(func.sum(MATCH.c.duration), 0.0)).where(
        MATCH.c.batch_id == batch_id
    )
    with engine.connect() as conn:
        return float(conn.execute(query).scalar_one())


def batch_tallies(engine: Engine, batch_ids: Sequence[str]) -> dict[str, BatchTally]:
    """Done, failed and chunks written of each batch in ``batch_ids``, in one query (a batch
    with no chunk row yet is left out)."""
    if not batch_ids:
        return {}
    query = (
        select(CHUNK.c.batch_id, func.sum(CHUNK.c.done), func.sum(CHUNK.c.failed), func.count())
        .where(CHUNK.c.batch_id.in_(list(batch_ids)))
        .group_by(CHUNK.c.batch_id)
    )
    with engine.connect() as conn:
        return {
            row[0]: BatchTally(int(row[1] or 0), int(row[2] or 0), int(row[3]))
            for row in conn.execute(query)
        }


def starter_sums(
    engine: Engine, round_sizes: Mapping[str, int], by_opening: Collection[str] = ()
) -> dict[str, StarterSums]:
    """``StarterSums`` of each batch in ``round_sizes`` (batch id → matches per round of its
    design) with a stored seat result, in one query: what a first-player-advantage headline
    needs without reading the rows. Batches in ``by_opening`` group by opening instead."""
    if not round_sizes:
        return {}
    batch_ids = list(round_sizes)
    s, m = SEAT_RESULT, MATCH
    ws = s.c.win_share
    started = s.c.seat == func.coalesce(m.c.first_seat, 0)
    linked = s.c.batch_id.in_(list(by_opening)) if by_opening else false()
    size = case({b: max(int(k), 1) for b, k in round_sizes.items()}, value=s.c.batch_id, else_=1)
    unit = case((linked, m.c.opening), else_=m.c.match_index // size)
    alone = case((and_(linked, m.c.opening.is_(None)), m.c.match_index), else_=None)
    groups = (
        select(
            s.c.batch_id.label("batch_id"),
            func.count().label("n"),
            func.sum(ws).label("t"),
            func.sum(ws * ws).label("q"),
            func.sum(case((and_(ws > 0, ws < 1), 1), else_=0)).label("f"),
            func.sum(case((m.c.opening.is_(None), 1), else_=0)).label("u"),
        )
        .select_from(
            s.join(m, and_(m.c.batch_id == s.c.batch_id, m.c.match_index == s.c.match_index))
        )
        .where(s.c.batch_id.in_(list(batch_ids)), started)
        .group_by(s.c.batch_id, unit, alone)
        .subquery()
    )
    g = groups.c
    query = select(
        g.batch_id,
        func.sum(g.n),
        func.count(),
        func.sum(g.t),
        func.sum(g.q),
        func.sum(g.t * g.t),
        func.sum(g.n * g.n),
        func.sum(g.n * g.t),
        func.sum(g.f),
        func.sum(g.u),
    ).group_by(g.batch_id)
    games = (
        select(m.c.batch_id, func.count(m.c.moves.distinct()))
        .where(m.c.batch_id.in_(batch_ids), m.c.ok.is_(True))
        .group_by(m.c.batch_id)
    )
    with engine.connect() as conn:
        distinct = {row[0]: int(row[1] or 0) for row in conn.execute(games)}
        return {
            row[0]: (
                int(row[1] or 0),
                int(row[2] or 0),
                float(row[3] or 0),
                float(row[4] or 0),
                float(row[5] or 0),
                float(row[6] or 0),
                float(row[7] or 0),
                int(row[8] or 0),
                distinct.get(row[0], 0),
                not row[9],
            )
            for row in conn.execute(query)
        }


class StarterMatches(NamedTuple):
    """The successful matches of a batch, in match order, as columns: what its units of
    sampling and its starting player's result need. ``opening``: each match's stored opening
    key (None where not recorded); ``game``: a key equal for matches that played the same move
    list (None where no move was recorded); ``win_share``: the result of the seat that moved
    first (seat 0 where it was not recorded)."""

    match_index: list[int]
    opening: list[int | None]
    game: list[int | None]
    win_share: list[float]


def starter_matches(engine: Engine, batch_ids: Sequence[str]) -> dict[str, StarterMatches]:
    """``StarterMatches`` of each batch in ``batch_ids`` with a stored seat result, in one
    query.

    For the batches whose units ``starter_sums`` cannot group in SQL: matches joined by a shared
    game or opening with their rounds (``analysis.units``), a connected set rather than a key.
    ``game`` is a dense rank of the move lists within the batch, taken in SQL so the moves
    never leave the database (as ``analysis.frames.match_design`` takes it)."""
    if not batch_ids:
        return {}
    s, m = SEAT_RESULT, MATCH
    game = case(
        (m.c.moves == "", None),
        else_=func.dense_rank().over(partition_by=m.c.batch_id, order_by=m.c.moves),
    )
    query = (
        select(s.c.batch_id, m.c.match_index, m.c.opening, game, s.c.win_share)
        .select_from(
            s.join(m, and_(m.c.batch_id == s.c.batch_id, m.c.match_index == s.c.match_index))
        )
        .where(
            s.c.batch_id.in_(list(batch_ids)),
            m.c.ok.is_(True),
            s.c.seat == func.coalesce(m.c.first_seat, 0),
        )
        .order_by(s.c.batch_id, m.c.match_index)
    )
    rows: dict[str, list[tuple[Any, ...]]] = {}
    with engine.connect() as conn:
        for batch_id, *row in conn.execute(query):
            rows.setdefault(batch_id, []).append(tuple(row))
    # Columns as the database returns them: integer keys (63-bit, never through a float) and
    # a float share; built once per batch rather than once per match.
    return {
        batch_id: StarterMatches(*(list(column) for column in zip(*matches, strict=True)))
        for batch_id, matches in rows.items()
    }


MATCH_SORTS = ("index", "plies", "points")
"""Orders of ``list_matches_page``: match index, length in plies, top points of the match."""


def _top_points() -> Any:
    """The highest points of any seat in each match, as a correlated scalar subquery."""
    return (
        select(func.max(SEAT_RESULT.c.points))
        .where(
            SEAT_RESULT.c.batch_id == MATCH.c.batch_id,
            SEAT_RESULT.c.match_index == MATCH.c.match_index,
        )
        .scalar_subquery()
    )


def list_matches_page(
    engine: Engine,
    batch_id: str,
    *,
    sort: str = "index",
    descending: bool = False,
    ended_by: str | None = None,
    failed: bool = False,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[StoredMatch], int]:
    """One page of a batch's stored matches in the order ``sort`` (one of ``MATCH_SORTS``; ties
    by index), optionally only the failed ones (``failed``) or only those that finished by
    ``ended_by``, with their seats, and how many matches the filter keeps in all."""
    if sort not in MATCH_SORTS:
        raise ValueError(f"sort must be one of {', '.join(MATCH_SORTS)}, not {sort!r}")
    if matches_nothing(batch_id, ended_by):
        return [], 0
    where = [MATCH.c.batch_id == batch_id]
    if failed:
        where.append(MATCH.c.ok.is_(False))
    elif ended_by is not None:
        where.extend([MATCH.c.ok.is_(True), MATCH.c.ended_by == ended_by])
    key = {"index": MATCH.c.match_index, "plies": MATCH.c.plies, "points": _top_points()}[sort]
    # A failed match has no points: last in either order, on every dialect (PostgreSQL would
    # put NULL first when descending, SQLite last).
    order = [(key.desc() if descending else key.asc()).nulls_last(), MATCH.c.match_index]
    query = select(MATCH).where(*where).order_by(*order).limit(limit).offset(offset)
    with engine.connect() as conn:
        total = int(
            conn.execute(select(func.count()).select_from(MATCH).where(*where)).scalar_one()
        )
        rows = [dict(r._mapping) for r in conn.execute(query)]
        if not rows:
            return [], total
        page = SEAT_RESULT.c.match_index.in_([r["match_index"] for r in rows])
        by_match = _seats_of(conn, batch_id, page)
    return [StoredMatch(r, by_match.get(r["match_index"], [])) for r in rows], total


def match_endings(engine: Engine, batch_id: str, *, failed_as: str) -> list[str]:
    """How a batch's stored matches ended, sorted: the ``ended_by`` of those that finished,
    and ``failed_as`` if any failed."""
    query = (
        select(case((MATCH.c.ok.is_(True), MATCH.c.ended_by), else_=failed_as))
        .where(MATCH.c.batch_id == batch_id)
        .distinct()
    )
    with engine.connect() as conn:
        return sorted(str(r[0]) for r in conn.execute(query))


def _seats_of(
    conn: Connection, batch_id: str, matches: ColumnElement[bool]
) -> dict[int, list[dict[str, Any]]]:
    """Seat rows of a page of matches, by match index, in seat order; ``matches`` picks the
    page on ``SEAT_RESULT.c.match_index``."""
    seats = conn.execute(
        select(SEAT_RESULT)
        .where(SEAT_RESULT.c.batch_id == batch_id, matches)
        .order_by(SEAT_RESULT.c.match_index, SEAT_RESULT.c.seat)
    )
    by_match: dict[int, list[dict[str, Any]]] = {}
    for s in seats:
        by_match.setdefault(s.match_index, []).append(dict(s._mapping))
    return by_match
