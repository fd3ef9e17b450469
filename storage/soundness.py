"""Stored rows no run of the service writes, found before a read trips over them.

The tables accept more than a batch ever stores: an archive imported by an older version, or a
row written by hand, may hold a ``decision`` that is text, an id with a slash, three seats in a
two-player match, or infinite points. Nothing here repairs such rows. The faces ask
``batch_problem`` (the batch row alone, cheap enough for every row of a listing) and
``rows_problem`` (its match, seat and chunk rows, a few indexed queries) before they read, and
a batch with a problem is shown flagged or refused with ``UnsoundBatch`` naming the row and
the field, which the API answers 409; deleting the batch (``crud.delete_batch``) clears it.
"""

from __future__ import annotations

import re
import sys
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, and_, func, or_, select
from sqlalchemy.sql.elements import ColumnElement

from storage.models import CHUNK, MATCH, SEAT_RESULT, Batch, BatchStatus

BATCH_ID = re.compile(r"[0-9a-f]{1,32}")
"""A batch id as every route takes it: 1 to 32 lower-case hexadecimal digits."""

LARGEST = sys.float_info.max
"""Past this a stored float is infinite (or, on PostgreSQL, NaN, which sorts above all)."""


class UnsoundBatch(Exception):  # noqa: N818 - the name the API and CLI speak of
    """A stored batch holds a row no run of the service writes: ``problem`` says which row and
    which field; reading the batch would report it as fact or fail on it."""

    def __init__(self, batch_id: str, problem: str) -> None:
        self.batch_id = batch_id
        self.problem = problem
        super().__init__(
            f"batch {batch_id!r} cannot be read: {problem}; delete it "
            "(`playtester delete`, or DELETE /batches/{id})"
        )


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def batch_problem(batch: Batch) -> str | None:
    """What makes the batch row ``batch`` unreadable, in words, or None for a sound row."""
    if not isinstance(batch.id, str) or BATCH_ID.fullmatch(batch.id) is None:
        return "its id is not 1 to 32 lower-case hexadecimal digits"
    checks: list[tuple[str, object, bool]] = [
        ("game", batch.game, isinstance(batch.game, str) and bool(batch.game)),
        ("players", batch.players, _int(batch.players, 1)),
        ("matches", batch.matches, _int(batch.matches, 0)),
        ("max_plies", batch.max_plies, _int(batch.max_plies, 1)),
        ("chunk_size", batch.chunk_size, _int(batch.chunk_size, 0)),
        ("seed", batch.seed, _int(batch.seed, None)),
        ("seat_policy", batch.seat_policy, isinstance(batch.seat_policy, str)),
        ("status", batch.status, batch.status in BatchStatus.ALL),
        ("options", batch.options, isinstance(batch.options, dict)),
        (
            "stop_rule",
            batch.stop_rule,
            batch.stop_rule is None or isinstance(batch.stop_rule, dict),
        ),
        (
            "variation",
            batch.variation,
            batch.variation is None or isinstance(batch.variation, dict),
        ),
        ("decision", batch.decision, batch.decision is None or isinstance(batch.decision, dict)),
        (
            "time_control",
            batch.time_control,
            batch.time_control is None or isinstance(batch.time_control, str),
        ),
        ("stopped_early", batch.stopped_early, isinstance(batch.stopped_early, bool)),
        ("created_at", batch.created_at, isinstance(batch.created_at, datetime)),
    ]
    for field, value, sound in checks:
        if not sound:
            return f"{field} is stored as {_shown(value)}"
    agents, labels = batch.agents, batch.labels
    if not isinstance(agents, list) or not agents:
        return f"agents is stored as {_shown(agents)}, not a list of agent specs"
    for i, spec in enumerate(agents):
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            return f"agents[{i}] is stored as {_shown(spec)}, not a spec with a name"
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        return f"labels is stored as {_shown(labels)}, not a list of text"
    if len(labels) != len(agents):
        return f"labels holds {len(labels)} labels for {len(agents)} agents"
    return None


def _int(value: object, least: int | None) -> bool:
    ok = isinstance(value, int) and not isinstance(value, bool)
    return ok and (least is None or value >= least)  # type: ignore[operator]


def _shown(value: object, limit: int = 60) -> str:
    text = repr(value)
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return f"{_kind(value)} {text}"


def check_batch(batch: Batch) -> Batch:
    """``batch``, or ``UnsoundBatch`` naming what makes its row unreadable."""
    problem = batch_problem(batch)
    if problem is not None:
        raise UnsoundBatch(batch.id, problem)
    return batch


def _not_finite(column: Any) -> ColumnElement[bool]:
    return or_(column > LARGEST, column < -LARGEST, column.is_(None))


def _json_kind(engine: Engine, column: Any) -> Any:
    """The JSON type of ``column``'s value as the database names it (``object``, ``array``,
    ``null``, ...; SQL NULL for no value)."""
    if engine.dialect.name == "postgresql":
        return func.json_typeof(column)
    return func.json_type(column)


