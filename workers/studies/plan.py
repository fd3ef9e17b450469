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
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from analysis.studies.definition import (
    VARIATION_KEYS,
    BatchKey,
    Study,
    StudyBatch,
    StudyError,
    key_line,
)
from engines.core import GameError, OptionError
from engines.registry import spec_from_text
from storage.models import BatchPlan, definition_key
from storage.settings import Settings
from workers.batches import plan_batch
from workers.request import BatchRequest, build_request
from workers.request_text import DEFAULT_MATCHES, parse_variation, split_agents

KEY_PREFIX = "study-"
"""Study batches carry ``study-<digest>`` as their idempotency key, here and on a server."""


class Checker(Protocol):
    """A server that checks a batch request without storing it (``POST /batches/check``),
    raising ``OptionError`` naming the field it refuses."""

    def check_batch(self, body: Mapping[str, Any]) -> dict[str, Any]: ...


@dataclass(frozen=True)
class PlannedBatch:
    """A study batch ready to run: its request, plan and key."""

    batch: StudyBatch
    asked: BatchRequest
    plan: BatchPlan

    @property
    def request(self) -> dict[str, Any]:
        """The request as a ``POST /batches`` body."""
        return self.asked.body()

    @property
    def key(self) -> str:
        return KEY_PREFIX + definition_key(self.plan)


def _agents(value: Any) -> list[dict[str, Any]]:
    pieces = split_agents(value) if isinstance(value, str) else list(value)
    if not all(isinstance(piece, str) for piece in pieces):
        raise OptionError(
            'write agents as in --agents: "hard,easy" or ["hard", "easy"]', field="agents"
        )
    return [spec_from_text(piece) for piece in pieces]


def _book(value: str | None, base: Path) -> str | None:
    """The book's path: inside the study file's folder. A study file travels between people,
    so it may not make the planner read (and echo in its errors) a file beside it or above."""
    if value is None:
        return None
    folder = base.resolve()
    path = (folder / value).resolve()
    if not path.is_relative_to(folder):
        raise OptionError(
            f"the book {value!r} is outside the study file's folder: give a path inside it",
            field="variation.book",
        )
    return str(path)


def _noise(value: str | float | None) -> str | None:
    return None if value is None else str(value)


def batch_request(keys: Mapping[str, Any], base: Path) -> BatchRequest:
    """The request of a study batch's keys (their types checked by ``load_study``; the stop
    rule's text or table read by ``analysis.stopping``); ``book`` is read relative to the
    study file's folder ``base``."""
    return build_request(
        {
            "game": keys[BatchKey.GAME],
            "players": keys.get(BatchKey.PLAYERS),
            "options": keys.get(BatchKey.OPTIONS, {}),
            "agents": _agents(keys[BatchKey.AGENTS]),
            "matches": keys.get(BatchKey.MATCHES, DEFAULT_MATCHES),
            "seed": keys.get(BatchKey.SEED),
            "seat_policy": keys.get(BatchKey.SEAT_POLICY),
            "chunk_size": None,
            "max_plies": keys.get(BatchKey.MAX_PLIES),
            "stop_rule": keys.get(BatchKey.STOP),
            "variation": parse_variation(
                keys.get(BatchKey.OPENINGS),
                _book(keys.get(BatchKey.BOOK), base),
                _noise(keys.get(BatchKey.NOISE)),
                bool(keys.get(BatchKey.NO_VARIATION, False)),
            ),
        }
    )


def _derived_seed(request: BatchRequest) -> int:
    """A seed from the rest of the request, as written (``BatchRequest`` dumps its stop rule
    as written), so that it stays the same from one version to the next."""
    text = json.dumps(request.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)


REQUEST_KEYS = {"stop_rule": BatchKey.STOP}
"""A request's field named otherwise in a study file."""
VARIATION_FIELDS = {
    "book": (BatchKey.BOOK,),
    "plies": (BatchKey.OPENINGS, BatchKey.NOISE),
    "margin": (BatchKey.NOISE,),
    "temperature": (BatchKey.NOISE,),
}
"""Which study keys a ``variation.<field>`` of the request is read from."""


def study_field(batch: StudyBatch, field: str) -> tuple[str, str]:
    """The study key that a request's ``field`` (as an ``OptionError`` names it) comes from,
    and the rest of the field's path: ``variation.book[2]`` -> (``book``, ``[2]``),
    ``options.layout`` -> (``options``, ``.layout``)."""
    head, _, rest = field.partition(".")
    name, bracket, index = head.partition("[")
    detail = (bracket + index) + ("." + rest if rest else "")
    if name != "variation":
        return str(REQUEST_KEYS.get(name, name)), detail
    sub = re.split(r"[.\[]", rest, maxsplit=1)[0] if rest else ""
    written = [key for key in VARIATION_KEYS if key in batch.keys]
    candidates = VARIATION_FIELDS.get(sub, ())
    key = next((k for k in candidates if k in batch.keys), written[0] if written else None)
    if key is None:  # the game's default variation, written nowhere
        return "variation", detail
    return str(key), rest[len(sub) :] if sub == "book" else ""


def plan_one(study: Study, batch: StudyBatch, settings: Settings) -> PlannedBatch:
    """One batch of ``study`` validated as ``playtester run`` would; ``StudyError`` names the
    file, line and field when it is bad."""
    try:
        request = batch_request(batch.keys, study.path.parent)
        if request.seed is None:
            request = request.model_copy(update={"seed": _derived_seed(request)})
        plan = plan_batch(request, settings=settings)
    except OptionError as exc:
        key, detail = study_field(batch, exc.field or "batch")
        raise study.error(batch, key, str(exc), detail) from None
    except GameError as exc:
        raise StudyError(study.path, batch.line, batch.name, str(exc)) from None
    return PlannedBatch(batch, request, plan)


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
            where = f"question[{study.questions.index(question)}].against"
            raise StudyError(
                study.path,
                key_line(study.text, question.line, "against") or question.line,
                where,
                f"{question.batch} and {question.against} are not of one game and player "
                "count; a comparison needs the same seats",
            )
    return planned


def check_on_server(study: Study, planned: Sequence[PlannedBatch], server: Checker) -> None:
    """Have the server check every batch as it would a submission (its own limits, games and
    agents) before one is sent: ``StudyError`` names the file, line and field of the first it
    refuses."""
    for p in planned:
        try:
            server.check_batch(p.request)
        except OptionError as exc:
            key, detail = study_field(p.batch, exc.field or "batch")
            raise study.error(p.batch, key, str(exc), detail) from None
