"""The sentences a study page's verdict is made of, each written from figures the reports (or
the search) give: the answer at the strongest level, whether it has settled with strength, the
other groups at that level, the strategies' scores, and what the draws are.

Each sentence is short, so the verdict, its table and its plot fit the page's first screen."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analysis.studies.estimates import Estimate, Interval
from analysis.studies.page_text import bounds, capitalised, p_clause, pct, points

SETTLED = 0.02
"""How far apart (a share: 2 points) the two strongest levels' answers may be, interval
included, for the answer to count as settled with strength."""

WORDS = {
    "settled": "**settled with strength**",
    "unsure": "**not yet shown settled**",
    "moving": "**still moving with strength**",
}
"""The three states of an answer between a group's two strongest levels."""

WHY = {
    "settled": "the difference and its whole interval lie within ±2 points",
    "unsure": "the interval holds zero but reaches beyond ±2 points",
    "moving": "the interval leaves out zero",
}
"""What each state means, under the verdict's table."""

SHORT = {"settled": "settled", "unsure": "not yet settled", "moving": "still moving"}
"""The states as the verdict's table writes them."""


@dataclass(frozen=True)
class Point:
    """One batch's first-player figure, placed by its level and its group."""

    batch: str
    level: str
    group: str
    elo: float | None
    advantage: Estimate
    mixed: bool = False
    """The batch seats different agents (its level is their list, not one strength)."""


def elo_text(value: float | None) -> str:
    return "–" if value is None else f"{value:+.0f}"


def state(iv: Interval) -> str:
    """``settled`` when the whole interval of the two strongest levels' difference lies
    within ``SETTLED`` of zero, ``unsure`` when it holds zero but reaches beyond, ``moving``
    when it leaves zero out."""
    if iv.known and (iv.low or 0) >= -SETTLED and (iv.high or 0) <= SETTLED:
        return "settled"
    return "unsure" if iv.holds(0.0) else "moving"


def _players(groups: Sequence[str]) -> str:
    """``3, 5 and 6 players`` from ``3 players``, ``5 players``, ``6 players``; the groups
    themselves, joined, where they are not all bare player counts."""
    bare = [g.removesuffix(" players") for g in groups]
    if all(b.isdigit() for b in bare):
        names, tail = bare, " players"
    else:
        names, tail = list(groups), ""
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return joined + tail


def _at(p: Point) -> str:
    if p.elo is not None:
        return f"At `{p.level}` (Elo {elo_text(p.elo)})"
    if p.mixed:
        return f"With `{p.level}` at one table"
    return f"At `{p.level}`"


def headline(top: Point, decided: float | None, alone: bool, games: int | None = None) -> str:
    """The answer at the level the verdict rests on; its group named unless it is the study's
    only one; the decided share where some games are drawn. ``games`` names the batch and its
    size, where an earlier sentence quotes another batch of the same layout."""
    group = "" if alone else f" with {top.group}"
    a = top.advantage
    at = _at(top)
    if games is not None:
        at = f"In the `{top.batch}` batch ({games:,} games) " + at[0].lower() + at[1:]
    text = (
        f"{at}, the first player's advantage{group} is **{pct(a.value, True)}** "
        f"{bounds(a.interval, True)}, {p_clause(a.p_value)}"
    )
    if decided is not None:
        text += f"; {pct(decided)} of these games are decided"
    return text + "."


