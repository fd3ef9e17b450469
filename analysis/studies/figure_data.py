"""Each study figure as data, for the page's JSON twin: the report's own fields, picked and
never computed. Which figure uses which is :mod:`analysis.studies.figures`'s registry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analysis.studies.definition import Question

_FIGURE_KEYS = (
    "estimate",
    "a",
    "b",
    "difference",
    "ci_low",
    "ci_high",
    "interval",
    "test",
    "p_value",
    "units",
    "effective_n",
    "by",
)
_SEAT_KEYS = (
    "seat",
    "games",
    "win_share",
    "a",
    "b",
    "difference",
    "ci_low",
    "ci_high",
    "expected",
    "interval",
    "test",
    "p_value",
    "p_holm",
    "units",
    "effective_n",
)
_AGENT_KEYS = (
    "agent",
    "games",
    "score",
    "ci_low",
    "ci_high",
    "interval",
    "elo",
    "elo_low",
    "elo_high",
    "units",
)
_TIER_KEYS = ("tier", "difference", "ci_low", "ci_high", "p_value", "p_holm", "units")


def _pick(row: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: row[key] for key in keys if key in row}


def first_player_data(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> dict[str, Any]:
    source = compared["first_player_advantage"] if compared else report["first_player_advantage"]
    return _pick(source, _FIGURE_KEYS)


def seats_data(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> dict[str, Any]:
    rows = compared["seats"] if compared else report["seats"]
    out: dict[str, Any] = {"rows": [_pick(row, _SEAT_KEYS) for row in rows]}
    positions = None if compared else report.get("turn_positions")
    if positions:
        # The game draws who starts: ``rows`` are seats, ``positions`` the order of play.
        out["positions"] = [_pick(row, ("position", *_SEAT_KEYS)) for row in positions]
    return out


def agents_data(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> dict[str, Any]:
    return {"rows": [_pick(row, _AGENT_KEYS) for row in report["agents"]]}


def square_values_data(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> dict[str, Any]:
    return {"rows": [_pick(row, _TIER_KEYS) for row in report["game"]["deciding_tiers"]]}


def draw_rate_data(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> dict[str, Any]:
    shape = report["shape"]
    return {
        "estimate": shape["draw_rate"],
        "ci_low": shape.get("draw_rate_ci_low"),
        "ci_high": shape.get("draw_rate_ci_high"),
    }


def game_length_data(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> dict[str, Any]:
    plies = report["shape"]["plies"]
    return {key: plies[key] for key in ("mean", "median", "p10", "p90", "min", "max")}
