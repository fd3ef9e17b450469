"""A study's page: every figure its questions ask for, with its interval and test, the plots,
the commands that reproduce it and the batches it was read from.

The figures are the batches' own reports and comparisons (``analysis.report``,
``analysis.compare``, or the same JSON from a server), formatted and nothing more: a page
never computes a figure the report does not give. The one figure made here is what no single
report can give: a family's p-values adjusted over the family (``analysis.studies.families``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from sqlalchemy import Engine

from analysis import plots
from analysis.studies.definition import Figure, Question, Study
from analysis.studies.families import Adjusted, adjust
from analysis.studies.levels import LevelsInput, levels_section
from analysis.studies.page_text import Source, interval, p_clause, p_text, pct
from analysis.studies.search_page import SearchInput, search_page
from analysis.studies.twin import page_data


class LocalSource:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def report(self, batch_id: str) -> dict[str, Any]:
        from analysis.report import build_report

        return build_report(self.engine, batch_id)

    def compare(self, batch_a: str, batch_b: str) -> dict[str, Any]:
        from analysis.compare import compare

        return compare(self.engine, batch_a, batch_b)


@dataclass
class Page:
    """The page's Markdown, the figures it links to (file name -> SVG) and its machine-readable
    twin (:func:`page_data`)."""

    markdown: str
    figures: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)


def _batch_table(
    names: Sequence[str], ids: Mapping[str, str], reports: Mapping[str, Any]
) -> list[str]:
    lines = [
        "| batch | id | game | players | agents | options | matches | seed | variation | status |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        b = reports[name]["batch"]
        options = ", ".join(f"{k}={v}" for k, v in sorted((b.get("options") or {}).items()))
        variation = b.get("variation") or {}
        varied = ", ".join(f"{k}={v}" for k, v in variation.items() if k != "default") or "none"
        lines.append(
            f"| {name} | `{ids[name]}` | {b['game']} | {b['players']} | "
            f"{' vs '.join(b['labels'])} | {options or '–'} | {b['matches_done']:,} of "
            f"{b['matches']:,} | {b['seed']} | {varied} | {b['status']} |"
        )
    return lines


def _first_player(
    q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> list[str]:
    if compared is not None:
        d = compared["first_player_advantage"]
        return [
            f"First-player advantage, **{q.batch}** {pct(d['a'], True)} against "
            f"**{q.against}** {pct(d['b'], True)}: difference **{pct(d['difference'], True)}** "
            f"{interval(d, True)} (95 %, {d['interval']}), {p_clause(d['p_value'])} "
            f"({d['test']}).",
        ]
    f = report["first_player_advantage"]
    return [
        f"First-player advantage in **{q.batch}**: **{pct(f['estimate'], True)}** "
        f"{interval(f, True)} (95 %, {f['interval']}), {p_clause(f['p_value'])}; "
        f"{f['units']:,} units of sampling, effective sample {f['effective_n']:.1f}; "
        f"measured at {f['by']}.",
    ]


def _seats(q: Question, report: Mapping[str, Any], compared: Mapping[str, Any] | None) -> list[str]:
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
    lines = [
        "| seat | games | win share | 95 % interval | fair share | p (Holm) |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["seats"]:
        lines.append(
            f"| {row['seat']} | {row['games']:,} | {pct(row['win_share'])} | {interval(row)} | "
            f"{pct(row['expected'])} | {p_text(row['p_holm'])} |"
        )
    return [
        *lines,
        "",
        f"Intervals: {report['seats'][0]['interval']}; test: {report['seats'][0]['test']}.",
    ]


def _agents(report: Mapping[str, Any]) -> list[str]:
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


def _draw_rate(q: Question, report: Mapping[str, Any]) -> list[str]:
    s = report["shape"]
    row = {"ci_low": s.get("draw_rate_ci_low"), "ci_high": s.get("draw_rate_ci_high")}
    return [
        f"Drawn games in **{q.batch}**: **{pct(s['draw_rate'])}** {interval(row)} (95 %); "
        f"decided: {pct(1 - s['draw_rate'])}."
    ]


def _game_length(q: Question, report: Mapping[str, Any]) -> list[str]:
    plies = report["shape"]["plies"]
    return [
        f"Plies per game in **{q.batch}**: mean {plies['mean']:.1f}, median {plies['median']:.0f}, "
        f"10th–90th percentile {plies['p10']:.0f}–{plies['p90']:.0f}."
    ]


def _square_values(q: Question, report: Mapping[str, Any]) -> list[str]:
    rows = report["game"]["deciding_tiers"]
    lines = [
        "| square value | winners − losers (share of those squares) | 95 % interval | p (Holm) "
        "| units |",
        "|---|---|---|---|---|",
    ]
    for row in sorted(rows, key=lambda r: -r["tier"]):
        lines.append(
            f"| {row['tier']} | {pct(row['difference'], True)} | {interval(row, True)} | "
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


def _square_values_figure(
    page: Page, study: Study, number: int, q: Question, report: Any
) -> list[str]:
    name = f"{study.name}-{number}-square-values.svg"
    rows = pd.DataFrame(report["game"]["deciding_tiers"])
    page.figures[name] = plots.to_svg(plots.deciding_tiers(rows))
    return ["", f"![Square values that separate winners from losers in {q.batch}]({name})"]


def _seats_figure(page: Page, study: Study, number: int, q: Question, report: Any) -> list[str]:
    name = f"{study.name}-{number}-seats.svg"
    page.figures[name] = plots.to_svg(plots.seat_shares(pd.DataFrame(report["seats"])))
    return ["", f"![Seat balance of {q.batch}]({name})"]


def _agents_figure(page: Page, study: Study, number: int, q: Question, report: Any) -> list[str]:
    name = f"{study.name}-{number}-agents.svg"
    page.figures[name] = plots.to_svg(plots.agent_scores(pd.DataFrame(report["agents"])))
    return ["", f"![Agent scores in {q.batch}]({name})"]


def _family_line(a: Adjusted) -> str:
    numbers = ", ".join(str(n) for n in a.numbers)
    return (
        f"Holm-adjusted over the {a.size} tests of family `{a.family}` (questions {numbers}): "
        f"{p_clause(a.p_holm)}."
    )


Text = Callable[[Question, Mapping[str, Any], Mapping[str, Any] | None], list[str]]
Plot = Callable[[Page, Study, int, Question, Any], list[str]]
SECTIONS: dict[Figure, tuple[Text, Plot | None]] = {
    Figure.FIRST_PLAYER_ADVANTAGE: (_first_player, None),
    Figure.SEATS: (_seats, _seats_figure),
    Figure.AGENTS: (lambda _q, report, _c: _agents(report), _agents_figure),
    Figure.DRAW_RATE: (lambda q, report, _c: _draw_rate(q, report), None),
    Figure.GAME_LENGTH: (lambda q, report, _c: _game_length(q, report), None),
    Figure.SQUARE_VALUES: (lambda q, report, _c: _square_values(q, report), _square_values_figure),
}
"""Each figure's text on the page, and its plot when it has one."""


