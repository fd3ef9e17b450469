"""A batch's stop rule as one typed value: ``SprtRule | PrecisionRule``.

Read here once from whatever a person writes, and passed as a value through every layer: the
request (``workers.batches.BatchRequest``), the plan, the check after each chunk
(``analysis.stop_rule``), the report, a study's calibration (``workers.studies.calibrate``).
The forms read:

- the short ones, ``sprt:A,B,elo0=0,elo1=5[,alpha=0.05,beta=0.05]`` and
  ``precision:FIGURE,half_width=H[,min_units=N]`` (spaces allowed around every comma and
  ``=``), with FIGURE ``first_player_advantage`` or ``score:LABEL``;
- the JSON object a batch stores, ``{"type": "sprt", "agents": [A, B], "elo0": 0, ...}`` or
  ``{"type": "precision", "figure": ..., "half_width": ..., "min_units": ...}`` (``type``
  left out means ``sprt``).

``to_json`` is the stored object, defaults filled in, exactly as batches always stored it, so
stored batches, committed archives and definition digests read the same. A rule read from
text or JSON also keeps what was written (``request_json``): the digests taken over a request
(an idempotency key's fingerprint, a study batch's derived seed) were always taken over that.

Checks come in two steps: ``from_json`` and ``parse`` check what a rule can be on its own
(types, ranges, fields), ``validate(labels)`` what it names in a batch (its agents, its
figure). Every refusal is an ``OptionError`` naming the field (``stop_rule.half_width``).
Pure: no NumPy, no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engines.core import OptionError

FIELD = "stop_rule"
SPRT: Literal["sprt"] = "sprt"
PRECISION: Literal["precision"] = "precision"
FIRST_PLAYER = "first_player_advantage"
SCORE = "score:"
SPRT_DEFAULTS: dict[str, float] = {"elo0": 0.0, "elo1": 5.0, "alpha": 0.05, "beta": 0.05}
"""An SPRT's Elo hypotheses and error rates when the rule does not give them."""
MAX_ELO = 2000.0
MAX_ERROR_RATE = 0.5
MAX_HALF_WIDTH = 0.5
MIN_UNITS = 30
"""Units of sampling a precision stop waits for by default: an interval from fewer rests on a
variance estimated too roughly to stop on."""
MAX_MIN_UNITS = 1_000_000
EXAMPLES = "sprt:hard,easy,elo0=0,elo1=5 or precision:first_player_advantage,half_width=0.02"


def figure_names(labels: Sequence[str]) -> list[str]:
    """Every figure a precision stop may name in a batch with these agent labels."""
    return [FIRST_PLAYER, *(f"{SCORE}{label}" for label in labels)]


@dataclass(frozen=True)
class SprtRule:
    """Stop once a sequential test decides whether ``agents[0]`` is ``elo0`` or ``elo1`` Elo
    stronger than ``agents[1]`` (``analysis.sprt``), with error rates ``alpha`` and ``beta``."""

    agents: tuple[str, str]
    elo0: float = SPRT_DEFAULTS["elo0"]
    elo1: float = SPRT_DEFAULTS["elo1"]
    alpha: float = SPRT_DEFAULTS["alpha"]
    beta: float = SPRT_DEFAULTS["beta"]
    written: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """The rule as written (``request_json``); None for one built here."""

    type: Literal["sprt"] = field(default=SPRT, init=False)

    def validate(self, labels: Sequence[str]) -> SprtRule:
        """This rule, checked against the batch's agent labels."""
        for label in self.agents:
            if label not in labels:
                raise OptionError(
                    f"stop rule agent {label!r} is not in this batch; agents: {', '.join(labels)}",
                    field=f"{FIELD}.agents",
                )
        return self

    def to_json(self) -> dict[str, Any]:
        """The rule as a batch stores it."""
        return {
            "type": SPRT,
            "agents": list(self.agents),
            "elo0": float(self.elo0),
            "elo1": float(self.elo1),
            "alpha": float(self.alpha),
            "beta": float(self.beta),
        }

    def request_json(self) -> dict[str, Any]:
        """The rule as written in the request it came from (``to_json`` if built here)."""
        return dict(self.written) if self.written is not None else self.to_json()

    def text(self) -> str:
        """The short form (JSON when a label cannot be written in it); ``parse`` reads it
        back to this rule."""
        numbers = ",".join(f"{key}={_number(getattr(self, key))}" for key in SPRT_DEFAULTS)
        return _readable(f"{SPRT}:{','.join(self.agents)},{numbers}", self)


