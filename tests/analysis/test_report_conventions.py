"""Report conventions on real stored batches: komi per seat, small samples, partial batches."""

from __future__ import annotations

import csv
import io
import math

import pytest
from scipy import stats as sps
from sqlalchemy import text

from analysis.render_html import render_html
from analysis.report import build_report, to_csv
from api.cli_tables import seat_table
from storage import crud
from storage.db import get_engine
from storage.models import BatchStatus
from storage.settings import Settings
from workers.batches import plan_batch
from workers.chunks import run_chunk
from workers.local import run_local


def played_batch(url: str, *, run: bool = True, **request: object) -> str:
    args: dict = {
        "players": None,
        "options": {},
        "seed": 3,
        "seat_policy": None,
        "chunk_size": None,
        "max_plies": None,
    }
    args.update(request)
    batch_id = crud.create_batch(get_engine(url), plan=plan_batch(settings=Settings(), **args)).id
    if run:
        run_local(batch_id, workers=2, settings=Settings(database_url=url))
    return batch_id


def test_komi_of_different_agents_is_close_to_the_self_play_seat_effect(
    migrated_sqlite_url: str,
) -> None:
    url = migrated_sqlite_url
    engine = get_engine(url)
    mixed = played_batch(url, game="alveoles", agents=["greedy", "random"], matches=400)
    alone = played_batch(url, game="alveoles", agents=["greedy"], players=2, matches=1000)
    k_mixed = build_report(engine, mixed)["fair_compensation"]
    k_alone = build_report(engine, alone)["fair_compensation"]
    assert k_mixed["agent_corrected"] is True and k_alone["agent_corrected"] is False
    m, s = k_mixed["offsets"][0], k_alone["offsets"][0]
    # Greedy outscores random by about 300 points whatever the seat; uncorrected, the median of
    # seat 0 minus seat 1 falls between the two seatings' modes and the interval spans ±100.
    assert m["ci_high"] - m["ci_low"] < 60
    assert m["ci_low"] <= s["ci_high"] and s["ci_low"] <= m["ci_high"]


def test_a_single_match_shows_no_false_certainty(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    batch_id = played_batch(url, game="alveoles", agents=["random", "greedy", "random"], matches=1)
    report = build_report(get_engine(url), batch_id)
    assert report["seat_test"]["method"] == "exact multinomial test"
    assert report["seat_test"]["statistic"] is None
    for seat in report["seats"]:
        # One match is one unit of sampling: it bounds no share and tests nothing.
        assert seat["test"].startswith("none: one unit") and seat["p_value"] is None
        assert (seat["ci_low"], seat["ci_high"]) == (0.0, 1.0)
        assert seat["points_ci_low"] is None  # one game has no variance
    assert report["strengths"], "three agents get Bradley–Terry strengths"
    for row in report["strengths"]:
        assert row["ci_low"] is None and row["ci_high"] is None
    # One seating cannot tell the seats' effect from the agents'.
    assert report["fair_compensation"]["offsets"] is None

    self_play = played_batch(url, game="alveoles", agents=["random"], players=3, matches=5)
    komi = build_report(get_engine(url), self_play)["fair_compensation"]
    assert [o["seat"] for o in komi["offsets"]] == [1, 2]
    assert all(o["ci_low"] is None and o["ci_high"] is None for o in komi["offsets"])
    assert "fewer than 30 units" in komi["note"]


def test_an_all_draw_batch_has_seat_intervals_of_real_width(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    # Two plies of Alquerque end every match at the cap: every game is a draw.
    batch_id = played_batch(
        url, game="alquerque", agents=["random"], players=2, matches=20, max_plies=2
    )
    engine = get_engine(url)
    report = build_report(engine, batch_id)
    assert report["shape"]["draw_rate"] == 1.0
    # Fixed seats: rounds of one match; two random plies often coincide, and a game played
    # again is one observation, so the units are the distinct games (docs/statistics.md). With
    # every unit a draw each counts once, at t's width: Clopper–Pearson for ½ of
    # G · (z / t)², t on Kish's effective units (Σ N)² / Σ N² − 2.
    assert report["batch"]["seat_policy"] == "fixed"
    with engine.connect() as conn:
        sizes = [
            int(k)
            for (k,) in conn.execute(
                text("SELECT COUNT(*) FROM match WHERE batch_id = :b AND ok GROUP BY moves"),
                {"b": batch_id},
            )
        ]
    g = len(sizes)
    assert sum(sizes) == 20 and report["independence"]["units"] == g
    df = max(20**2 / sum(k * k for k in sizes) - 2, 1)
    n = g * (sps.norm.ppf(0.975) / sps.t.ppf(0.975, df)) ** 2
    lo, hi = sps.beta.ppf(0.025, n / 2, n / 2 + 1), sps.beta.ppf(0.975, n / 2 + 1, n / 2)
    for seat in report["seats"]:
        assert seat["win_share"] == 0.5 and seat["units"] == g
        assert seat["interval"] == "clopper-pearson, design-adjusted"  # G < M
        assert (seat["ci_low"], seat["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
        assert hi - lo > 0.4


def test_a_partial_batch_says_so_in_every_format(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    engine = get_engine(url)
    batch_id = played_batch(
        url, run=False, game="alquerque", agents=["easy", "random"], matches=40, chunk_size=10
    )
    run_chunk(batch_id, 0, 10, database_url=url)
    run_chunk(batch_id, 10, 20, database_url=url)
    report = build_report(engine, batch_id)
    batch = report["batch"]
    assert batch["partial"] is True
    assert batch["partial_note"].startswith("partial: 20 of 40 matches played")
    assert "resume" in batch["partial_note"]
    rows = list(csv.reader(io.StringIO(to_csv(report))))
    assert ["batch", "partial_note", batch["partial_note"]] in rows
    assert f"<p class='partial'>{batch['partial_note']}</p>" in render_html(report)
    assert batch["partial_note"] in str(seat_table(report).caption)

    crud.set_status(engine, batch_id, BatchStatus.CANCELLED)
    assert build_report(engine, batch_id)["batch"]["partial_note"].endswith("cancelled")


def test_a_complete_batch_is_not_partial(migrated_sqlite_url: str) -> None:
    url = migrated_sqlite_url
    batch_id = played_batch(url, game="alquerque", agents=["easy", "random"], matches=8)
    batch = build_report(get_engine(url), batch_id)["batch"]
    assert batch["partial"] is False and batch["partial_note"] is None
    assert not math.isnan(batch["matches_done"])