def render_page(
    study: Study,
    ids: Mapping[str, str],
    source: Source,
    commands: Sequence[str],
    seconds: Mapping[str, float] | None = None,
    search: SearchInput | None = None,
    levels: LevelsInput | None = None,
) -> Page:
    """The study's page from its stored batches (``ids``: study batch name -> batch id;
    ``seconds``: each batch's summed playing time, where it is known), with the section of
    its ``[tune]`` search when ``search`` is given and the strength and CPU time of its
    levels when the game's ladder (``levels``) is."""
    names = [b.name for b in study.batches]
    reports = {name: source.report(ids[name]) for name in names}
    comparisons = {
        (q.batch, q.against): source.compare(ids[q.batch], ids[q.against])
        for q in study.questions
        if q.against
    }
    adjusted = adjust(study.questions, reports, comparisons)
    page = Page("")
    out = [f"# {study.title}", ""]
    if study.description:
        out += [study.description, ""]
    out += ["## How to reproduce", "", "```sh", *commands, "```", ""]
    out += ["## Questions", ""]
    for number, q in enumerate(study.questions, start=1):
        report = reports[q.batch]
        compared = comparisons[(q.batch, q.against)] if q.against else None
        text, plot = SECTIONS[q.figure]
        out += [f"### {number}. {q.title}", "", *text(q, report, compared)]
        if number in adjusted:
            out += ["", _family_line(adjusted[number])]
        if plot is not None:
            out += plot(page, study, number, q, report)
        out.append("")
    # A search's confirmations are questions too, numbered on from the study's own.
    searched = None if search is None else search_page(search, source, len(study.questions) + 1)
    if searched is not None:
        out += searched.questions + searched.section
    measured: dict[str, Any] | None = None
    if levels is not None:
        lines, measured = levels_section(study, levels)
        out += lines
    listed = {**ids, **(searched.batches if searched else {})}
    listed_reports = {
        n: reports[n] if n in reports else source.report(i) for n, i in listed.items()
    }
    out += ["## Batches", "", *_batch_table(list(listed), listed, listed_reports), ""]
    method = reports[names[0]].get("method") or {}
    if method:
        out += ["## Methods", "", f"As the report of **{names[0]}** states them:", ""]
        out += [f"- **{name}**: {note}" for name, note in method.items()]
        out.append("")
    page.markdown = "\n".join(out).rstrip() + "\n"
    page.data = page_data(study, ids, reports, comparisons, seconds or {}, adjusted)
    if searched is not None:
        page.data["questions"] += searched.question_data
        page.data["search"] = searched.data
    if measured is not None:
        page.data["levels"] = measured
    return page
