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
from analysis.studies import sections as text
from analysis.studies.definition import Figure, Question

Text = Callable[[Question, Mapping[str, Any], Mapping[str, Any] | None], list[str]]
"""A figure's lines on the page from the batch's report and, for a comparison, the compare."""
Data = Callable[[Question, Mapping[str, Any], Mapping[str, Any] | None], dict[str, Any]]
"""A figure's result in the twin, from the same two."""
Plot = Callable[[dict[str, str], str, int, Question, Any], list[str]]
"""A figure's plot: adds its SVG to the page's figures (file name -> SVG) under the study's
name and the question's number, and returns the lines that link it."""


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
    )
}


def entry(figure: Figure) -> FigureEntry:
    """The registry's entry of ``figure``; a figure with none is an error naming it."""
    try:
        return FIGURES[figure]
    except KeyError:
        raise KeyError(f"figure {figure!s} has no entry in analysis.studies.figures") from None
