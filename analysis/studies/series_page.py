"""The verdict of a study that asks a series (``batches = [...]``, :mod:`analysis.studies.series`):
the first player's advantage at each point, its table and its plot, on the page's first screen.

Every figure is a report's (each batch's first-player advantage, its games, its status and
stop rule) or the comparison of the first and the last point played; the exact values are the
solved-values files' the study names. The judgements made here are whether an interval holds
an even game, whether it is as narrow as the precision the batch stops at (**settled**), and
whether the side it favours is the one that wins under perfect play. Points whose batch has no
results yet are said to be not yet played, and drawn as such.

After the verdict, where the solved-values files hold random value layouts, comes the section
``analysis.studies.series_random`` writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analysis import plots
from analysis.studies.context import decided_data, diversity
from analysis.studies.definition import Study
from analysis.studies.estimates import Estimate, Interval, compared_first_player, first_player
from analysis.studies.page_text import (
    Source,
    bounds,
    by_side,
    capitalised,
    listed,
    p_clause,
    pct,
    points,
)
from analysis.studies.series import Series, SeriesPoint
from analysis.studies.series_plot import series_plot
from analysis.studies.series_random import random_data, random_rows, random_section
from analysis.studies.verdict_text import SETTLED

UNFINISHED = ("queued", "running")
"""A batch's statuses while it still plays (``storage.models.BatchStatus``)."""
STATES = {
    "settled": "settled",
    "playing": "still playing",
    "wide": "stopped wider",
    "open": "no precision aimed at",
    "missing": "not yet played",
}
"""Where a point stands, as the table and the plot write it."""
SUMMARY_ROOM = 196
"""The characters the README's item has for the title and the summary (two lines of 100)."""
UNKNOWN = Estimate(None, Interval(None, None))
"""The figure of a point with none: every part of it written as ``–``."""


def _target(report: Mapping[str, Any], study: Study) -> float | None:
    rule = report["batch"].get("stop_rule") or {}
    if rule.get("type") == "precision" and rule.get("figure") == "first_player_advantage":
        return float(rule["half_width"])
    return study.half_width


def _state(report: Mapping[str, Any], advantage: Estimate, target: float | None) -> str:
    width = advantage.interval.half_width
    unfinished = report["batch"]["status"] in UNFINISHED
    if target is not None and width is not None and width <= target + 1e-9:
        return "settled"
    if unfinished:
        return "playing"
    return "open" if target is None else "wide"


def series_points(
    study: Study, series: Series, reports: Mapping[str, Mapping[str, Any]]
) -> list[SeriesPoint]:
    """Every point of the series in its order; those without results have no figure."""
    found = []
    for name in series.batches:
        level = str(study.batch(name).keys.get("agents", ""))
        exact = series.exact.get(name)
        report = reports.get(name)
        if report is None:
            found.append(SeriesPoint(name, series.label(name), level, None, 0, None, "missing",
                                     exact))  # fmt: skip
            continue
        advantage = first_player(report)
        target = _target(report, study)
        games = int(report["batch"]["matches_done"])
        state = _state(report, advantage, target)
        found.append(SeriesPoint(name, series.label(name), level, advantage, games, target,
                                 state, exact))  # fmt: skip
    return found


def _figure(p: SeriesPoint) -> str:
    a = p.advantage or UNKNOWN
    return f"**{pct(a.value, True)}** {bounds(a.interval, True)}"


