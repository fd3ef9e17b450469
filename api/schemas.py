"""What the HTTP API reads and answers, in layers apart from the tables.

``BatchCreate`` is the request body; ``BatchPublic`` and ``MatchPublic`` are answers. None of
them inherits from a table model, so a column added to a table never leaks into the API:
``BatchPublic`` shares the batch's columns through ``storage.models.BatchState``, the base the
table derives from too.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema
from sqlmodel.main import SQLModelConfig

from engines.seating import SeatPolicy
from storage.models import BatchState
from workers.batches import MAX_CHUNK_SIZE, MAX_SEED

MAX_AGENTS = 16
MAX_PLAYERS = 99
MAX_OPTIONS = 64
MAX_INT32 = 2**31 - 1
"""Largest value of a 32-bit integer column (match counts, ply caps, match indices)."""
BATCH_ID_PATTERN = r"^[0-9a-f]{1,32}$"
"""A batch id or a prefix of one: lower-case hexadecimal digits."""
GAME_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,40}$"

MAX_AGENT_TEXT = 200
"""Longest agent spec text (``mcts:iterations=400,exploration=1.2``) the schema admits."""

AgentText = Annotated[str, Field(min_length=1, max_length=MAX_AGENT_TEXT)]
AgentObject = Annotated[
    dict[str, Any],
    WithJsonSchema(
        {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 40}},
            "additionalProperties": True,
        }
    ),
]
"""An agent spec as an object: its name and parameters (the planner checks both in full)."""

BatchId = Annotated[
    str,
    Path(
        pattern=BATCH_ID_PATTERN,
        max_length=32,
        description="Batch id, or a unique prefix of at least 4 of its hex digits.",
    ),
]
"""A batch id in a route's path."""


class BatchCreate(BaseModel):
    """A batch request: which game, who plays it, how many matches."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "game": "alquerque",
                    "agents": ["random", {"name": "mcts", "iterations": 50}],
                    "matches": 1000,
                }
            ]
        },
    )

    game: str = Field(min_length=1, max_length=40, description="Game name (see GET /games).")
    players: int | None = Field(
        default=None,
        strict=True,
        ge=1,
        le=MAX_PLAYERS,
        description="Player count; the game's minimum by default.",
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        max_length=MAX_OPTIONS,
        description="Game options by name (see GET /games), and the match option every game "
        'takes, time_control: players\' clocks as "60+1" (seconds a player for the game, plus '
        "seconds added after each move; a player whose clock runs out loses). Unset: no "
        "clocks, and every match replays from its seed; clocked matches are not reproducible "
        "from their seed (their stored moves replay them). Stored apart as the batch's "
        "time_control.",
    )
    agents: list[AgentText | AgentObject] = Field(
        min_length=1,
        max_length=MAX_AGENTS,
        description="One agent spec per seat (or one for every seat): a name or "
        '{"name": ..., <parameter>: ...}.',
    )
    matches: int = Field(
        strict=True,
        ge=1,
        le=MAX_INT32,
        description="Number of matches (at most MAX_MATCHES_PER_BATCH).",
    )
    seed: int | None = Field(
        default=None,
        strict=True,
        ge=0,
        le=MAX_SEED,
        description="Batch seed; generated when omitted.",
    )
    seat_policy: SeatPolicy | None = Field(
        default=None,
        description="balanced (default when agents differ): each agent takes each seat, and "
        "follows each other agent, equally often; rotate: cyclic shifts only (each agent "
        "always follows the same one); fixed: spec order (default when all agents are equal).",
    )
    chunk_size: int | None = Field(
        default=None,
        strict=True,
        ge=1,
        le=MAX_CHUNK_SIZE,
        description=f"Matches per task (at most {MAX_CHUNK_SIZE:,}); by default the workers size "
        "chunks from their own measurements (about CHUNK_SECONDS of work each).",
    )
    max_plies: int | None = Field(
        default=None, strict=True, ge=1, le=MAX_INT32, description="Ply cap (a draw when hit)."
    )
    stop_rule: dict[str, Any] | None = Field(
        default=None, description="Optional early stopping rule (SPRT), see the reports docs."
    )
    variation: dict[str, Any] | None = Field(
        default=None,
        description='How matches differ: {"kind": "openings", "plies": 4} (random, one per '
        'round of seatings; or "source": "book" with "book": [["move", ...], ...]), '
        '{"kind": "noise", "plies": 10, "margin": 0.05} (or "temperature") or '
        '{"kind": "none"}; by default openings when the agents differ, else noise where the '
        "agents offer root values (see GET /games for each game's defaults).",
    )


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
    links: dict[str, str]


class BatchList(BaseModel):
    """One page of batches, newest first."""

    items: list[BatchPublic]
    limit: int
    offset: int


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
    422: {"model": ErrorOut, "description": "Invalid input; `field` names it."},
    503: {"model": ErrorOut, "description": "Database or broker unreachable."},
}
"""The error answers of every route that reads or writes batches (``ErrorOut`` each)."""
