"""The ``exact_play`` figure: a batch's players against the exact values of Les Alvéoles
(the report's ``game.exact`` section, ``analysis/games/alveoles_exact.py``), and the verdict
of a study that asks it of several levels: how far each level is from perfect, and whether the
strongest level's first-player margin agrees with the exact one.

Formatted from the reports, never computed: the one judgement made here is whether an
interval holds the exact value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analysis.studies.definition import Figure, Question, Study
from analysis.studies.estimates import first_player
from analysis.studies.page_text import bounds, pct

PERFECT = "perfect"
"""The level that plays from the exact values: its agreement is the check, not the finding."""
NO_EXACT = (
    "No exact values for this batch: they exist for two players, `square_bonus = none` and "
    "boards of at most 24 grooves (decision V7 of `docs/rules/alveoles.md`)."
)


def exact_of(report: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The report's exact section, or None when its game has no exact values."""
    game = report.get("game") or {}
    return game.get("exact")


def _points(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1f}"


def _board(exact: Mapping[str, Any]) -> str:
    return exact["board"].replace("x", " × ")


def agrees(exact: Mapping[str, Any]) -> bool:
    """Whether the first player's measured margin agrees with the exact one: its 95 % interval
    holds it, or, with no spread to give an interval, every game ended on it."""
    m = exact["first_player_margin"]
    if m["ci_low"] is None or m["ci_high"] is None:
        return bool(m["games_at_exact_value"] == m["games"])
    return bool(m["ci_low"] <= exact["start_value"] <= m["ci_high"])


def _margin_clause(exact: Mapping[str, Any]) -> str:
    m = exact["first_player_margin"]
    if m["ci_low"] is None:
        return f"**{_points(m['estimate'])}** in every one of its {m['games']:,} games"
    return (
        f"**{_points(m['estimate'])}** [{_points(m['ci_low'])}, {_points(m['ci_high'])}] "
        f"(95 %, {m['interval']}, {m['units']:,} units)"
    )


def _share(row: Mapping[str, Any]) -> str:
    return f"**{pct(row['share'])}** [{pct(row['ci_low'])}, {pct(row['ci_high'])}]"


