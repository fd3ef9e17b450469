"""The new-batch form: its fields from ``GET /games``' description of a game, the request body
built from what was typed, and which field an error answer belongs beside.

Form field names: ``game``, ``players``, ``opt.<option>``, ``agent.<seat>``,
``param.<seat>.<agent>.<parameter>``, ``seat_policy``, ``matches``, ``seed``, ``max_plies``,
``time_control`` (sent among the options, as the API takes it), ``chunk_size``, ``variation``
(its kind; blank for the default) with ``variation.plies`` and ``variation.margin``, ``sprt``
(a checkbox) with ``sprt.agent_a``, ``sprt.agent_b``, ``sprt.elo0``, ``sprt.elo1``,
``sprt.alpha``, ``sprt.beta``, and ``api_key``. A blank field means "the
default": it is left out of the body. Values go to the API as typed (numbers as numbers when
they read as one) so that the API, not the page, decides what is wrong and says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from engines.clock import FIELD as TIME_CONTROL_FIELD
from engines.registry import describe_games

INT_FIELDS = ("matches", "seed", "max_plies", "chunk_size")
SPRT_NUMBERS = ("elo0", "elo1", "alpha", "beta")
FORM_LEVEL = "form"
"""Where an error goes when no field of the form matches the one the answer names."""


def games(caps: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """``GET /games``: every game with its options and agents, budgets within ``caps``."""
    return describe_games(caps=caps or {})


def game_info(name: str | None, caps: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The description of game ``name``, or of the first game when it is unknown or blank."""
    known = games(caps)
    return next((g for g in known if g["name"] == name), known[0])


def seat_count(info: Mapping[str, Any], players: str | int | None) -> int:
    """The player count the form shows seats for: ``players`` when within the game's range,
    else the game's minimum."""
    low, high = info["players"]
    try:
        count = int(players) if players not in (None, "") else low
    except (TypeError, ValueError):
        return int(low)
    return count if low <= count <= high else int(low)


def agents_for(info: Mapping[str, Any], players: int) -> list[dict[str, Any]]:
    """The agents of a game that can sit at a table of ``players``."""
    return [a for a in info["agents"] if a["players"][0] <= players <= a["players"][1]]


def _number(text: str) -> int | float | str:
    """``text`` as an int or a float when it reads as one in ASCII digits, else the text
    itself (refused by the request's validation)."""
    if not text.isascii():
        return text
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _whole(text: str) -> int | str:
    if not text.isascii():
        return text
    try:
        return int(text)
    except ValueError:
        return text


def _option_value(kind: str, text: str) -> Any:
    if kind == "list" and text.startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    return text


def form_to_body(form: Mapping[str, str], info: Mapping[str, Any]) -> dict[str, Any]:
    """The ``POST /batches`` body a filled-in form asks for."""
    value = {k: v.strip() for k, v in form.items()}
    body: dict[str, Any] = {"game": value.get("game", "")}
    if value.get("players"):
        body["players"] = _whole(value["players"])
    options = {}
    for option in info["options"]:
        text = value.get(f"opt.{option['name']}", "")
        if text:
            options[option["name"]] = _option_value(option["type"], text)
    if value.get("time_control"):
        options["time_control"] = value["time_control"]
    if options:
        body["options"] = options
    by_name = {a["name"]: a for a in info["agents"]}
    agents: list[str | dict[str, Any]] = []
    for seat in range(seat_count(info, value.get("players"))):
        name = value.get(f"agent.{seat}", "")
        params = {
            p["name"]: value[key]
            for p in by_name.get(name, {}).get("params", [])
            if value.get(key := f"param.{seat}.{name}.{p['name']}")
        }
        agents.append({"name": name, **params} if params else name)
    body["agents"] = agents
    if value.get("seat_policy"):
        body["seat_policy"] = value["seat_policy"]
    for field in INT_FIELDS:
        if value.get(field):
            body[field] = _whole(value[field])
    if value.get("variation"):
        variation: dict[str, Any] = {"kind": value["variation"]}
        if value.get("variation.plies"):
            variation["plies"] = _whole(value["variation.plies"])
        if value.get("variation.margin"):
            variation["margin"] = _number(value["variation.margin"])
        body["variation"] = variation
    if value.get("sprt"):
        rule: dict[str, Any] = {
            "type": "sprt",
            "agents": [value.get("sprt.agent_a", ""), value.get("sprt.agent_b", "")],
        }
        for key in SPRT_NUMBERS:
            if value.get(f"sprt.{key}"):
                rule[key] = _number(value[f"sprt.{key}"])
        body["stop_rule"] = rule
    return body


def error_slot(field: str | None, form: Mapping[str, str], slots: set[str]) -> str:
    """The form's error slot for an answer naming ``field``: the slot of that name, else of its
    nearest parent (``agents[0].depth`` → ``agents[0]``), else ``FORM_LEVEL``.

    An agent parameter's slot is ``agents[<seat>].<agent>.<parameter>``: the parameter of the
    agent chosen for that seat (several agents may have a parameter of the same name).
    """
    if not field:
        return FORM_LEVEL
    match = re.fullmatch(r"agents\[(\d+)\]\.(\w+)", field)
    if match:
        seat, param = match.groups()
        chosen = form.get(f"agent.{seat}", "")
        candidate = f"agents[{seat}].{chosen}.{param}"
        if candidate in slots:
            return candidate
    while field:
        if field in slots:
            return field
        cut = max(field.rfind("."), field.rfind("["))
        field = field[:cut] if cut > 0 else ""
    return FORM_LEVEL


def error_slots(info: Mapping[str, Any], players: int) -> set[str]:
    """Names of the error slots the form shows (the ``data-error-for`` of the template)."""
    slots = {"game", "players", "seat_policy", "stop_rule", "api_key", *INT_FIELDS}
    slots.update(("variation", "variation.plies", "variation.margin"))
    slots.update(f"options.{o['name']}" for o in info["options"])
    slots.add(TIME_CONTROL_FIELD)
    for seat in range(players):
        slots.add(f"agents[{seat}]")
        for agent in agents_for(info, players):
            slots.update(f"agents[{seat}].{agent['name']}.{p['name']}" for p in agent["params"])
    return slots
