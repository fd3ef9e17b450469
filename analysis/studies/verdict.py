"""A study page's opening: its verdict in a few sentences and one table, then the first
player's advantage against the strength of the level played.

Every figure is a report's: each batch's first-player advantage, its decided games, its
diversity, and the comparison of the two strongest levels of the main line (the group of
batches with the most levels), which says whether the answer has **settled with strength**:
the difference and its whole 95 % interval within ``SETTLED`` of zero. The Elo of a level is
the game's strength ladder's (``analysis.studies.levels``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis import plots
from analysis.studies.context import decided_data, diversity
from analysis.studies.definition import Figure, Study
from analysis.studies.estimates import Estimate, compared_first_player, first_player
from analysis.studies.levels import LevelsInput
from analysis.studies.page_text import Source, bounds, p_clause, pct, points

SETTLED = 0.02
"""How far apart (a share: 2 points) the two strongest levels' answers may be, interval
included, for the answer to count as settled with strength."""


@dataclass(frozen=True)
class Point:
    """One batch's first-player figure, placed by its level and its group."""

    batch: str
    level: str
    group: str
    elo: float | None
    advantage: Estimate


def _level(study: Study, name: str) -> str:
    """The batch's one level when it is self-play of one agent spec, else its agents."""
    specs = [s.strip() for s in str(study.batch(name).keys.get("agents", "")).split(",")]
    return specs[0] if len(set(specs)) == 1 else ", ".join(specs)


def _groups(study: Study, reports: Mapping[str, Any], names: list[str]) -> dict[str, str]:
    """Each batch's group: its player count, and its options where they differ in the study."""
    options = {n: reports[n]["batch"].get("options") or {} for n in names}
    varying = sorted({k for o in options.values() for k, v in o.items()
                      if any(p.get(k) != v for p in options.values())})  # fmt: skip
    out = {}
    for n in names:
        label = f"{reports[n]['batch']['players']} players"
        extra = ", ".join(f"{k}={options[n].get(k)}" for k in varying)
        out[n] = f"{label}, {extra}" if extra else label
    return out


def first_player_points(
    study: Study, reports: Mapping[str, Any], levels: LevelsInput | None
) -> list[Point]:
    """The study's first-player figures (of its first-player and seats questions) on one
    batch each, in the study's order."""
    names: list[str] = []
    for q in study.questions:
        # Every seats figure carries the first player's advantage too (turn position 0).
        asks = q.figure in (Figure.FIRST_PLAYER_ADVANTAGE, Figure.SEATS)
        if asks and not q.against and q.batch not in names:
            names.append(q.batch)
    elo = {} if levels is None else {r.level: r.elo for r in levels.table.levels if r.games}
    groups = _groups(study, reports, names)
    return [
        Point(n, _level(study, n), groups[n], elo.get(_level(study, n)), first_player(reports[n]))
        for n in names
    ]


def _elo_text(value: float | None) -> str:
    return "–" if value is None else f"{value:+.0f}"


def _rated_groups(found: list[Point]) -> list[list[Point]]:
    """Each group with at least two rated levels, its points by Elo (strongest last)."""
    by_group: dict[str, list[Point]] = {}
    for p in found:
        if p.elo is not None:
            by_group.setdefault(p.group, []).append(p)
    return [sorted(g, key=lambda p: p.elo or 0.0) for g in by_group.values() if len(g) >= 2]


def _judge(compared: Mapping[str, Any], low: Point, high: Point) -> dict[str, Any]:
    """Whether the answer has settled between a group's two strongest levels: their
    difference and its whole interval within ``SETTLED``."""
    d = compared_first_player(compared)
    iv = d.interval
    ok = iv.known and (iv.low or 0) >= -SETTLED and (iv.high or 0) <= SETTLED
    if ok:
        words = "**settled with strength** (within ±2 points)"
    elif iv.holds(0.0):
        words = (
            "**not yet shown settled** (no change measured, but the interval reaches beyond "
            "±2 points)"
        )
    else:
        words = "**still moving with strength**"
    return {
        "group": high.group,
        "stronger": high.batch,
        "weaker": low.batch,
        "difference": d.value,
        "ci_low": iv.low,
        "ci_high": iv.high,
        "settled": ok,
        "words": words,
    }