def settling(judged: Sequence[Mapping[str, Any]], points_by_batch: Mapping[str, Point]) -> str:
    """Whether the answer has settled between each group's two strongest levels, the groups
    that share a state said once when they all compare the same two levels."""
    pairs = {(points_by_batch[j["weaker"]].level, points_by_batch[j["stronger"]].level)
             for j in judged}  # fmt: skip
    first = judged[0]
    low, high = points_by_batch[first["weaker"]], points_by_batch[first["stronger"]]
    span = (
        f"from `{low.level}` (Elo {elo_text(low.elo)}) to `{high.level}` (Elo {elo_text(high.elo)})"
    )
    if len(judged) == 1:
        return (
            f"{capitalised(span)} it changes by {points(first['difference'])} "
            f"[{points(first['ci_low'])}, {points(first['ci_high'])}]: {first['words']}."
        )
    if len(pairs) > 1:
        # Groups that compare different levels: each says its own.
        parts = [
            f"{j['group']} from `{points_by_batch[j['weaker']].level}` to "
            f"`{points_by_batch[j['stronger']].level}` {points(j['difference'])} "
            f"[{points(j['ci_low'])}, {points(j['ci_high'])}], {j['words']}"
            for j in judged
        ]
        return "Between its two strongest levels: " + "; ".join(parts) + "."
    clauses = []
    for key in ("moving", "unsure", "settled"):
        same = [j for j in judged if j["state"] == key]
        if not same:
            continue
        if len(same) == 1:
            j = same[0]
            figure = f" ({points(j['difference'])} [{points(j['ci_low'])}, {points(j['ci_high'])}])"
        else:
            figure = ""
        # One state for every group (never the case for a single group: handled above).
        who = (
            f"in all {len(same)} groups"
            if len(same) == len(judged)
            else (f"with {_players([j['group'] for j in same])}")
        )
        clauses.append(f"{WORDS[key]} {who}{figure}")
    text = " and ".join(clauses) if len(clauses) <= 2 else "; ".join(clauses)
    return f"{capitalised(span)} it is {text}."


def others(top: Point, found: Sequence[Point]) -> str | None:
    """The other groups at the verdict's level: those whose interval leaves zero out, with
    their figures, or that none does."""
    rest = [p for p in found if p.group != top.group and p.level == top.level]
    if not rest:
        return None
    away = [p for p in rest if p.advantage.interval.known and not p.advantage.interval.holds(0.0)]
    where = f"At `{top.level}`,"
    if not away:
        return (
            f"{where} no other group's interval leaves out an even game "
            f"({_players([p.group for p in rest])})."
        )
    listed = "; ".join(
        f"{p.group} {pct(p.advantage.value, True)} {bounds(p.advantage.interval, True)}"
        for p in away
    )
    if len(away) == len(rest):
        count = (
            "the other group leaves" if len(rest) == 1 else f"all {len(rest)} other groups leave"
        )
    else:
        count = f"{len(away)} of the {len(rest)} other groups leave"
    return f"{where} {count} out an even game: {listed}."


def truncations(decided: Mapping[str, Any]) -> str:
    f = decided["first_player"]
    return (
        f"{'All' if decided['truncated'] == decided['draws'] else 'Most'} of its draws "
        f"({decided['truncated']:,} of {decided['draws']:,}) are games cut "
        f"unfinished at a move limit; among the {decided['decided']:,} decided games the "
        f"first player wins {f['wins']:,.0f} ({pct(f['wins'] / decided['decided'])})."
    )


def _score(row: Mapping[str, Any]) -> str:
    return f"{pct(row['score'])} [{pct(row.get('ci_low'))}, {pct(row.get('ci_high'))}]"


def _placed(low: float | None, high: float | None, fair: float) -> str:
    if low is not None and low > fair:
        return "above"
    if high is not None and high < fair:
        return "below"
    return "not shown apart from"


def scores(report: Mapping[str, Any]) -> str | None:
    """Which agent of a batch scores most, against the fair share of its table: head to head
    when two meet, else the leader and the runner-up."""
    rows = sorted(report.get("agents") or [], key=lambda r: -float(r["score"]))
    if len(rows) < 2:
        return None
    fair = 1 / int(report["batch"]["players"])
    best, second = rows[0], rows[1]
    where = _placed(best.get("ci_low"), best.get("ci_high"), fair)
    if len(rows) == 2:
        return (
            f"Head to head, `{best['agent']}` takes {_score(best)} of the points against "
            f"`{second['agent']}`, {where} an even {pct(fair)}."
        )
    return (
        f"At one table of {len(rows)}, `{best['agent']}` scores most, {_score(best)}, {where} "
        f"a fair {pct(fair)}; next comes `{second['agent']}`, {_score(second)}."
    )