def _headline(played: list[SeriesPoint], change: Estimate | None, level: str) -> str:
    first, last = played[0], played[-1]
    at = f"At `{level}`" if level else "Across the series"
    if len(played) == 1:
        a = first.advantage or UNKNOWN
        return (
            f"{at}, the first player's advantage on {first.label}, the only point played so "
            f"far, is {_figure(first)}, {p_clause(a.p_value)}."
        )
    ends = "" if len(played) == 2 else f", the first and the last of {len(played)} points played"
    text = (
        f"{at}, the first player's advantage is {_figure(first)} on {first.label} and "
        f"{_figure(last)} on {last.label}{ends}"
    )
    if change is None or change.value is None:
        return text + "."
    iv = change.interval
    moved = iv.known and not iv.holds(0.0)
    verb = ("rises" if (change.value or 0) > 0 else "falls") if moved else "is not shown to change"
    start = (first.advantage or UNKNOWN).value or 0.0
    end = (last.advantage or UNKNOWN).value or 0.0
    if moved and start * end > 0:
        # Both on one side of an even game: say whether it draws nearer to one.
        verb += " toward an even game" if abs(end) < abs(start) else " away from an even game"
    return (
        f"{text}: from {first.label} to {last.label} it {verb} "
        f"({points(change.value)} [{points(iv.low)}, {points(iv.high)}], "
        f"{p_clause(change.p_value)})."
    )


def _sides(played: list[SeriesPoint]) -> str | None:
    """Which side each point's interval favours, the points grouped by side."""
    above, below, even = by_side(
        [(p.label, p.advantage.interval.low, p.advantage.interval.high) if p.advantage
         else (p.label, None, None) for p in played]
    )  # fmt: skip
    parts = []
    if below:
        parts.append(f"the second player on {listed(below)}")
    if above:
        parts.append(f"the first player on {listed(above)}")
    text = "Its interval favours " + " and ".join(parts) if parts else ""
    if even:
        clause = f"holds an even game on {listed(even)}"
        text = f"{text}, and {clause}" if text else f"Its interval {clause}"
    return text + "." if text else None


def _cut(played: list[SeriesPoint], reports: Mapping[str, Mapping[str, Any]]) -> str | None:
    """Where most of some point's draws are games cut at a move limit, how many games each
    point left unfinished and how often the first player wins the decided ones: the edge is
    otherwise read off games nobody won."""
    found = [(p, decided_data(reports[p.batch])) for p in played]
    if not any(d is not None and d["mostly_truncated"] for _, d in found):
        return None
    cut, wins = [], []
    for p, d in found:
        if d is None:
            cut.append(f"none of {p.games:,} on {p.label}")
            continue
        cut.append(f"{d['truncated']:,} of {d['matches']:,} on {p.label}")
        if d["decided"]:
            wins.append(pct(d["first_player"]["wins"] / d["decided"]))
    text = f"Games cut unfinished at the move limit: {listed(cut)}"
    if len(wins) == len(played):
        text += f"; among decided games the first player wins {listed(wins)}"
    return text + "."


def _agrees(p: SeriesPoint) -> bool:
    """Whether the side the interval favours is the one that wins under perfect play (an
    interval holding an even game where perfect play draws)."""
    iv = p.advantage.interval if p.advantage else UNKNOWN.interval
    value = p.exact.start_value if p.exact else 0
    if value > 0:
        return (iv.low or 0) > 0
    if value < 0:
        return (iv.high or 0) < 0
    return bool(iv.holds(0.0))


def _margins(solved: list[SeriesPoint], sign: int) -> str:
    """``by 98 points on 2 × 3 and by 78 on 3 × 3``: the margins of one sign, the unit once."""
    parts: list[str] = []
    for p in solved:
        if p.exact is not None and (p.exact.start_value > 0) - (p.exact.start_value < 0) == sign:
            unit = "" if parts else " points"
            parts.append(f"by {abs(p.exact.start_value):,}{unit} on {p.label}")
    return listed(parts) if parts else ""


def _exact(points_: list[SeriesPoint], level: str) -> str | None:
    """Who wins under perfect play on the solved points, and whether the side the measured
    interval favours is that one."""
    solved = [p for p in points_ if p.exact is not None]
    if not solved:
        return None
    parts = []
    for sign, verb in ((-1, "loses"), (1, "wins")):
        margins = _margins(solved, sign)
        if margins:
            parts.append(f"{verb} {margins}")
    draws = [p.label for p in solved if p.exact and p.exact.start_value == 0]
    if draws:
        parts.append(f"draws on {listed(draws)}")
    text = "Under perfect play the first player " + ", and ".join(parts)
    played = [p for p in solved if p.played]
    who = f"`{level}`" if level else "the players played"
    if len(played) == 1:
        p = played[0]
        shown = "is" if _agrees(p) else "is not shown"
        text += f"; at {who} the perfect-play winner {shown} ahead on {p.label}, the one solved "
        text += "board played"
    elif played:
        agree = [p for p in played if _agrees(p)]
        others = [p.label for p in played if not _agrees(p)]
        text += (
            f"; at {who} the perfect-play winner is ahead (interval clear of an even game) on "
            f"{len(agree)} of the {len(played)} solved boards played"
        )
        if others and agree:
            text += f" (not on {listed(others)})"
    return text + "."


