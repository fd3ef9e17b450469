"""A study page's opening: its verdict in a few short sentences and one table, then the first
player's advantage against the strength of the level played, all on the page's first screen.

Every figure is a report's: each batch's first-player advantage, its decided games, its
diversity, the agents' scores, and the comparison of each group's two strongest levels, which
says whether the answer has **settled with strength**: the difference and its whole 95 %
interval within ``SETTLED`` of zero. The Elo of a level is the game's strength ladder's
(``analysis.studies.levels``). The sentences are :mod:`analysis.studies.verdict_text`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from analysis import plots
from analysis.studies import verdict_text as say
from analysis.studies.context import decided_data, diversity
from analysis.studies.definition import Figure, Study
from analysis.studies.estimates import compared_first_player, first_player
from analysis.studies.levels import LevelsInput
from analysis.studies.page_text import Source, bounds, capitalised, pct, summary_room
from analysis.studies.verdict_text import SETTLED, Point

THIN_NAMED = 3
"""Batches resting on too few distinct openings that the verdict names; past it, it counts them."""

DRAWN_SAID = 0.9
"""The verdict says what share of the games are decided below this share."""

STRENGTH_SIZE = (6.4, 2.0)
"""The strength plot's size in inches: at the docs site's 1280-pixel width it is drawn about
700 pixels wide, and this height leaves it on the first screen under the verdict's table."""


def _level(study: Study, name: str) -> tuple[str, bool]:
    """The batch's one level when it is self-play of one agent spec, else its agents (and
    that it is a mixed table)."""
    specs = [s.strip() for s in str(study.batch(name).keys.get("agents", "")).split(",")]
    mixed = len(set(specs)) > 1
    return (", ".join(specs) if mixed else specs[0]), mixed


def _groups(study: Study, reports: Mapping[str, Any], names: list[str]) -> dict[str, str]:
    """Each batch's group: its player count where it differs in the study (or nothing else
    does), and its options where they differ."""
    options = {n: reports[n]["batch"].get("options") or {} for n in names}
    varying = sorted({k for o in options.values() for k, v in o.items()
                      if any(p.get(k) != v for p in options.values())})  # fmt: skip
    counts = {reports[n]["batch"]["players"] for n in names}
    out = {}
    for n in names:
        label = f"{reports[n]['batch']['players']} players"
        extra = ", ".join(_option(k, options[n].get(k)) for k in varying)
        if not extra:
            out[n] = label
        else:
            out[n] = f"{label}, {extra}" if len(counts) > 1 else extra
    return out


def _option(key: str, value: Any) -> str:
    """An option as a group's label gives it: a named value by its name alone (a layout's
    ``belgian_daisy``), a number or a flag with its key."""
    text = str(value)
    named = isinstance(value, str) and any(c.isalpha() for c in text)
    return text if named else f"{key}={text}"


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
    found = []
    for n in names:
        level, mixed = _level(study, n)
        rated = None if mixed else elo.get(level)
        found.append(Point(n, level, groups[n], rated, first_player(reports[n]), mixed))
    return found


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
    key = say.state(iv)
    return {
        "group": high.group,
        "stronger": high.batch,
        "weaker": low.batch,
        "difference": d.value,
        "ci_low": iv.low,
        "ci_high": iv.high,
        "settled": key == "settled",
        "state": key,
        "words": say.WORDS[key],
    }


def _main_line(found: list[Point]) -> list[Point]:
    """The group with the most rated levels, strongest last."""
    groups = _rated_groups(found) or [[p] for p in found if p.elo is not None]
    if not groups:
        return []
    return max(groups, key=len)


def _columns(found: list[Point]) -> list[Point]:
    """One point per level, in the study's order with the mixed tables last: the table's
    columns."""
    seen: dict[str, Point] = {}
    for p in sorted(found, key=lambda p: p.mixed):
        seen.setdefault(p.level, p)
    return list(seen.values())


def _table(found: list[Point], judged: list[dict[str, Any]]) -> list[str]:
    """The answer as one table: a row per group, a column per level played (weakest first),
    and where the group's two strongest levels leave the answer."""
    columns = _columns(found)
    heads = [
        f"`{c.level}` (Elo {say.elo_text(c.elo)})" if c.elo is not None else f"`{c.level}`"
        for c in columns
    ]
    states = {j["group"]: say.SHORT[j["state"]] for j in judged}
    heads = ["first player's edge [95 %]", *heads] + (["with strength"] if judged else [])
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for group in dict.fromkeys(p.group for p in found):
        cells = []
        for c in columns:
            p = next((p for p in found if p.group == group and p.level == c.level), None)
            cells.append("–" if p is None else _cell(p))
        tail = [states.get(group, "–")] if judged else []
        lines.append("| " + " | ".join([group, *cells, *tail]) + " |")
    return lines


