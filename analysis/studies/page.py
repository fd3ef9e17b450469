"""A study's page: every figure its questions ask for, with its interval and test, the plots,
the commands that reproduce it and the batches it was read from.

The figures are the batches' own reports and comparisons (``analysis.report``,
``analysis.compare``, or the same JSON from a server), formatted and nothing more: a page
never computes a figure the report does not give. The one figure made here is what no single
report can give: a family's p-values adjusted over the family (``analysis.studies.families``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from analysis.studies.context import beside, shows_compensation
from analysis.studies.definition import Question, Study
from analysis.studies.families import Adjusted, adjust
from analysis.studies.figures import entry, figure_verdicts
from analysis.studies.levels import LevelsInput, levels_section
from analysis.studies.page_text import Source, p_clause
from analysis.studies.search_page import SearchInput, search_page
from analysis.studies.series_page import series_verdict
from analysis.studies.twin import page_data, to_json
from analysis.studies.verdict import verdict_section


class LocalSource:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def report(self, batch_id: str, *, compensation: bool = True) -> dict[str, Any]:
        from analysis.report import build_report

        return build_report(self.engine, batch_id, compensation=compensation)

    def compare(self, batch_a: str, batch_b: str) -> dict[str, Any]:
        from analysis.compare import compare

        return compare(self.engine, batch_a, batch_b)


PLOT_LINK = re.compile(r"\]\(([\w.-]+\.svg)\)")
"""A page's link to one of its plots: a file name beside the page, never a path."""


@dataclass
class Page:
    """The page's Markdown, the figures it links to (file name -> SVG) and its machine-readable
    twin (:func:`page_data`)."""

    markdown: str
    figures: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)

    def write(self, folder: Path, name: str) -> Path:
        """Write ``name``.md, its twin and its plots into ``folder``, and remove the plots
        that the page it replaces linked and this one does not: a question moved to another
        number leaves no plot under its old name."""
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{name}.md"
        before = (
            set(PLOT_LINK.findall(target.read_text(encoding="utf-8")))
            if target.is_file()
            else set()
        )
        target.write_text(self.markdown, encoding="utf-8")
        (folder / f"{name}.json").write_text(to_json(self.data), encoding="utf-8")
        for plot, svg in self.figures.items():
            (folder / plot).write_text(svg, encoding="utf-8")
        for plot in sorted(before - set(self.figures)):
            (folder / plot).unlink(missing_ok=True)
        return target


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


def _not_played(q: Question, ids: Mapping[str, str]) -> str:
    missing = [n for n in q.batches if n not in ids]
    named = " and ".join(f"**{n}**" for n in missing)
    return f"Not yet played: {named} {'has' if len(missing) == 1 else 'have'} no results yet."


def _unplayed_row(study: Study, name: str) -> str:
    """A batch without results in the batches' table: what its study file asks of it."""
    keys = study.batch(name).keys
    options = ", ".join(f"{k}={v}" for k, v in sorted((keys.get("options") or {}).items()))
    agents = keys.get("agents", "")
    agents = " vs ".join(agents) if isinstance(agents, list) else str(agents)
    matches = keys.get("matches")
    planned = "–" if matches is None else f"0 of {matches:,}"
    return (
        f"| {name} | – | {keys.get('game')} | {keys.get('players', '–')} | {agents} | "
        f"{options or '–'} | {planned} | {keys.get('seed', '–')} | – | not yet played |"
    )


def _family_line(a: Adjusted) -> str:
    numbers = ", ".join(str(n) for n in a.numbers)
    return (
        f"Holm-adjusted over the {a.size} tests of family `{a.family}` (questions {numbers}): "
        f"{p_clause(a.p_holm)}."
    )


def _compensated(study: Study) -> set[str]:
    """The batches whose compensation the page can show (:func:`beside`)."""
    return {
        q.batch
        for q in study.questions
        if shows_compensation(q.batches, entry(q.figure).first_player)
    }


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
    # A study still playing may lack some batches' results: their questions say so, and the
    # figures that read several batches read those played.
    played = [name for name in names if name in ids]
    asked = replace(study, questions=tuple(q for q in study.questions if q.answered(ids)))
    komi = _compensated(asked)
    reports = {name: source.report(ids[name], compensation=name in komi) for name in played}
    comparisons = {
        (q.batch, q.against): source.compare(ids[q.batch], ids[q.against])
        for q in asked.questions
        if q.against
    }
    adjusted = adjust(study.questions, reports, comparisons)
    page = Page("")
    # A search's confirmations are questions too, numbered on from the study's own.
    searched = None if search is None else search_page(search, source, len(study.questions) + 1)
    out = [f"# {study.title}", ""]
    # The verdict, its table and its plot first: they are what fits a first screen, and the
    # question, the commands and the detail follow them. A series, where the study asks one,
    # is the verdict.
    if study.series:
        opening, judged = series_verdict(study, study.series[0], ids, reports, source,
                                         page.figures)  # fmt: skip
    else:
        opening, judged = verdict_section(
            asked, ids, reports, source, levels, page.figures, searched.data if searched else None
        )
    out += opening
    concluded, said = figure_verdicts(asked, reports, bool(opening))
    out += concluded
    if study.description:
        out += ["## The question", "", study.description, ""]
    out += ["## How to reproduce", "", "```sh", *commands, "```", ""]
    # A study whose one question is its series has asked it in the verdict.
    out += ["## Questions", ""] if study.questions else []
    for number, q in enumerate(study.questions, start=1):
        if not q.answered(ids):
            out += [f"### {number}. {q.title}", "", _not_played(q, ids), ""]
            continue
        report = reports[q.batch]
        compared = comparisons[(q.batch, q.against)] if q.against else None
        shown = entry(q.figure)
        out += [f"### {number}. {q.title}", "", *shown.text(q, report, compared)]
        if number in adjusted:
            out += ["", _family_line(adjusted[number])]
        out += beside(q.batches, reports, shown.first_player)[0]
        if shown.plot is not None:
            out += shown.plot(page.figures, study.name, number, q, report)
        out.append("")
    if searched is not None:
        out += searched.questions + searched.section
    measured: dict[str, Any] | None = None
    if levels is not None:
        lines, measured = levels_section(study, levels)
        out += lines
    listed = {**ids, **(searched.batches if searched else {})}
    listed_reports = {
        n: reports[n] if n in reports else source.report(i, compensation=False)
        for n, i in listed.items()
    }
    table = _batch_table(list(listed), listed, listed_reports)
    table += [_unplayed_row(study, n) for n in names if n not in ids]
    out += ["## Batches", "", *table, ""]
    method = reports[played[0]].get("method") or {}
    if method:
        out += ["## Methods", "", f"As the report of **{played[0]}** states them:", ""]
        out += [f"- **{name}**: {note}" for name, note in method.items()]
        out.append("")
    page.markdown = "\n".join(out).rstrip() + "\n"
    page.data = page_data(study, ids, reports, comparisons, seconds or {}, adjusted)
    page.data.update(judged)
    page.data.update(said)
    if searched is not None:
        page.data["questions"] += searched.question_data
        page.data["search"] = searched.data
    if measured is not None:
        page.data["levels"] = measured
    return page