def rows_problem(
    engine: Engine, batch: Batch, *, start: int | None = None, stop: int | None = None
) -> str | None:
    """What makes one of the match, seat or chunk rows of the sound batch row ``batch``
    unreadable (optionally only the matches ``start <= index < stop``), or None.

    Every stored match index lies in ``[0, matches)``; a played match has one seat row per
    seat, seats ``0..players-1``, each with an ``agent_index`` among the batch's agents and
    finite points and a win share in [0, 1]; plies are not negative; durations are finite;
    ``first_seat`` is a seat; ``stats`` is a JSON object and ``move_ms`` an array or null.
    """
    players, agents, matches = batch.players, len(batch.agents), batch.matches
    s, m = SEAT_RESULT.c, MATCH.c

    def within(index: Any) -> list[ColumnElement[bool]]:
        found = []
        if start is not None:
            found.append(index >= start)
        if stop is not None:
            found.append(index < stop)
        return found

    seat_where = and_(s.batch_id == batch.id, *within(s.match_index))
    match_where = and_(m.batch_id == batch.id, *within(m.match_index))
    checks: list[tuple[Any, Any]] = [
        (
            select(m.match_index).where(
                match_where, or_(m.match_index < 0, m.match_index >= matches)
            ),
            lambda i: f"match {i} is stored in a batch of {matches} matches",
        ),
        (
            select(s.match_index).where(
                seat_where, or_(s.match_index < 0, s.match_index >= matches)
            ),
            lambda i: f"a seat of match {i} is stored in a batch of {matches} matches",
        ),
        (
            select(s.match_index, s.seat).where(seat_where, or_(s.seat < 0, s.seat >= players)),
            lambda i, seat: f"match {i} has a seat {seat} in a {players}-player batch",
        ),
        (
            select(s.match_index, s.agent_index).where(
                seat_where, or_(s.agent_index < 0, s.agent_index >= agents)
            ),
            lambda i, k: f"match {i} names agent_index {k} in a batch of {agents} agents",
        ),
        (
            select(s.match_index, s.seat).where(seat_where, _not_finite(s.points)),
            lambda i, seat: f"match {i} seat {seat}: points is not a finite number",
        ),
        (
            select(s.match_index, s.seat).where(
                seat_where, or_(_not_finite(s.win_share), s.win_share < 0, s.win_share > 1)
            ),
            lambda i, seat: f"match {i} seat {seat}: win_share is not a number in [0, 1]",
        ),
        (
            select(s.match_index, s.seat).where(
                seat_where,
                s.move_ms.is_not(None),
                _json_kind(engine, s.move_ms).not_in(["array", "null"]),
            ),
            lambda i, seat: f"match {i} seat {seat}: move_ms is not a list",
        ),
        (
            select(m.match_index, m.plies).where(match_where, m.plies < 0),
            lambda i, plies: f"match {i} has {plies} plies",
        ),
        (
            select(m.match_index).where(match_where, _not_finite(m.duration)),
            lambda i: f"match {i}: duration is not a finite number",
        ),
        (
            select(m.match_index, m.first_seat).where(
                match_where, or_(m.first_seat < 0, m.first_seat >= players)
            ),
            lambda i, seat: f"match {i} has first_seat {seat} in a {players}-player batch",
        ),
        (
            select(m.match_index).where(
                match_where, _json_kind(engine, m.stats).is_distinct_from("object")
            ),
            lambda i: f"match {i}: stats is not a JSON object",
        ),
        (
            select(m.match_index, func.count(s.seat))
            .select_from(
                MATCH.outerjoin(
                    SEAT_RESULT,
                    and_(s.batch_id == m.batch_id, s.match_index == m.match_index),
                )
            )
            .where(match_where, m.ok.is_(True))
            .group_by(m.match_index)
            .having(func.count(s.seat) != players),
            lambda i, n: f"match {i} has {n} seat rows in a {players}-player batch",
        ),
    ]
    if start is None and stop is None:
        checks.append(
            (
                select(CHUNK.c.start).where(
                    CHUNK.c.batch_id == batch.id, _not_finite(CHUNK.c.duration)
                ),
                lambda first: f"the chunk from match {first}: duration is not a finite number",
            )
        )
    with engine.connect() as conn:
        for query, say in checks:
            row = conn.execute(query.limit(1)).first()
            if row is not None:
                return str(say(*row))
    return None


def check_rows(
    engine: Engine, batch: Batch, *, start: int | None = None, stop: int | None = None
) -> Batch:
    """``batch`` once its row and its stored rows (optionally only the matches ``start <= index
    < stop``) are sound; else ``UnsoundBatch`` naming the first problem."""
    check_batch(batch)
    problem = rows_problem(engine, batch, start=start, stop=stop)
    if problem is not None:
        raise UnsoundBatch(batch.id, problem)
    return batch