def _cell(p: Point) -> str:
    """``+6.2 % [+3.0, +9.5]``: the interval's ends without their ``%``, so a cell keeps to
    one line."""
    a = p.advantage
    return f"{pct(a.value, True)} {bounds(a.interval, True).replace(' %', '')}"


def verdict_section(
    study: Study,
    ids: Mapping[str, str],
    reports: Mapping[str, Any],
    source: Source,
    levels: LevelsInput | None,
    figures: dict[str, str],
    search: Mapping[str, Any] | None = None,
) -> tuple[list[str], dict[str, Any]]:
    """The page's "Verdict" section (adding its plot to ``figures``) and its part of the twin:
    ``verdict`` (the sentences, each with its page), ``summary`` (its one line in the README)
    and ``strength`` (the table's rows and whether the answer has settled). ``search`` is a
    layout search's twin data, whose confirmations answer the study's question first."""
    found = first_player_points(study, reports, levels)
    if not found:
        return [], {}
    page = f"docs/studies/{study.name}.md"
    line = _main_line(found)
    top = line[-1] if line else found[-1]
    by_batch = {p.batch: p for p in found}
    judged: list[dict[str, Any]] = []
    for group in _rated_groups(found):
        low, high = group[-2], group[-1]
        judged.append(_judge(source.compare(ids[high.batch], ids[low.batch]), low, high))
    decided = decided_data(reports[top.batch])
    share = None if decided is None else decided["decided"] / decided["matches"]
    # Said where a tenth or more of the games are drawn; the table's detail gives every share.
    share = share if share is not None and share < DRAWN_SAID else None
    alone = len({p.group for p in found}) == 1
    # A search's confirmations come first and quote larger batches: this one is named.
    games = diversity(reports[top.batch])["matches"] if search is not None else None
    answer = say.headline(top, share, alone, games)
    lead: list[str] = []
    if search is not None:
        searched = say.search_answer(search)
        lead += [searched] if searched else []
    agents = [q for q in study.questions if q.figure == Figure.AGENTS and not q.against]
    strategies = [s for q in agents[:2] if (s := say.scores(reports[q.batch])) is not None]
    by_agents = bool(study.questions) and study.questions[0].figure == Figure.AGENTS
    sentences = lead + (strategies if by_agents else []) + [answer]
    if judged:
        sentences.append(say.settling(judged, by_batch))
    rest = say.others(top, found)
    if rest is not None:
        sentences.append(rest)
    if decided is not None and decided["mostly_truncated"]:
        sentences.append(say.truncations(decided))
    if not by_agents:
        sentences += strategies[:1]
    thin = [n for n in ids if diversity(reports[n])["warning"]]
    if len(thin) > THIN_NAMED:
        # Named one by one they would push the table and plot off the first screen; each
        # figure below carries its own warning.
        sentences.append(
            f"{len(thin)} of its {len(ids)} batches rest on too few distinct openings "
            "(each figure below is marked)."
        )
    elif thin:
        sentences.append(
            f"Resting on too few distinct openings: {', '.join(f'`{n}`' for n in thin)}."
        )
    rows = []
    for p in found:
        dec = decided_data(reports[p.batch])
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
    out = ["## Verdict", "", " ".join(sentences), "", *_table(found, judged), ""]
    rated = [r for r in rows if r["elo"] is not None]
    if rated:
        name = f"{study.name}-strength.svg"
        drawn = plots.advantage_by_strength(pd.DataFrame(rated), size=STRENGTH_SIZE)
        figures[name] = plots.to_svg(drawn)
        out += [f"![The first player's advantage by the strength of the level played]({name})", ""]
    if judged:
        out += [
            f"*With strength* compares each group's two strongest levels' difference: settled "
            f"when {say.WHY['settled']}, still moving when {say.WHY['moving']}, not yet "
            f"settled when {say.WHY['unsure']}.",
            "",
        ]
    data = {
        "verdict": [{"text": s, "page": page} for s in sentences],
        "summary": _summary(
            study.title, search, reports, agents[0].batch if by_agents else None, top, found, judged
        ),
        "strength": {"rows": rows, "settled": judged, "threshold": SETTLED},
    }
    return out, data


def _summary(
    title: str,
    search: Mapping[str, Any] | None,
    reports: Mapping[str, Any],
    by_agents: str | None,
    top: Point,
    found: list[Point],
    judged: list[dict[str, Any]],
) -> str:
    """The verdict in one short line for the README: a search's answer, or the leading
    strategy's (``by_agents``: its batch), else the first player's advantage."""
    text = None
    if search is not None:
        text = say.search_summary(search)
    elif by_agents is not None:
        text = say.scores_summary(reports[by_agents])
    if text is None:
        text = say.first_player_summary(top, found, judged, summary_room(title))
    return capitalised(text)
