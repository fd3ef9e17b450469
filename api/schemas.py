"""What the HTTP API reads and answers, in layers apart from the tables.

``BatchCreate`` is the request body; ``BatchPublic`` and ``MatchPublic`` are answers. None of
them inherits from a table model, so a column added to a table never leaks into the API:
``BatchPublic`` shares the batch's columns through ``storage.models.BatchState``, the base the
table derives from too.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field
from sqlmodel.main import SQLModelConfig

from storage.models import BatchState
from workers.request import MAX_INT32, MAX_PLAYERS, BatchRequest, declare_request_schema

__all__ = ["MAX_INT32", "MAX_PLAYERS"]

BATCH_ID_PATTERN = r"^[0-9a-f]{1,32}$"
"""A batch id or a prefix of one: lower-case hexadecimal digits."""
GAME_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,40}$"

BatchId = Annotated[
    str,
    Path(
        pattern=BATCH_ID_PATTERN,
        max_length=32,
        description="Batch id, or a unique prefix of at least 4 of its hex digits.",
    ),
]
"""A batch id in a route's path."""


EXAMPLE_REQUEST = {
    "game": "alquerque",
    "agents": ["random", {"name": "mcts", "iterations": 50}],
    "matches": 1000,
}


def _request_schema(schema: dict[str, Any], _cls: type) -> None:
    declare_request_schema(schema)
    schema["examples"] = [EXAMPLE_REQUEST]


class BatchCreate(BatchRequest):
    """A batch request: which game, who plays it, how many matches.

    The one request model (``workers.request.BatchRequest``) under the name the API has always
    given it, with an example."""

    model_config = ConfigDict(json_schema_extra=_request_schema)


class ProgressPublic(BaseModel):
    """How far a batch is."""

    done: int
    failed: int
    finished: int
    chunks_written: int
    chunks_total: int
    rate: float | None = Field(
        description="Matches per second since the batch last started or was resumed."
    )
    eta_seconds: float | None


class BatchPublic(BatchState):
    """A batch as the API shows it, with its progress and where to look next."""

    # The columns are the stored batch's (``BatchState``: the request and where the batch is),
    # the table's run bookkeeping left out. Every one of them is in every answer, defaults or
    # not, and the schema says so.
    model_config = SQLModelConfig(json_schema_serialization_defaults_required=True)

    progress: ProgressPublic | None = None
    waiting: str | None = Field(
        default=None,
        description="Why an unfinished batch waits when no running worker can play it: no "
        "worker is running, or none has its game (naming the package to install on a "
        "worker). Read with the single batch only; null otherwise.",
    )
    links: dict[str, str]


class UnreadableBatch(BaseModel):
    """A stored batch a listing cannot show: its row holds what no run of the service writes
    (an archive imported by an older version); delete it to clear it."""

    id: str = Field(description="The stored id, as stored (it may not be a batch id at all).")
    problem: str = Field(description="What in the stored row cannot be read.")


class BatchList(BaseModel):
    """One page of batches, newest first."""

    items: list[BatchPublic]
    limit: int
    offset: int
    unreadable: list[UnreadableBatch] = Field(
        default_factory=list,
        description="The batches of this page whose stored rows cannot be shown (not in "
        "items); each can be deleted (DELETE /batches/{id}, the id percent-encoded).",
    )


class SeatPublic(BaseModel):
    """One seat of one match."""

    seat: int
    agent: str
    agent_index: int
    points: float = Field(description="Game points: a margin, never a tie-break for the result.")
    win_share: float = Field(
        description="The game result: winners split 1.0, a draw shares it equally."
    )
    rank: int = Field(
        description="Placing for display (1 = best) by result, then points. Not the result: "
        "a drawn game keeps different ranks when its points differ."
    )
    move_ms: list[float] | None = Field(
        default=None,
        description="With clocks (time_control): milliseconds each of this seat's moves took, "
        "in order (a seat that lost on time ends with the move that ran out); else null.",
    )


class MatchPublic(BaseModel):
    """One stored match; ``agents``, ``returns`` and ``scores`` are listed by seat."""

    index: int
    seed: int
    ok: bool
    plies: int
    ended_by: str
    duration: float
    error: str | None
    agents: list[str]
    returns: list[float]
    scores: list[float]
    seats: list[SeatPublic]


class MatchDetail(MatchPublic):
    """A match with its move list (canonical notation): replaying it gives the same game."""

    moves: list[str]
    stats: dict[str, Any]


class MatchList(BaseModel):
    """One page of matches in index order."""

    items: list[MatchPublic]
    limit: int
    offset: int


class ErrorOut(BaseModel):
    """Every error answer: a message a person can act on, and the field at fault if any."""

    message: str
    field: str | None = None


class Health(BaseModel):
    """Whether the database and the broker answer."""

    status: Literal["ok", "unavailable"]
    database: str
    broker: str


ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "Missing or wrong API key."},
    404: {"model": ErrorOut, "description": "No such batch or match."},
    409: {
        "model": ErrorOut,
        "description": "The batch holds stored rows no match can produce (an old import); "
        "the message names one. Delete the batch to clear it.",
    },
    422: {"model": ErrorOut, "description": "Invalid input; `field` names it."},
    503: {"model": ErrorOut, "description": "Database or broker unreachable."},
}
"""The error answers of every route that reads or writes batches (``ErrorOut`` each)."""

JSON_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {
        "description": answer["description"],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}},
    }
    for code, answer in ERRORS.items()
}
"""``ERRORS`` for a route whose own answer is not JSON (a CSV or HTML report): its errors are
JSON like every other route's, which a model in ``responses`` would declare in the route's own
media type."""