def _status(points_: list[SeriesPoint]) -> str:
    """Which points are settled to the precision aimed at, still playing, stopped wider, not
    yet played."""
    targets = {p.target for p in points_ if p.target is not None}
    aim = f"±{points(targets.pop()).removeprefix('+')}" if len(targets) == 1 else "their precision"
    parts = []
    settled = [p.label for p in points_ if p.state == "settled"]
    if len(settled) == len(points_) > 1:
        # Naming every point would push the plot below the page's first screen.
        parts.append(f"all {len(settled)} points settled to {aim}")
    elif settled:
        parts.append(f"settled to {aim}: {listed(settled)}")
    # "than that" leans on the settled clause before it; with none, the precision is named.
    wider = "stopped wider than " + ("that" if settled else aim)
    for key, words in (("playing", "still playing"), ("wide", wider),
                       ("open", "with no precision aimed at")):  # fmt: skip
        some = [p for p in points_ if p.state == key]
        if some:
            each = [f"{p.label} ({p.games:,} games, ±{points(p.half_width).lstrip('+')})"
                    for p in some]  # fmt: skip
            parts.append(f"{words}: {listed(each)}")
    missing = [p.label for p in points_ if p.state == "missing"]
    if missing:
        parts.append(f"not yet played: {listed(missing)}")
    text = "; ".join(parts)
    return capitalised(text) + "."


def _table(series: Series, played: list[SeriesPoint], level: str) -> list[str]:
    edge = f"first player's edge at `{level}` [95 %]" if level else "first player's edge [95 %]"
    solved = bool(series.exact)
    heads = [series.axis, edge, "games", "95 % half-width"] + (["under perfect play"] * solved)
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for p in played:
        a = p.advantage or UNKNOWN
        cell = f"{pct(a.value, True)} {bounds(a.interval, True).replace(' %', '')}"
        width = f"±{points(p.half_width).lstrip('+')}, {STATES[p.state]}"
        cells = [p.label, cell, f"{p.games:,}", width]
        cells += [p.exact.outcome if p.exact else "–"] * solved
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _note(points_: list[SeriesPoint]) -> list[str]:
    solved = [p for p in points_ if p.exact is not None]
    text = (
        "*95 % half-width*: half the width of the first player's interval, against the "
        "precision its batch stops at (settled when within it)."
    )
    if solved:
        meaning = solved[0].exact.meaning if solved[0].exact else ""
        files = ", ".join(f"`{p.exact.source}`" for p in solved if p.exact)
        text += (
            f" *Under perfect play*: the solver's start value, the {meaning} ({files}); two "
            "perfect players play one game, the same every time, and end on it."
        )
    return [text, ""]


