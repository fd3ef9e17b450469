"""The registry of study figures: for each figure a question can ask for, one entry with all a
page needs of it — what it is and which games give it (the study file's ``Figure``), its text,
its plot when it has one, and its data in the JSON twin. The page, the twin and the list of
figures derive from it, so a figure is added here or nowhere (``entry`` refuses one that is
not).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from analysis.studies import figure_data as data
from analysis.studies import perfect
from analysis.studies import sections as text
from analysis.studies.definition import Figure, Question, Study
from analysis.studies.page_text import capitalised, summary_room

Text = Callable[[Question, Mapping[str, Any], Mapping[str, Any] | None], list[str]]
"""A figure's lines on the page from the batch's report and, for a comparison, the compare."""
Data = Callable[[Question, Mapping[str, Any], Mapping[str, Any] | None], dict[str, Any]]
"""A figure's result in the twin, from the same two."""
Plot = Callable[[dict[str, str], str, int, Question, Any], list[str]]
"""A figure's plot: adds its SVG to the page's figures (file name -> SVG) under the study's
name and the question's number, and returns the lines that link it."""
Verdict = Callable[[Study, Mapping[str, Mapping[str, Any]]], tuple[list[str], list[str]]]
"""A figure's sentences for the page's verdict and the lines that follow them (a table), from
every batch's report (by batch name)."""
Summary = Callable[[Study, Mapping[str, Mapping[str, Any]], int], str | None]
"""A figure's verdict in one line of at most so many characters, for the README."""


@dataclass(frozen=True)
class FigureEntry:
    """Everything a study page does with one figure."""

    figure: Figure
    text: Text
    data: Data
    plot: Plot | None = None
    first_player: bool = False
    """Whether the figure is the first player's edge: its decided games and its compensation
    stand beside it (:func:`analysis.studies.context.beside`)."""
    verdict: Verdict | None = None
    """What a study asking the figure concludes across its batches (the first-player verdict
    reads the first-player figures alone)."""
    summary: Summary | None = None
    """The verdict's line in the README, for a study whose page opens on this figure's."""

    @property
    def description(self) -> str:
        return self.figure.description

    @property
    def games(self) -> tuple[str, ...] | None:
        """The games whose reports give the figure; None for every game."""
        return self.figure.games


FIGURES: dict[Figure, FigureEntry] = {
    e.figure: e
    for e in (
        FigureEntry(
            Figure.FIRST_PLAYER_ADVANTAGE,
            text.first_player_text,
            data.first_player_data,
            first_player=True,
        ),
        FigureEntry(Figure.SEATS, text.seats_text, data.seats_data, text.seats_plot),
        FigureEntry(Figure.AGENTS, text.agents_text, data.agents_data, text.agents_plot),
        FigureEntry(Figure.DRAW_RATE, text.draw_rate_text, data.draw_rate_data),
        FigureEntry(Figure.GAME_LENGTH, text.game_length_text, data.game_length_data),
        FigureEntry(
            Figure.SQUARE_VALUES,
            text.square_values_text,
            data.square_values_data,
            text.square_values_plot,
        ),
        FigureEntry(
            Figure.EXACT_PLAY,
            perfect.exact_text,
            perfect.exact_data,
            verdict=perfect.exact_verdict,
            summary=perfect.exact_summary,
        ),
    )
}


def entry(figure: Figure) -> FigureEntry:
    """The registry's entry of ``figure``; a figure with none is an error naming it."""
    try:
        return FIGURES[figure]
    except KeyError:
        raise KeyError(f"figure {figure!s} has no entry in analysis.studies.figures") from None


def figure_verdicts(
    study: Study, reports: Mapping[str, Mapping[str, Any]], opened: bool
) -> tuple[list[str], dict[str, Any]]:
    """The verdicts of the figures the study asks that have one: the page's lines (a "Verdict"
    section of their own unless the first-player verdict ``opened`` one) and their part of the
    twin, ``figure_verdicts`` (apart from ``verdict``), with the README's line (``summary``)
    when they open the page."""
    sentences: list[str] = []
    after: list[str] = []
    summary: str | None = None
    for figure in dict.fromkeys(q.figure for q in study.questions):
        found = FIGURES.get(figure)
        if found is not None and found.verdict is not None:
            said, shown = found.verdict(study, reports)
            sentences += said
            after += [*shown, ""] if shown else []
            if not opened and summary is None and found.summary is not None:
                summary = found.summary(study, reports, summary_room(study.title))
    if not sentences:
        return [], {}
    page = f"docs/studies/{study.name}.md"
    lines = ([] if opened else ["## Verdict", ""]) + [" ".join(sentences), "", *after]
    twin: dict[str, Any] = {"figure_verdicts": [{"text": s, "page": page} for s in sentences]}
    if summary is not None:
        twin["summary"] = capitalised(summary)
    return lines, twin
