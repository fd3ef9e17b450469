"""The registry of study figures is whole: every figure a study file may ask for has its text,
its twin data and (where it has one) its plot, and a study asking for each of them writes a
section and a twin entry holding the report's own figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from repo_paths import REPO
from test_study_pages import run_and_report

from analysis.report import build_report
from analysis.studies.definition import Figure
from analysis.studies.estimates import Estimate, Interval
from analysis.studies.figures import FIGURES, entry
from storage.db import get_engine


def test_every_figure_has_one_registry_entry() -> None:
    assert set(FIGURES) == set(Figure)
    for figure, found in FIGURES.items():
        assert found.figure is figure and entry(figure) is found
        assert callable(found.text) and callable(found.data)
        assert found.description == figure.description


def test_a_figure_missing_from_the_registry_is_an_error_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(FIGURES, Figure.GAME_LENGTH)
    with pytest.raises(KeyError, match="game_length has no entry"):
        entry(Figure.GAME_LENGTH)


def test_the_study_files_page_lists_every_figure() -> None:
    text = (REPO / "docs" / "study-files.md").read_text()
    for figure in Figure:
        assert str(figure) in text, figure


def _every_figure_study() -> str:
    lines = [
        'title = "Every figure"',
        "[defaults]",
        'game = "alveoles"',
        "seed = 7",
        "[[batch]]",
        'name = "random"',
        'agents = "random"',
        "matches = 12",
    ]
    for figure in Figure:
        lines += ["[[question]]", f'figure = "{figure}"', 'batch = "random"']
    return "\n".join(lines) + "\n"


def test_a_study_asking_for_every_figure_shows_each_with_the_reports_figures(
    tmp_path: Path, sqlite_url: str
) -> None:
    out = run_and_report(tmp_path, sqlite_url, "every", _every_figure_study())
    data = json.loads((out / "every.json").read_text())
    page = (out / "every.md").read_text()
    report = build_report(get_engine(sqlite_url), data["batches"]["random"]["id"])
    results = {q["figure"]: q["result"] for q in data["questions"]}
    assert set(results) == {str(f) for f in Figure}
    for number, figure in enumerate(Figure, start=1):
        assert f"### {number}. {figure.description}" in page
    first = report["first_player_advantage"]
    assert results["first_player_advantage"]["estimate"] == pytest.approx(first["estimate"])
    assert len(results["seats"]["rows"]) == len(report["seats"]) == 2
    assert [r["agent"] for r in results["agents"]["rows"]] == [r["agent"] for r in report["agents"]]
    assert results["draw_rate"]["estimate"] == pytest.approx(report["shape"]["draw_rate"])
    # Plies per game: the mean of the stored matches' plies, summed apart here.
    plies = report["shape"]["plies"]
    assert results["game_length"]["mean"] == pytest.approx(plies["mean"])
    assert "mean" not in results["draw_rate"]  # no figure falls back on another's data
    assert len(results["square_values"]["rows"]) == 7


def test_an_estimate_reads_a_report_row_by_name() -> None:
    row = {"estimate": 0.25, "ci_low": 0.1, "ci_high": None, "interval": "wilson", "units": 9}
    e = Estimate.of(row)
    assert e.value == 0.25 and e.units == 9 and e.p_value is None
    assert e.interval == Interval(0.1, None, "wilson") and not e.interval.known
    assert Interval(-0.02, 0.03).holds(0.0) and not Interval(0.01, 0.03).holds(0.0)
    assert Interval(0.01, 0.03).half_width == pytest.approx(0.01)