def exact_text(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> list[str]:
    exact = exact_of(report)
    if exact is None:
        return [NO_EXACT]
    start = exact["start_value"]
    m = exact["first_player_margin"]
    f = first_player(report)
    lines = [
        f"On {_board(exact)} squares ({exact['board_total']:,} points on the board) the first "
        f"player can force **{start:+d}** square points. In **{q.batch}** its mean margin is "
        f"{_margin_clause(exact)}: "
        + (
            "it agrees with the exact value"
            if agrees(exact)
            else f"{abs(m['estimate'] - start):.1f} points from the exact value, outside the "
            "interval"
        )
        + f"; {m['games_at_exact_value']:,} of {m['games']:,} games ended exactly on it. The "
        f"first player's win share, less a fair half, is {pct(f.value, True)} "
        f"{bounds(f.interval, True)} against an exact "
        f"{pct(exact['exact_first_player_share'] - 0.5, True)}.",
        "",
        "| player | moves | optimal | 95 % interval | decisive positions | optimal there | "
        "95 % interval |",
        "|---|---|---|---|---|---|---|",
    ]
    decisive = {r["agent"]: r for r in exact["decisive"]}
    for row in exact["optimal_moves"]:
        d = decisive[row["agent"]]
        lines.append(
            f"| {row['agent']} | {row['moves']:,} | {pct(row['share'])} | "
            f"[{pct(row['ci_low'])}, {pct(row['ci_high'])}] | {d['moves']:,} | "
            f"{pct(d['share'])} | [{pct(d['ci_low'])}, {pct(d['ci_high'])}] |"
        )
    lines += [
        "",
        f"Shares of moves: {exact['optimal_moves'][0]['interval']}, over "
        f"{exact['optimal_moves'][0]['units']:,} units of sampling (games), each game's moves "
        "counted together. A decisive position is one whose moves do not all have one value.",
    ]
    return lines


def exact_data(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> dict[str, Any]:
    exact = exact_of(report)
    if exact is None:
        return {}
    keep = ("start_value", "board", "board_total", "exact_first_player_share")
    out: dict[str, Any] = {k: exact[k] for k in keep}
    out["first_player_margin"] = dict(exact["first_player_margin"])
    out["agrees"] = agrees(exact)
    out["optimal_moves"] = [dict(r) for r in exact["optimal_moves"]]
    out["decisive"] = [dict(r) for r in exact["decisive"]]
    return out


def _level(report: Mapping[str, Any]) -> str:
    """A self-play batch's level (its one player), else its players."""
    return ", ".join(r["agent"] for r in (exact_of(report) or {}).get("optimal_moves", []))


def _boards(study: Study, reports: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """The batches asked for ``exact_play`` with exact values, by board, in the study's order."""
    boards: dict[str, list[str]] = {}
    for q in study.questions:
        exact = exact_of(reports[q.batch])
        if q.figure is Figure.EXACT_PLAY and exact is not None:
            names = boards.setdefault(exact["board"], [])
            if q.batch not in names:
                names.append(q.batch)
    return boards


def _margin(m: Mapping[str, Any]) -> str:
    """A margin with its interval, or the one value every game ended on."""
    if m["ci_low"] is None:
        return f"{_points(m['estimate'])} (every game)"
    return f"{_points(m['estimate'])} [{_points(m['ci_low'])}, {_points(m['ci_high'])}]"


def _row(name: str, report: Mapping[str, Any], exact: Mapping[str, Any]) -> str:
    moves, decisive = exact["optimal_moves"][0], exact["decisive"][0]
    margin = _margin(exact["first_player_margin"])
    return (
        f"| {_board(exact)} | {exact['start_value']:+d} | `{_level(report)}` | "
        f"{moves['moves']:,} | {pct(moves['share'])} [{pct(moves['ci_low'])}, "
        f"{pct(moves['ci_high'])}] | {pct(decisive['share'])} [{pct(decisive['ci_low'])}, "
        f"{pct(decisive['ci_high'])}] | {margin} | {'yes' if agrees(exact) else 'no'} |"
    )


def _strongest(
    study: Study, reports: Mapping[str, Mapping[str, Any]]
) -> list[tuple[str, Mapping[str, Any]]]:
    """Per solved board, the strongest level asked (the last that is not ``perfect``) and its
    exact section."""
    tops = []
    for names in _boards(study, reports).values():
        searched = [n for n in names if _level(reports[n]) != PERFECT]
        if searched:
            top = reports[searched[-1]]
            tops.append((_level(top), exact_of(top) or {}))
    return tops


def _overall(tops: list[tuple[str, Mapping[str, Any]]]) -> tuple[str, str]:
    """Over every solved board, from the strongest level played on each (``_strongest``): the
    range of its shares of optimal moves with their intervals, and on how many boards its first
    player's margin agrees with the exact value; two clauses of one sentence."""
    levels = list(dict.fromkeys(level for level, _ in tops))
    who = f"`{levels[0]}`" if len(levels) == 1 else "the strongest level played on each"
    rows = sorted((e["optimal_moves"][0] for _, e in tops), key=lambda r: r["share"])
    low, high = rows[0], rows[-1]
    shares = f"{pct(low['share'])} [{pct(low['ci_low'])}, {pct(low['ci_high'])}]"
    if high is not low:
        shares += f" to {pct(high['share'])} [{pct(high['ci_low'])}, {pct(high['ci_high'])}]"
    boards = f"{len(tops)} solved board{'s' if len(tops) > 1 else ''}"
    agreed = sum(agrees(e) for _, e in tops)
    if len(tops) == 1:
        said = "agrees with the exact value" if agreed else "does not agree with the exact value"
    else:
        where = {0: "none of them", len(tops): f"all {len(tops)}"}.get(
            agreed, f"{agreed} of the {len(tops)}"
        )
        said = f"agrees with the exact value on {where}"
    return (
        f"On {boards}, {who} makes the optimal move in {shares} of its moves",
        f"its first player's margin {said}",
    )


def exact_summary(study: Study, reports: Mapping[str, Mapping[str, Any]], room: int) -> str | None:
    """The verdict in one line of at most ``room`` characters as read (the README's): its
    opening sentence, without the margin's clause when the whole does not fit."""
    tops = _strongest(study, reports)
    if not tops:
        return None
    shares, margin = _overall(tops)
    whole = f"{shares}, and {margin}."
    return whole if len(whole.replace("`", "")) <= room else f"{shares}."


def exact_verdict(
    study: Study, reports: Mapping[str, Mapping[str, Any]]
) -> tuple[list[str], list[str]]:
    """The verdict's sentences and its table: over every board, how often the strongest level
    played moves perfectly; then per board, how far each level's moves are from perfect (its
    share of optimal moves), and whether the strongest level's first-player margin (the last
    level asked that is not ``perfect``) agrees with the exact value; ``perfect``'s own
    agreement is the check beneath the table."""
    sentences: list[str] = []
    table = [
        "| board | exact start value | level | moves | optimal moves [95 %] | optimal at "
        "decisive positions [95 %] | first player's margin [95 %] | agrees |",
        "|---|---|---|---|---|---|---|---|",
    ]
    checks: list[str] = []
    for names in _boards(study, reports).values():
        exacts = {n: exact_of(reports[n]) or {} for n in names}
        table += [_row(n, reports[n], exacts[n]) for n in names]
        searched = [n for n in names if _level(reports[n]) != PERFECT]
        board = exacts[names[0]]
        if searched:
            low, top = searched[0], searched[-1]
            e = exacts[top]
            m = e["first_player_margin"]
            verdict = (
                "**agrees** with the exact value"
                if agrees(e)
                else f"**does not agree** with the exact value, "
                f"{abs(m['estimate'] - e['start_value']):.1f} points away"
            )
            sentences.append(
                f"On {_board(board)} squares, where the first player can force "
                f"**{board['start_value']:+d}** square points, the share of optimal moves goes "
                f"from {pct(exacts[low]['optimal_moves'][0]['share'])} at "
                f"`{_level(reports[low])}` to **{pct(e['optimal_moves'][0]['share'])}** at "
                f"`{_level(reports[top])}`, whose first player's margin, {_margin(m)}, "
                f"{verdict}."
            )
        for n in names:
            if _level(reports[n]) == PERFECT:
                m = exacts[n]["first_player_margin"]
                checks.append(f"{m['games_at_exact_value']:,} of {m['games']:,} on {_board(board)}")
    tops = _strongest(study, reports)
    if tops:
        shares, margin = _overall(tops)
        sentences.insert(0, f"{shares}, and {margin}.")
    if checks:
        sentences.append(
            "`perfect` self-play, the check, ends its games on the exact margin: "
            + "; ".join(checks)
            + "."
        )
    return sentences, table
