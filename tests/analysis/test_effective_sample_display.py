"""The effective sample as shown never exceeds the matches: where seat-swapped rounds balance
each other (design effect below 1) matches / design effect passes the matches, and the faces
show the matches and say that the balance narrows the interval, leaving every interval as it is.

Expected values: the design effect from the stored rows by hand (the CR1 variance over the
pairs against the independent one), never from the analysis under test.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from analysis_data import store_batch

from analysis.formatting import balance_note, independence_line, shown_effective_n
from analysis.render_html import render_html
from analysis.report import build_report
from analysis.studies.definition import Figure, Question
from analysis.studies.sections import first_player_text
from api.cli_tables import seat_table

WIN, LOSS = ((1.0, 0.0), (1.0, 0.0)), ((0.0, 1.0), (0.0, 1.0))


def test_a_balanced_design_shows_its_matches_and_its_design_effect(
    migrated_sqlite_url: str,
) -> None:
    # Twenty seat-swapped pairs (rotate): in eighteen the starting player wins one game and
    # loses the other, in two it wins both. The pairs balance: a design effect well below 1.
    outcomes = [WIN, LOSS] * 18 + [WIN, WIN] * 2
    engine, batch_id = store_batch(
        migrated_sqlite_url, game="alveoles", players=2, labels=["a", "b"], outcomes=outcomes,
        seat_policy="rotate", openings=lambda i: 100 + i // 2,
        moves=lambda i: (f"m{i}",),
    )  # fmt: skip
    report = build_report(engine, batch_id)
    block = report["independence"]
    # By hand: p = 22 / 40; pair totals 1 (eighteen) and 2 (two).
    y = np.array([1.0, 0.0] * 18 + [1.0, 1.0] * 2)
    p = y.mean()
    totals = y.reshape(20, 2).sum(axis=1)
    cr1 = 20 / 19 * float(((totals - 2 * p) ** 2).sum()) / 40**2
    independent = float(y.var(ddof=1)) / 40
    assert block["units"] == 20
    assert block["design_effect"] == pytest.approx(cr1 / independent)
    assert block["effective_n"] == pytest.approx(40 * independent / cr1)
    assert block["effective_n"] > 200  # the figure that read "effective sample 214.4" of 40
    line = independence_line(block)
    deff = f"{cr1 / independent:.2f}"
    assert (
        "effective sample 40.0 (every match; the seating's balance narrows the interval "
        f"further: design effect {deff})"
    ) in line
    shown = [float(x.replace(",", "")) for x in re.findall(r"effective sample ([\d,.]+)", line)]
    assert shown == [40.0]
    assert line in str(seat_table(report).caption)
    assert "effective sample 40.0 (every match" in render_html(report)
    question = Question("Who gains?", Figure("first_player_advantage"), "b", None, 1)
    page = first_player_text(question, report, None)[0]
    assert "effective sample 40.0 (every match; the seating's balance" in page
    assert f"design effect {deff})" in page
    # The interval itself is untouched: the report's own figure, as it was.
    fpa = report["first_player_advantage"]
    assert fpa["effective_n"] == pytest.approx(block["effective_n"])


def test_an_effective_sample_below_the_matches_is_shown_as_it_is() -> None:
    assert shown_effective_n(412.34, 500) == 412.34
    assert balance_note(412.34, 500, 1.21) == ""
    assert shown_effective_n(5658.0, 500) == 500.0
    assert balance_note(5658.0, 500, 0.0884) == (
        " (every match; the seating's balance narrows the interval further: design effect 0.09)"
    )
    # Missing figures pass through untouched.
    assert shown_effective_n(None, 500) is None and balance_note(None, 500, None) == ""
    block = {"matches": 500, "distinct_games": 500, "distinct_openings": 250, "units": 250,
             "effective_n": 5658.0, "design_effect": 0.0884, "variation": None}  # fmt: skip
    assert "effective sample 500.0 (every match" in independence_line(block)
    assert "5,658" not in independence_line(block)