def series_verdict(
    study: Study,
    series: Series,
    ids: Mapping[str, str],
    reports: Mapping[str, Mapping[str, Any]],
    source: Source,
    figures: dict[str, str],
) -> tuple[list[str], dict[str, Any]]:
    """The page's "Verdict" section from the series (adding its plot to ``figures``) and its
    part of the twin: ``verdict``, ``summary``, ``strength`` (the table's rows, as every
    verdict's twin has them) and ``series`` (every point, played or not)."""
    found = series_points(study, series, reports)
    played = [p for p in found if p.played]
    if not played:
        return [], {}
    levels = {p.level for p in found}
    level = levels.pop() if len(levels) == 1 else ""
    change = None
    if len(played) > 1:
        compared = source.compare(ids[played[-1].batch], ids[played[0].batch])
        change = compared_first_player(compared)
    sentences = [_headline(played, change, level)]
    sentences += [s for s in (_sides(played), _exact(found, level), _cut(played, reports)) if s]
    sentences.append(_status(found))
    thin = [p.label for p in played if diversity(reports[p.batch])["warning"]]
    if thin:
        sentences.append(f"Resting on too few distinct openings: {listed(thin)}.")
    name = f"{study.name}-series.svg"
    figures[name] = plots.to_svg(series_plot(found, series.axis, level))
    out = ["## Verdict", "", " ".join(sentences), "", *_table(series, played, level), ""]
    out += [f"![{series.title}]({name})", "", *_note(found)]
    # Below the first screen: how the classic layouts compare with random ones.
    rows = random_rows(series)
    out += random_section(series, rows)
    page = f"docs/studies/{study.name}.md"
    data = {
        "verdict": [{"text": s, "page": page} for s in sentences],
        "summary": _summary(study.title, played, found, level),
        "strength": {"rows": _rows(played, reports), "settled": [], "threshold": SETTLED},
        "series": {**_series_data(series, found, played, change),
                   "random_layouts": random_data(rows)},
    }  # fmt: skip
    return out, data


def _summary(title: str, played: list[SeriesPoint], found: list[SeriesPoint], level: str) -> str:
    """The verdict in one short line for the README, which gives a study two lines of 100
    characters with its title: the intervals are left out where they would not fit."""
    first, last = played[0], played[-1]
    at = f" at `{level}`" if level else ""
    settled = sum(p.state == "settled" for p in found)
    tail = f"{at}; {settled} of {len(found)} points settled."
    shown = [first] if len(played) == 1 else [first, last]
    for with_bounds in (True, False):
        parts = []
        for p in shown:
            a = p.advantage or UNKNOWN
            iv = f" {bounds(a.interval, True)}" if with_bounds else ""
            parts.append(f"{pct(a.value, True)}{iv} on {p.label}")
        text = "First player " + ", ".join(parts) + tail
        if len(text) <= SUMMARY_ROOM - len(title):
            break
    return text


def _rows(played: list[SeriesPoint], reports: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for p in played:
        a = p.advantage or UNKNOWN
        dec = decided_data(reports[p.batch])
        rows.append(
            {
                "batch": p.batch,
                "level": p.level,
                "group": p.label,
                "elo": None,
                "estimate": a.value,
                "ci_low": a.interval.low,
                "ci_high": a.interval.high,
                "decided": None if dec is None else dec["decided"] / dec["matches"],
            }
        )
    return rows


def _series_data(
    series: Series, found: list[SeriesPoint], played: list[SeriesPoint], change: Estimate | None
) -> dict[str, Any]:
    out_points = []
    for p in found:
        a = p.advantage
        exact = None
        if p.exact is not None:
            exact = {"start_value": p.exact.start_value, "meaning": p.exact.meaning,
                     "source": p.exact.source, "outcome": p.exact.outcome}  # fmt: skip
        out_points.append(
            {
                "batch": p.batch,
                "label": p.label,
                "level": p.level,
                "played": p.played,
                "games": p.games,
                "state": p.state,
                "estimate": None if a is None else a.value,
                "ci_low": None if a is None else a.interval.low,
                "ci_high": None if a is None else a.interval.high,
                "p_value": None if a is None else a.p_value,
                "half_width": p.half_width,
                "target": p.target,
                "exact": exact,
                "agrees_with_perfect_play": None if p.exact is None or a is None else _agrees(p),
            }
        )
    moved = None
    if change is not None:
        moved = {
            "from": played[0].batch,
            "to": played[-1].batch,
            "difference": change.value,
            "ci_low": change.interval.low,
            "ci_high": change.interval.high,
            "p_value": change.p_value,
            "test": change.test,
        }
    return {
        "title": series.title,
        "figure": series.figure,
        "axis": series.axis,
        "points": out_points,
        "change": moved,
    }
