"""A batch request: the one declaration of what a batch may ask, which every face builds.

``BatchRequest`` is read from a ``POST /batches`` body (``api.schemas.BatchCreate`` is it,
named for the API), from the command line's options (``api.cli.batch_options``), from a study
file's keys (``workers.studies.plan``) and from the keywords of ``plan_batch``. It checks what
a request can be on its own, declared once here: the types, the bounds no server setting
moves, the stop rule (read by ``analysis.stopping``, the one parser); ``plan_batch`` then
checks it against the games, the agents and the server's limits. Its JSON schema says what
both checks enforce as far as a schema can (every game has two players or more; an agent is
one of the registered names), so a request the schema admits is one the planner can take.

Every refusal is an ``OptionError`` naming the field (``matches``, ``stop_rule.half_width``):
``request_error`` turns pydantic's errors into one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    WithJsonSchema,
)

from analysis import stopping
from analysis.stopping import StopRule
from engines.core import OptionError
from engines.seating import SeatPolicy

MAX_SEED = 2**63 - 1
MAX_CHUNK_SIZE = 5000
MAX_INT32 = 2**31 - 1
"""Largest value of a 32-bit integer column (match counts, ply caps, match indices)."""
MIN_PLAYERS = 2
"""Fewest players of any game: playtester compares seats (``engines.openspiel.spiel`` refuses
OpenSpiel's one-player games for it)."""
MAX_PLAYERS = 99
MAX_AGENTS = 16
MAX_OPTIONS = 64
MAX_AGENT_TEXT = 200
"""Longest agent spec text (``mcts:iterations=400,exploration=1.2``) the schema admits."""
MAX_AGENT_NAME = 40


def _read_rule(value: Any) -> StopRule:
    """A stop rule from a rule, its JSON object or its text."""
    if isinstance(value, str):
        return stopping.parse(value)
    return stopping.from_json(value)


StopRuleField = Annotated[
    StopRule,
    PlainValidator(_read_rule),
    # A request is dumped as it was written: the digests taken over requests (an idempotency
    # key's fingerprint, a study batch's derived seed) keep their value.
    PlainSerializer(lambda rule: rule.request_json(), return_type=dict[str, Any]),
    WithJsonSchema(stopping.json_schema()),
]
"""A stop rule in a request: read by ``analysis.stopping`` from its object or its text."""

AgentText = Annotated[str, Field(min_length=1, max_length=MAX_AGENT_TEXT)]
AgentObject = Annotated[
    dict[str, Any],
    WithJsonSchema(
        {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": MAX_AGENT_NAME}},
            "additionalProperties": True,
        }
    ),
]
"""An agent spec as an object: its name and parameters (the planner checks both in full)."""


def agent_names() -> list[str]:
    """Every agent name the registry knows, for any game."""
    from engines.registry import game_agent_types, game_names

    return sorted({a.name for game in game_names() for a in game_agent_types(game)})


def declare_request_schema(schema: dict[str, Any], _cls: type | None = None) -> None:
    """The request's schema with its agents named from the registry, when the schema is made
    (not at import: listing them loads every game)."""
    names = agent_names()
    alternatives = "|".join(re.escape(name) for name in names)
    for choice in schema["properties"]["agents"]["items"]["anyOf"]:
        if choice.get("type") == "string":
            choice["pattern"] = rf"^\s*({alternatives})\s*(:.*)?$"
        else:
            choice["properties"]["name"] = {"enum": names}


class BatchRequest(BaseModel):
    """A batch request: which game, who plays it, how many matches."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra=declare_request_schema,
    )

    game: str = Field(min_length=1, max_length=40, description="Game name (see GET /games).")
    players: int | None = Field(
        default=None,
        strict=True,
        ge=MIN_PLAYERS,
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
    stop_rule: StopRuleField | None = Field(
        default=None,
        description="Optional early stop: an SPRT between two agents "
        '({"type": "sprt", "agents": [A, B], "elo0": 0, "elo1": 5}) or a precision stop '
        '({"type": "precision", "figure": "first_player_advantage", "half_width": 0.02}); '
        "see the reports docs.",
    )
    variation: dict[str, Any] | None = Field(
        default=None,
        description='How matches differ: {"kind": "openings", "plies": 4} (random, one per '
        'round of seatings; or "source": "book" with "book": [["move", ...], ...]), '
        '{"kind": "noise", "plies": 10, "margin": 0.05} (or "temperature") or '
        '{"kind": "none"}; by default openings when the agents differ, else noise where the '
        "agents offer root values (see GET /games for each game's defaults).",
    )

    def body(self) -> dict[str, Any]:
        """The request as a ``POST /batches`` body: its JSON, the unset (None) fields left out."""
        # Only the top level's None left out: pydantic's exclude_none would also drop a None
        # inside options, and change the body (and its fingerprint).
        return {k: v for k, v in self.model_dump(mode="json").items() if v is not None}


def error_field(error: Mapping[str, Any]) -> tuple[str, str]:
    """(field, message) of one of pydantic's errors: an ``OptionError`` a validator raised
    keeps its own; any other names its place (``agents[1]``)."""
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, OptionError):
        return cause.field, str(cause)
    field = ""
    for part in error.get("loc", ()):
        if part in {"body", "query", "path", "header"}:
            continue
        field += f"[{part}]" if isinstance(part, int) else ("." if field else "") + str(part)
    return field or "batch", f"{field or 'batch'}: {error.get('msg')}"


def request_error(exc: ValidationError) -> OptionError:
    """The first of a request's refusals as an ``OptionError`` naming its field."""
    field, message = error_field(exc.errors()[0])
    return OptionError(message, field=field)


def build_request(fields: BatchRequest | Mapping[str, Any]) -> BatchRequest:
    """The request of ``plan_batch``'s keywords: a key it does not know or a required one
    missing is a ``TypeError``, as a wrong keyword is; a bad value an ``OptionError``."""
    if isinstance(fields, BatchRequest):
        return fields
    known = BatchRequest.model_fields
    unknown = sorted(set(fields) - set(known))
    if unknown:
        raise TypeError(f"a batch request has no key {', '.join(unknown)}")
    missing = sorted(k for k, f in known.items() if f.is_required() and k not in fields)
    if missing:
        raise TypeError(f"a batch request lacks {', '.join(missing)}")
    try:
        return BatchRequest.model_validate(dict(fields))
    except ValidationError as exc:
        raise request_error(exc) from None
