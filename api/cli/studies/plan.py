"""A study's batches checked against the games and the caps, each with its content key.

A batch is found again by a digest of its definition (:func:`definition_key`): the validated
plan, every agent parameter filled in, without the batch id or the chunk size (which change
how the work is cut, not what is played). An unchanged definition finds its batch; a changed
one (an option, an agent parameter, a seed, a default that moved) makes a new batch. A batch
without a ``seed`` gets one derived from the rest of its definition, so the key stays stable.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api.cli.batch_options import DEFAULT_MATCHES
from api.cli.common import parse_stop, parse_variation, split_agents
from api.cli.studies.definition import Study, StudyBatch, StudyError
from engines.core import GameError, OptionError
from engines.registry import spec_from_text
from storage.models import BatchPlan
from storage.settings import Settings

KEY_PREFIX = "study-"
"""Study batches carry ``study-<digest>`` as their idempotency key, here and on a server."""


@dataclass(frozen=True)
class PlannedBatch:
    """A study batch ready to run: its request (``POST /batches`` body), plan and key."""

    batch: StudyBatch
    request: dict[str, Any]
    plan: BatchPlan

    @property
    def key(self) -> str:
        return KEY_PREFIX + definition_key(self.plan)


def definition_key(plan: BatchPlan) -> str:
    """The digest a batch is found again by: what decides the matches it plays."""
    body = plan.model_dump(mode="json", exclude={"id", "chunk_size"})
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _agents(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        pieces = split_agents(value)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        pieces = list(value)
    else:
        raise OptionError(
            'write agents as in --agents: "hard,easy" or ["hard", "easy"]', field="agents"
        )
    return [spec_from_text(piece) for piece in pieces]


def _stop(value: Any) -> dict[str, Any] | None:
    if value is None or isinstance(value, dict):
        return value
    if not isinstance(value, str):
        raise OptionError("write stop as in --stop, or as a table", field="stop")
    return parse_stop(value)


def _book(value: Any, base: Path) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise OptionError("book is the path of an openings file", field="book")
    path = Path(value)
    return str(path if path.is_absolute() else base / path)


def batch_request(keys: Mapping[str, Any], base: Path) -> dict[str, Any]:
    """``plan_batch``'s keywords (and a ``POST /batches`` body) from a study batch's keys;
    ``book`` is read relative to the study file's folder ``base``."""
    options = keys.get("options", {})
    if not isinstance(options, dict):
        raise OptionError("options is a table of game options", field="options")
    return {
        "game": keys["game"],
        "players": keys.get("players"),
        "options": options,
        "agents": _agents(keys["agents"]),
        "matches": keys.get("matches", DEFAULT_MATCHES),
        "seed": keys.get("seed"),
        "seat_policy": keys.get("seat_policy"),
        "chunk_size": None,
        "max_plies": keys.get("max_plies"),
        "stop_rule": _stop(keys.get("stop")),
        "variation": parse_variation(
            keys.get("openings"),
            _book(keys.get("book"), base),
            keys.get("noise"),
            bool(keys.get("no_variation", False)),
        ),
    }


def _derived_seed(request: Mapping[str, Any]) -> int:
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), default=str)
    return int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)


def plan_one(study: Study, batch: StudyBatch, settings: Settings) -> PlannedBatch:
    """One batch of ``study`` validated as ``playtester run`` would; ``StudyError`` names the
    file, line and field when it is bad."""
    from workers.batches import plan_batch

    try:
        request = batch_request(batch.keys, study.path.parent)
        if request["seed"] is None:
            request["seed"] = _derived_seed(request)
        plan = plan_batch(**request, settings=settings)
    except OptionError as exc:
        field = exc.field or "batch"
        line = study.field_line(batch, field)
        raise StudyError(study.path, line, f"{batch.name}.{field}", str(exc)) from None
    except GameError as exc:
        raise StudyError(study.path, batch.line, batch.name, str(exc)) from None
    return PlannedBatch(batch, {k: v for k, v in request.items() if v is not None}, plan)


def plan_study(study: Study, settings: Settings) -> list[PlannedBatch]:
    """Every batch of ``study`` validated as ``playtester run`` would, before any runs;
    ``StudyError`` names the file, line and field of the first bad one."""
    planned = [plan_one(study, batch, settings) for batch in study.batches]
    by_name = {p.batch.name: p for p in planned}
    for question in study.questions:
        if question.against is None:
            continue
        a, b = by_name[question.batch].plan, by_name[question.against].plan
        if (a.game, a.players) != (b.game, b.players):
            raise StudyError(
                study.path,
                question.line,
                "against",
                f"{question.batch} and {question.against} are not of one game and player "
                "count; a comparison needs the same seats",
            )
    return planned


def check_server_caps(
    study: Study, planned: Sequence[PlannedBatch], games: Sequence[Mapping[str, Any]]
) -> None:
    """Refuse, before anything is sent, a batch whose agents ask more than the server allows
    (``games``: its ``GET /games``, where budgets show the server's caps as their maximum)."""
    maxima: dict[tuple[str, str, str], float] = {}
    for game in games:
        for agent in game.get("agents", []):
            for param in agent.get("params", []):
                if param.get("maximum") is not None:
                    maxima[(game["name"], agent["name"], param["name"])] = param["maximum"]
    for p in planned:
        for seat, spec in enumerate(p.plan.agents):
            for name, value in spec.items():
                cap = maxima.get((p.plan.game, spec["name"], name))
                if cap is not None and isinstance(value, int | float) and value > cap:
                    raise StudyError(
                        study.path,
                        study.field_line(p.batch, "agents"),
                        f"{p.batch.name}.agents[{seat}].{name}",
                        f"{value} is above the server's limit of {cap}",
                    )