def _main_line(found: list[Point]) -> list[Point]:
    """The group with the most rated levels, strongest last."""
    by_group: dict[str, list[Point]] = {}
    for p in found:
        if p.elo is not None:
            by_group.setdefault(p.group, []).append(p)
    if not by_group:
        return []
    best = max(by_group.values(), key=len)
    return sorted(best, key=lambda p: p.elo or 0.0)


def verdict_section(
    study: Study,
    ids: Mapping[str, str],
    reports: Mapping[str, Any],
    source: Source,
    levels: LevelsInput | None,
    figures: dict[str, str],
) -> tuple[list[str], dict[str, Any]]:
    """The page's "Verdict" section (adding its plot to ``figures``) and its part of the twin:
    ``verdict`` (the sentences, each with its page) and ``strength`` (the table's rows and
    whether the answer has settled)."""
    found = first_player_points(study, reports, levels)
    if not found:
        return [], {}
    page = f"docs/studies/{study.name}.md"
    sentences: list[str] = []
    line = _main_line(found)
    top = line[-1] if line else found[-1]
    a = top.advantage
    sentences.append(
        f"At `{top.level}` ({top.group}"
        + (f", Elo {_elo_text(top.elo)} on the game's ladder" if top.elo is not None else "")
        + f"), the first player's advantage is **{pct(a.value, True)}** "
        f"{bounds(a.interval, True)} (95 %), {p_clause(a.p_value)}."
    )
    settled: list[dict[str, Any]] = []
    moves: list[str] = []
    for group in _rated_groups(found):
        low, high = group[-2], group[-1]
        judged = _judge(source.compare(ids[high.batch], ids[low.batch]), low, high)
        settled.append(judged)
        where = "" if len(found) == len(group) else f"{high.group}: "
        moves.append(
            f"{where}from `{low.level}` (Elo {_elo_text(low.elo)}) to `{high.level}` "
            f"(Elo {_elo_text(high.elo)}) it changes by {points(judged['difference'])} "
            f"[{points(judged['ci_low'])}, {points(judged['ci_high'])}]: {judged['words']}"
        )
    if moves:
        text = "; ".join(moves)
        sentences.append(text[0].upper() + text[1:] + ".")
    others = [p for p in found if p.group != top.group and p.elo == top.elo]
    if others:
        sentences.append(
            "At the same level: "
            + "; ".join(
                f"{p.group} {pct(p.advantage.value, True)} {bounds(p.advantage.interval, True)}"
                for p in others
            )
            + "."
        )
    decided = decided_data(reports[top.batch])
    if decided is not None and decided["mostly_truncated"]:
        f = decided["first_player"]
        sentences.append(
            f"{'All' if decided['truncated'] == decided['draws'] else 'Most'} of its draws "
            f"({decided['truncated']:,} of {decided['draws']:,}) are games cut "
            f"unfinished at a move limit; among the {decided['decided']:,} decided games the "
            f"first player wins {f['wins']:,.0f} ({pct(f['wins'] / decided['decided'])})."
        )
    thin = [n for n in ids if diversity(reports[n])["warning"]]
    if thin:
        sentences.append(
            f"Resting on too few distinct openings: {', '.join(f'`{n}`' for n in thin)}."
        )
    rows = []
    table = [
        "| batch | level | group | Elo | first-player advantage | 95 % interval | decided |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in found:
        dec = decided_data(reports[p.batch])
        share = "100 %" if dec is None else pct(dec["decided"] / dec["matches"])
        table.append(
            f"| {p.batch} | `{p.level}` | {p.group} | {_elo_text(p.elo)} | "
            f"{pct(p.advantage.value, True)} | {bounds(p.advantage.interval, True)} | {share} |"
        )
        rows.append(
            {
                "batch": p.batch,
                "level": p.level,
                "group": p.group,
                "elo": p.elo,
                "estimate": p.advantage.value,
                "ci_low": p.advantage.interval.low,
                "ci_high": p.advantage.interval.high,
                "decided": None if dec is None else dec["decided"] / dec["matches"],
            }
        )
    out = ["## Verdict", "", " ".join(sentences), "", *table, ""]
    rated = [r for r in rows if r["elo"] is not None]
    if rated:
        name = f"{study.name}-strength.svg"
        figures[name] = plots.to_svg(plots.advantage_by_strength(pd.DataFrame(rated)))
        out += [f"![The first player's advantage by the strength of the level played]({name})", ""]
    data = {
        "verdict": [{"text": s, "page": page} for s in sentences],
        "strength": {"rows": rows, "settled": settled, "threshold": SETTLED},
    }
    return out, data