@dataclass(frozen=True)
class PrecisionRule:
    """Stop at the first round boundary where ``figure``'s 95 % interval is no wider than
    ± ``half_width``, over at least ``min_units`` units of sampling (``analysis.precision``)."""

    figure: str
    half_width: float
    min_units: int = MIN_UNITS
    written: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """The rule as written (``request_json``); None for one built here."""

    type: Literal["precision"] = field(default=PRECISION, init=False)

    @property
    def score_of(self) -> str | None:
        """The agent label of a ``score:LABEL`` figure; None for the first-player advantage."""
        return self.figure[len(SCORE) :] if self.figure.startswith(SCORE) else None

    def validate(self, labels: Sequence[str]) -> PrecisionRule:
        """This rule, checked against the batch's agent labels."""
        names = figure_names(labels)
        if self.figure not in names:
            raise OptionError(
                f"{FIELD}.figure must be one of {', '.join(names)}, not {self.figure!r}",
                field=f"{FIELD}.figure",
            )
        return self

    def to_json(self) -> dict[str, Any]:
        """The rule as a batch stores it."""
        return {
            "type": PRECISION,
            "figure": self.figure,
            "half_width": float(self.half_width),
            "min_units": int(self.min_units),
        }

    def request_json(self) -> dict[str, Any]:
        """The rule as written in the request it came from (``to_json`` if built here)."""
        return dict(self.written) if self.written is not None else self.to_json()

    def text(self) -> str:
        """The short form (JSON when the figure cannot be written in it); ``parse`` reads it
        back to this rule."""
        short = (
            f"{PRECISION}:{self.figure},half_width={_number(self.half_width)},"
            f"min_units={int(self.min_units)}"
        )
        return _readable(short, self)


StopRule = SprtRule | PrecisionRule
"""A batch's stop rule."""


def _number(value: float) -> str:
    """A number as the short form writes it: shortest text that reads back to it."""
    text = repr(float(value))
    return text.removesuffix(".0")


