"""The text and plots of each study figure as a page shows it, from a batch's report (or a
comparison of two): formatted, never computed. Which figure uses which is
:mod:`analysis.studies.figures`'s registry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from analysis import plots
from analysis.formatting import balance_note, shown_effective_n
from analysis.studies.definition import Question
from analysis.studies.estimates import compared_first_player, first_player
from analysis.studies.page_text import bounds, interval, p_clause, p_text, pct, points


def first_player_text(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> list[str]:
    if compared is not None:
        d = compared["first_player_advantage"]
        diff = compared_first_player(compared)
        return [
            f"First-player advantage, **{q.batch}** {pct(d['a'], True)} against "
            f"**{q.against}** {pct(d['b'], True)}: difference **{pct(diff.value, True)}** "
            f"{bounds(diff.interval, True)} (95 %, {diff.interval.method}), "
            f"{p_clause(diff.p_value)} ({diff.test}).",
        ]
    f = first_player(report)
    block = report.get("independence") or {}
    matches, design_effect = block.get("matches"), block.get("design_effect")
    return [
        f"First-player advantage in **{q.batch}**: **{pct(f.value, True)}** "
        f"{bounds(f.interval, True)} (95 %, {f.interval.method}), {p_clause(f.p_value)}; "
        f"{f.units or 0:,} units of sampling, effective sample "
        f"{shown_effective_n(f.effective_n or 0, matches):.1f}"
        f"{balance_note(f.effective_n, matches, design_effect)}; measured at {f.by}.",
    ]


def seats_text(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> list[str]:
    if compared is not None:
        lines = [
            f"| seat | {q.batch} | {q.against} | difference | 95 % interval | p (Holm) |",
            "|---|---|---|---|---|---|",
        ]
        for row in compared["seats"]:
            lines.append(
                f"| {row['seat']} | {pct(row['a'])} | {pct(row['b'])} | "
                f"{pct(row['difference'], True)} | {interval(row, True)} | "
                f"{p_text(row['p_holm'])} |"
            )
        return [*lines, "", f"Intervals: {compared['seats'][0]['interval']}."]
    positions = report.get("turn_positions")
    seat_lines = _balance_table(report["seats"], "seat")
    note = f"Intervals: {report['seats'][0]['interval']}; test: {report['seats'][0]['test']}."
    if not positions:
        return [*seat_lines, "", note]
    # The game draws who starts, so seat 0 is not the first player: the order of play is
    # read by turn position, and the seats are shown apart, labelled.
    return [
        "The game draws who starts, so the order of play is read by **turn position** "
        "(0 moved first):",
        "",
        *_balance_table(positions, "position"),
        "",
        "By **seat**, whatever the turn position (not an order of play):",
        "",
        *seat_lines,
        "",
        note,
    ]


def _balance_table(rows: list[Mapping[str, Any]], label: str) -> list[str]:
    name = "turn position" if label == "position" else "seat"
    lines = [
        f"| {name} | games | win share | 95 % interval | fair share | p (Holm) |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row[label]} | {row['games']:,} | {pct(row['win_share'])} | {interval(row)} | "
            f"{pct(row['expected'])} | {p_text(row['p_holm'])} |"
        )
    return lines


def agents_text(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> list[str]:
    lines = [
        "| agent | games | score | 95 % interval | Elo | Elo 95 % interval |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["agents"]:
        elo = "–" if row.get("elo") is None else f"{row['elo']:+.0f}"
        elo_ci = (
            "–"
            if row.get("elo_low") is None
            else f"[{row['elo_low']:+.0f}, {row['elo_high']:+.0f}]"
        )
        lines.append(
            f"| {row['agent']} | {row['games']:,} | {pct(row['score'])} | {interval(row)} | "
            f"{elo} | {elo_ci} |"
        )
    return (
        [*lines, "", f"Intervals: {report['agents'][0]['interval']}."]
        if report["agents"]
        else lines
    )


def draw_rate_text(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> list[str]:
    s = report["shape"]
    row = {"ci_low": s.get("draw_rate_ci_low"), "ci_high": s.get("draw_rate_ci_high")}
    return [
        f"Drawn games in **{q.batch}**: **{pct(s['draw_rate'])}** {interval(row)} (95 %); "
        f"decided: {pct(1 - s['draw_rate'])}."
    ]


def game_length_text(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> list[str]:
    plies = report["shape"]["plies"]
    return [
        f"Plies per game in **{q.batch}**: mean {plies['mean']:.1f}, median {plies['median']:.0f}, "
        f"10th–90th percentile {plies['p10']:.0f}–{plies['p90']:.0f}."
    ]


def square_values_text(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> list[str]:
    rows = report["game"]["deciding_tiers"]
    lines = [
        "| square value | winners − losers (percentage points of those squares) | 95 % interval "
        "| p (Holm) "
        "| units |",
        "|---|---|---|---|---|",
    ]
    for row in sorted(rows, key=lambda r: -r["tier"]):
        lines.append(
            f"| {row['tier']} | {points(row['difference'])} | "
            f"[{points(row.get('ci_low'))}, {points(row.get('ci_high'))}] | "
            f"{p_text(row['p_holm'])} | {row['units']:,} |"
        )
    return [
        f"How much each kind of square separates the winners of **{q.batch}** from the losers: "
        "the winners' mean share of the squares of that value minus the losers' (a seat that "
        "shares the win counts as a winner). Intervals are clustered by unit of sampling; "
        "p-values are Holm-adjusted over the values.",
        "",
        *lines,
    ]


def square_values_plot(
    figures: dict[str, str], study: str, number: int, q: Question, report: Any
) -> list[str]:
    name = f"{study}-{number}-square-values.svg"
    rows = pd.DataFrame(report["game"]["deciding_tiers"])
    figures[name] = plots.to_svg(plots.deciding_tiers(rows))
    return ["", f"![Square values that separate winners from losers in {q.batch}]({name})"]


def seats_plot(
    figures: dict[str, str], study: str, number: int, q: Question, report: Any
) -> list[str]:
    name = f"{study}-{number}-seats.svg"
    positions = report.get("turn_positions")
    if positions:
        ax = plots.seat_shares(pd.DataFrame(positions), label="position")
        figures[name] = plots.to_svg(ax)
        return ["", f"![Turn-position balance of {q.batch}]({name})"]
    figures[name] = plots.to_svg(plots.seat_shares(pd.DataFrame(report["seats"])))
    return ["", f"![Seat balance of {q.batch}]({name})"]


def agents_plot(
    figures: dict[str, str], study: str, number: int, q: Question, report: Any
) -> list[str]:
    name = f"{study}-{number}-agents.svg"
    figures[name] = plots.to_svg(plots.agent_scores(pd.DataFrame(report["agents"])))
    return ["", f"![Agent scores in {q.batch}]({name})"]