def search_answer(data: Mapping[str, Any]) -> str | None:
    """What a layout search's confirmations found: which of the best and the base is closer
    to an even game, with both figures."""
    verdict = data.get("verdict") or {}
    base, best = data.get("base"), data.get("best")
    if not base or not best:
        return None
    b, s = base["first_player_advantage"], best["first_player_advantage"]
    trials = data.get("trials") or []
    tried = len(trials)
    replayed = sum(1 for t in trials if t.get("reranked"))
    name = f"`{base['value']}`"
    base_text = f"{pct(b['estimate'], True)} {bounds(Interval.of(b), True)}"
    best_text = f"{pct(s['estimate'], True)} {bounds(Interval.of(s), True)}"
    if verdict.get("closer") == "base":
        return (
            f"Of {tried} layouts tried (the {replayed} best of a screen replayed at full "
            f"strength), none plays closer to an even game than {name}, confirmed at "
            f"{base_text} over {b['units']:,} games; the best found stands at {best_text}."
        )
    if verdict.get("closer") == "best":
        return (
            f"The best of the {tried} layouts tried plays closer to an even game than {name}: "
            f"{best_text} over {s['units']:,} games, against {base_text}."
        )
    return (
        f"The confirmations do not tell which plays closer to an even game: the best of the "
        f"{tried} layouts tried at {best_text}, {name} at {base_text}."
    )


def scores_summary(report: Mapping[str, Any]) -> str | None:
    """The leader of a batch's agents in one short line, against the fair share."""
    rows = sorted(report.get("agents") or [], key=lambda r: -float(r["score"]))
    if len(rows) < 2:
        return None
    fair = 1 / int(report["batch"]["players"])
    best = rows[0]
    return (
        f"`{best['agent']}` scores most of the {len(rows)} at one table, {_score(best)} "
        f"against a fair {pct(fair)}."
    )


def search_summary(data: Mapping[str, Any]) -> str | None:
    """A layout search's answer in one short line."""
    verdict = data.get("verdict") or {}
    base, best = data.get("base"), data.get("best")
    if not base or not best:
        return None
    b, s = base["first_player_advantage"], best["first_player_advantage"]
    tried = len(data.get("trials") or [])
    base_text = f"{pct(b['estimate'], True)} {bounds(Interval.of(b), True)}"
    best_text = f"{pct(s['estimate'], True)} {bounds(Interval.of(s), True)}"
    if verdict.get("closer") == "base":
        name = f"`{base['value']}`"
        return f"of {tried} layouts tried, none was confirmed fairer than {name}, {base_text}."
    if verdict.get("closer") == "best":
        return f"a layout fairer than `{base['value']}` found: {best_text}."
    return f"best layout {best_text} and `{base['value']}` {base_text} not told apart."


def first_player_summary(
    top: Point, found: Sequence[Point], judged: Sequence[Mapping[str, Any]], room: int
) -> str:
    """The first player's advantage at the level the verdict rests on and whether it has
    settled with strength; then, when the line stays within ``room`` characters, the other
    group at that level furthest from an even game (or that none leaves one out)."""
    a = top.advantage
    text = f"first player {pct(a.value, True)} {bounds(a.interval, True)} at `{top.level}`"
    if len({p.group for p in found}) > 1:
        text += f" with {top.group}"
    own = next((j for j in judged if j["group"] == top.group), None)
    if own is not None:
        text += f" ({SHORT[own['state']]} with strength)"
    rest = [p for p in found if p.group != top.group and p.level == top.level]
    away = [p for p in rest if p.advantage.interval.known
            and not p.advantage.interval.holds(0.0)]  # fmt: skip
    extra = ""
    if away:
        far = max(away, key=lambda p: abs(p.advantage.value or 0.0))
        extra = (
            f"; with {far.group} {pct(far.advantage.value, True)} "
            f"{bounds(far.advantage.interval, True)}"
        )
    elif rest:
        extra = "; no other group there leaves out an even game"
    if len(text) + len(extra) + 1 <= room:
        text += extra
    return text + "."