def _readable(short: str, rule: StopRule) -> str:
    """``short`` when ``parse`` reads it back to ``rule``, else the rule's JSON."""
    try:
        if parse(short) == rule:
            return short
    except OptionError:
        pass
    return json.dumps(rule.to_json(), separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------- reading


def parse(text: str) -> StopRule:
    """A rule from JSON or a short form (module docstring)."""
    if not isinstance(text, str):
        raise OptionError(f"{FIELD} must be text or an object", field=FIELD)
    text = text.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise OptionError(f"stop rule is not valid JSON: {exc}", field=FIELD) from exc
        return from_json(data)
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    if kind not in (SPRT, PRECISION) or not rest.strip():
        raise OptionError(f"cannot read stop rule {text!r}; expected e.g. {EXAMPLES}", field=FIELD)
    pieces = [p.strip() for p in rest.split(",")]
    named: dict[str, Any] = {"type": kind}
    if kind == PRECISION:
        # The figure comes first, whatever it holds (a label may hold "=").
        named["figure"], pieces = pieces[0], pieces[1:]
    agents: list[str] = []
    for part in pieces:
        if not part:
            continue
        key, eq, value = part.partition("=")
        if not eq and kind == SPRT:
            agents.append(part)
            continue
        if not eq:
            raise OptionError(
                f"cannot read {part!r} in the precision stop; expected key=value", field=FIELD
            )
        key = key.strip()
        try:
            # A float, as this form always read its numbers: a request's digests were taken
            # over what it gave (``request_json``).
            named[key] = float(value)
        except ValueError as exc:
            raise OptionError(
                f"stop rule {key} must be a number, not {value.strip()!r}",
                field=f"{FIELD}.{key}",
            ) from exc
    return from_json({**named, "agents": agents} if kind == SPRT else named)


def from_json(data: Any) -> StopRule:
    """A rule from its JSON object (stored, sent over HTTP, or a study file's table): every
    field checked on its own, defaults left to the rule."""
    if isinstance(data, SprtRule | PrecisionRule):
        return data
    if not isinstance(data, Mapping):
        raise OptionError(f"{FIELD} must be an object", field=FIELD)
    kind = data.get("type", SPRT)
    if kind == PRECISION:
        return _precision(data)
    if kind != SPRT:
        raise OptionError(
            f"unknown stop rule type {kind!r}; 'sprt' or 'precision'", field=f"{FIELD}.type"
        )
    return _sprt(data)


def _unknown(data: Mapping[str, Any], known: set[str]) -> None:
    unknown = sorted(str(k) for k in set(data) - known)
    if unknown:
        raise OptionError(
            f"unknown stop rule field(s): {', '.join(unknown)}", field=f"{FIELD}.{unknown[0]}"
        )


def _finite(data: Mapping[str, Any], key: str, default: float) -> float:
    """The number ``data[key]`` (``default`` when absent), refused unless finite."""
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OptionError(f"{FIELD}.{key} must be a number", field=f"{FIELD}.{key}")
    try:
        finite = math.isfinite(float(value))  # a whole number too large for a float raises
    except OverflowError:
        finite = False
    if not finite:
        raise OptionError(f"{FIELD}.{key} must be a finite number", field=f"{FIELD}.{key}")
    return value


def _sprt(data: Mapping[str, Any]) -> SprtRule:
    _unknown(data, {"type", "agents", *SPRT_DEFAULTS})
    agents = data.get("agents")
    if (
        not isinstance(agents, list | tuple)
        or len(agents) != 2
        or not all(isinstance(a, str) for a in agents)
    ):
        raise OptionError(f"{FIELD}.agents must name two agents", field=f"{FIELD}.agents")
    if agents[0] == agents[1]:
        raise OptionError("stop rule needs two different agents", field=f"{FIELD}.agents")
    numbers = {key: _finite(data, key, default) for key, default in SPRT_DEFAULTS.items()}
    for key in ("alpha", "beta"):
        if not 0 < numbers[key] < MAX_ERROR_RATE:
            raise OptionError(
                f"{FIELD}.{key} must be between 0 and {MAX_ERROR_RATE:g}, "
                f"not {float(numbers[key]):g}",
                field=f"{FIELD}.{key}",
            )
    if not numbers["elo0"] < numbers["elo1"]:
        raise OptionError(f"{FIELD}.elo0 must be below elo1", field=f"{FIELD}.elo1")
    if abs(numbers["elo0"]) > MAX_ELO or abs(numbers["elo1"]) > MAX_ELO:
        raise OptionError(
            f"stop rule Elo bounds must lie within ±{MAX_ELO:g}", field=f"{FIELD}.elo1"
        )
    return SprtRule((agents[0], agents[1]), **numbers, written=_copy(data))


def _precision(data: Mapping[str, Any]) -> PrecisionRule:
    _unknown(data, {"type", "figure", "half_width", "min_units"})
    figure = data.get("figure")
    if not isinstance(figure, str) or not (
        figure == FIRST_PLAYER or (figure.startswith(SCORE) and len(figure) > len(SCORE))
    ):
        raise OptionError(
            f"{FIELD}.figure must be {FIRST_PLAYER} or {SCORE}LABEL, not {figure!r}",
            field=f"{FIELD}.figure",
        )
    half = data.get("half_width")
    if isinstance(half, bool) or not isinstance(half, int | float) or not 0 < half < 0.5:
        raise OptionError(
            f"{FIELD}.half_width must be a number between 0 and {MAX_HALF_WIDTH:g} (exclusive), "
            f"not {half!r}",
            field=f"{FIELD}.half_width",
        )
    least = data.get("min_units", MIN_UNITS)
    if (
        isinstance(least, bool)
        or not isinstance(least, int | float)
        or not 2 <= least <= MAX_MIN_UNITS  # before int(): NaN and infinities stop here
        or least != int(least)
    ):
        raise OptionError(
            f"{FIELD}.min_units must be a whole number from 2 to {MAX_MIN_UNITS:,}, not {least!r}",
            field=f"{FIELD}.min_units",
        )
    return PrecisionRule(figure, half, int(least), written=_copy(data))


def _copy(data: Mapping[str, Any]) -> dict[str, Any]:
    """What was written, as JSON data (the agents a list, as they travel)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}


def of_batch(batch: Any) -> StopRule | None:
    """The rule a stored batch (or plan) carries, or None."""
    stored = batch.stop_rule
    return None if not stored else from_json(stored)


# --------------------------------------------------------------------------- schema


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a rule's object: what ``from_json`` admits, as far as a schema
    can say (not that ``elo0`` is below ``elo1``, nor which agents a batch has)."""
    number = {"type": "number"}
    sprt = {
        "type": "object",
        "title": "SprtRule",
        "additionalProperties": False,
        "required": ["agents"],
        "properties": {
            "type": {"const": SPRT, "default": SPRT},
            "agents": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 2,
                "maxItems": 2,
                "description": "The two agents' labels, A then B: H0 A is elo0 Elo stronger "
                "than B, H1 elo1.",
            },
            "elo0": {**number, "minimum": -MAX_ELO, "maximum": MAX_ELO, "default": 0.0},
            "elo1": {**number, "minimum": -MAX_ELO, "maximum": MAX_ELO, "default": 5.0},
            **{
                key: {
                    **number,
                    "exclusiveMinimum": 0,
                    "exclusiveMaximum": MAX_ERROR_RATE,
                    "default": SPRT_DEFAULTS[key],
                }
                for key in ("alpha", "beta")
            },
        },
    }
    precision = {
        "type": "object",
        "title": "PrecisionRule",
        "additionalProperties": False,
        "required": ["type", "figure", "half_width"],
        "properties": {
            "type": {"const": PRECISION},
            "figure": {
                "type": "string",
                "pattern": f"^({FIRST_PLAYER}|{SCORE}.+)$",
                "description": f"{FIRST_PLAYER}, or {SCORE}LABEL: an agent's score.",
            },
            "half_width": {**number, "exclusiveMinimum": 0, "exclusiveMaximum": MAX_HALF_WIDTH},
            "min_units": {
                "type": "integer",
                "minimum": 2,
                "maximum": MAX_MIN_UNITS,
                "default": MIN_UNITS,
            },
        },
    }
    return {"oneOf": [sprt, precision]}
