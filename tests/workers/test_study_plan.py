"""``study plan``: the matches a batch needs for its precision, from a calibration's spread, set
against the normal sample-size formula computed here with NumPy and SciPy."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from repo_paths import DATA
from scipy.stats import norm
from typer.testing import CliRunner

from api.cli import app
from storage.records import MatchRecord, SeatRecord
from workers.studies.calibrate import Target, estimate

runner = CliRunner()
TINY = DATA / "tiny_study.toml"
TUNE = DATA / "tiny_tune.toml"


def record(index: int, first_seat: int, shares: list[float], labels: list[str]) -> MatchRecord:
    seats = [
        SeatRecord(seat, labels[seat], seat, 0.0, share, 1) for seat, share in enumerate(shares)
    ]
    return MatchRecord(index, index, True, 10, "normal", (), {}, 0.1, None, seats, first_seat)


def test_the_matches_needed_follow_the_sample_size_formula() -> None:
    # First movers: seat 0, 1, 0, 1, 0, 0; their shares 1, 1, 0.5, 0, 1, 1.
    rows = [
        ([1.0, 0.0], 0),
        ([0.0, 1.0], 1),
        ([0.5, 0.5], 0),
        ([1.0, 0.0], 1),
        ([1.0, 0.0], 0),
        ([0.0, 1.0], 1),
    ]
    records = [record(i, first, shares, ["a", "a#2"]) for i, (shares, first) in enumerate(rows)]
    cpu = [0.5, 0.7, 0.6, 0.4, 0.5, 0.3]
    target = Target("first_player_advantage", 0.02, True)
    got = estimate("x", records, cpu, 0.0, target, cap=100_000)
    sd = np.std([1, 1, 0.5, 0, 1, 1, 0, 1], ddof=1)  # with one won and one lost match added
    needed = math.ceil((norm.ppf(0.975) * sd / 0.02) ** 2)
    assert got.sd == pytest.approx(sd)
    assert got.needed == needed and got.matches == needed and got.reaches
    assert got.cpu_per_match == pytest.approx(0.5)
    assert got.cpu_seconds == pytest.approx(0.5 * needed)
    assert got.half_width == pytest.approx(norm.ppf(0.975) * sd / math.sqrt(needed))

    # A precision stop plays at most its matches; without one a batch plays its matches.
    capped = estimate("x", records, cpu, 0.0, target, cap=500)
    assert capped.matches == 500 and capped.reaches is False
    fixed = estimate("x", records, cpu, 0.0, Target("first_player_advantage", 0.02, False), 500)
    assert fixed.matches == 500 and fixed.needed == needed
    untargeted = estimate("x", records, cpu, 0.0, Target("first_player_advantage", None, False), 9)
    assert untargeted.needed is None and untargeted.reaches is None and untargeted.matches == 9


def test_a_score_target_takes_the_agent_whose_score_varies_most() -> None:
    labels = ["steady", "swing"]
    shares = [[0.5, 0.5], [0.5, 0.5], [0.0, 1.0], [1.0, 0.0]]
    records = [record(i, 0, s, labels) for i, s in enumerate(shares)]
    got = estimate("x", records, [0.1] * 4, 0.0, Target("score", 0.05, False), 1000)
    steady = np.std([0.5, 0.5, 0.0, 1.0, 0, 1], ddof=1)
    swing = np.std([0.5, 0.5, 1.0, 0.0, 0, 1], ddof=1)
    assert got.sd == pytest.approx(max(steady, swing))
    one = estimate("x", records, [0.1] * 4, 0.0, Target("score:steady", 0.05, False), 1000)
    assert one.sd == pytest.approx(steady)


def test_study_plan_prints_each_batch_and_the_total_against_the_budget(tmp_path: Path) -> None:
    study = tmp_path / "tiny.toml"
    study.write_text(
        TINY.read_text().replace(
            'description = "Two', 'half_width = 0.25\nbudget_cpu_hours = 1\ndescription = "Two'
        )
    )
    result = runner.invoke(app, ["study", "plan", str(study), "--calibration", "2", "--cores", "2"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "easy-random (easy vs random):" in flat and "score ±25.0 pt needs" in flat
    assert "random (random vs random#2):" in flat and "first_player_advantage ±25.0 pt" in flat
    assert "plays 12 (its matches)" in flat
    assert "study tiny: 24 matches," in flat and "within its budget of 1 CPU hours" in flat


def test_study_plan_counts_a_searchs_trials_rerankings_and_confirmations(tmp_path: Path) -> None:
    study = tmp_path / "search.toml"
    study.write_text(
        "half_width = 0.25\nbudget_cpu_hours = 1\n"
        + TUNE.read_text().replace("confirm_matches = 24", "confirm_matches = 200")
        + 'screen_agents = "random"\nscreen_matches = 8\nrerank = 2\nrerank_matches = 12\n'
    )
    result = runner.invoke(app, ["study", "plan", str(study), "--calibration", "2", "--cores", "2"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "search trials: 3 × at most 8 matches each, at random;" in flat, flat
    assert "search control: 1 × 8 matches each;" in flat, flat
    assert "search re-rankings: 2 × 12 matches each;" in flat, flat
    found = re.search(
        r"search confirmations: 2 × (\d+) matches each \(±25\.0 pt, its precision", flat
    )
    assert found, flat
    confirm = int(found.group(1))
    assert 1 <= confirm <= 200
    # The base batch's 16 matches, then every stage of the search (the control screens as a
    # trial does).
    total = 16 + 3 * 8 + 8 + 2 * 12 + 2 * confirm
    assert f"study search: {total:,} matches," in flat, flat
    assert "CPU hours" in flat and "within its budget of 1 CPU hours" in flat
