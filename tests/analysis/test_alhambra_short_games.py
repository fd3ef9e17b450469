"""The report's share of Alhambra games that ended before every scoring card was drawn (fewer
than three scorings under the literal rule), in one batch and side by side for two batches
(``missed_scoring`` ``skip`` and ``before_final``) through ``compare``.

Expected figures come from counts made here, straight from the stored matches' ``stats``
column, and from statsmodels' Clopper–Pearson interval.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
from api_support import client_for, make_api
from sqlalchemy import text
from statsmodels.stats.proportion import proportion_confint
from typer.testing import CliRunner

from analysis.games import game_report
from analysis.games.alhambra import SHORT_FIGURE, alhambra_section
from analysis.report import build_report
from analysis.tidy import Wide
from api.cli import app
from api.cli_tables import compare_table
from storage.db import get_engine

MATCHES = 10
"""Greedy two-player games per stored batch (a tenth of a second or so each)."""


def seat(position: int) -> dict[str, Any]:
    return {"turn_position": position, "rounds": [{"majorities": 1, "walls": 1}] * 3}


def frame(entries: list[dict[str, Any]]) -> tuple[pd.DataFrame, Wide]:
    m = len(entries)
    stats = [{"per_seat": [seat(0), seat(1)], **e} for e in entries]
    wide = Wide(
        match_index=np.arange(m, dtype=np.int64),
        win=np.tile([1.0, 0.0], (m, 1)),
        points=np.tile([10.0, 9.0], (m, 1)),
        agent=np.zeros((m, 2), np.int64),
        labels=("greedy",),
    )
    return pd.DataFrame({"match_index": range(m), "stats": stats}), wide


def test_the_share_counts_missed_cards_and_reads_older_stats_by_their_scorings() -> None:
    entries = [
        {"scorings": 3, "missed_scorings": 0},
        {"scorings": 2, "missed_scorings": 1},
        {"scorings": 3, "missed_scorings": 1},  # before_final: scored late, still ended short
        {"scorings": 2},  # stored before missed_scorings was kept: the literal rule, 3 − 2
        {"scorings": 3},
        {"scorings": 1},
        {},  # says nothing: left out
        {"scorings": 1, "missed_scorings": None},  # cut off by the ply cap: left out
    ]
    section = alhambra_section(*frame(entries))
    short = section["short_games"]
    assert (short["players"], short["matches"], short["short"]) == (2, 6, 4)
    assert short["missed_cards"] == 1 + 1 + 1 + 2
    assert short["share"] == pytest.approx(4 / 6)
    lo, hi = proportion_confint(4, 6, alpha=0.05, method="beta")
    assert (short["ci_low"], short["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
    assert short["missed_scoring"] == "skip"
    report = game_report("alhambra")
    assert report is not None
    table = next(t for t in report.tables(section) if t.css_class == "short-games")
    assert table.rows == [["2", "6", "4", "66.7%", f"{100 * lo:.1f}%–{100 * hi:.1f}%", "5"]]
    assert table.note is not None and "fewer than three scorings" in table.note


def stored_counts(url: str, batch: str) -> tuple[int, int, list[int]]:
    """(matches, matches with a scoring card never drawn, scorings held per match), read
    from the stored stats without the report's code."""
    with get_engine(url).connect() as conn:
        rows = conn.execute(
            text("SELECT stats FROM match WHERE batch_id = :b AND ok ORDER BY match_index"),
            {"b": batch},
        ).all()
    stats = [json.loads(r[0]) if isinstance(r[0], str) else r[0] for r in rows]
    short = sum(1 for st in stats if st["missed_scorings"] > 0)
    return len(stats), short, [st["scorings"] for st in stats]


def played(url: str, seed: int, *options: str) -> str:
    ran = CliRunner().invoke(
        app,
        ["run", "alhambra", "--players", "2", "--agents", "greedy", "--matches", str(MATCHES),
         "--seed", str(seed), "--workers", "1", "--db", url, *options],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    found = re.search(r"batch (\w{12}): done", ran.stdout)
    assert found, ran.stdout
    return found.group(1)


@pytest.mark.slow
def test_stored_batches_under_both_readings_and_their_comparison(sqlite_url: str) -> None:
    skip = played(sqlite_url, 31)
    late = played(sqlite_url, 31, "--option", "missed_scoring=before_final")
    m, short_skip, held_skip = stored_counts(sqlite_url, skip)
    m_late, short_late, held_late = stored_counts(sqlite_url, late)
    assert m == m_late == MATCHES
    # The literal rule holds fewer than three scorings exactly in the games that ended short;
    # the other reading always holds three. Greedy play does not read the option, so the same
    # seed plays the same games under both.
    assert sum(1 for h in held_skip if h < 3) == short_skip
    assert held_late == [3] * MATCHES and short_late == short_skip
    assert 0 < short_skip < MATCHES  # both kinds of game occur at this seed

    engine = get_engine(sqlite_url)
    for batch, mode in ((skip, "skip"), (late, "before_final")):
        report = build_report(engine, batch)
        short = report["game"]["short_games"]
        assert (short["matches"], short["short"]) == (MATCHES, short_skip)
        assert short["missed_scoring"] == mode
        assert report["independence"]["units"] == MATCHES  # distinct deals: one unit each
        lo, hi = proportion_confint(short_skip, MATCHES, alpha=0.05, method="beta")
        assert (short["ci_low"], short["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))

    runner = CliRunner()
    shown = runner.invoke(app, ["compare", skip, late, "--db", sqlite_url, "-f", "json"])
    assert shown.exit_code == 0, shown.output
    shown_json = shown.stdout
    (figure,) = json.loads(shown_json)["game_figures"]
    assert figure["figure"] == SHORT_FIGURE
    assert figure["a"] == figure["b"] == pytest.approx(short_skip / MATCHES)
    assert figure["difference"] == 0 and figure["p_value"] == pytest.approx(1.0)
    shown = runner.invoke(app, ["compare", skip, late, "--db", sqlite_url])
    assert shown.exit_code == 0, shown.output
    table = compare_table(json.loads(shown_json))
    assert list(table.columns[0].cells)[-1] == SHORT_FIGURE
    api, _ = make_api(sqlite_url)
    with client_for(api) as client:
        via_http = client.get("/compare", params={"a": skip, "b": late}).json()
        page = client.get("/ui/compare", params={"a": skip, "b": late}).text
    assert via_http["game_figures"] == json.loads(shown_json)["game_figures"]
    assert SHORT_FIGURE.capitalize() in page
