"""The strength ladder (``bench/ladder``): its fit against closed forms, its files, a rerun."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from analysis.ladder.fit import ladder_table
from analysis.ladder.ladders import Ladder
from analysis.ladder.results import append_result, read_results
from bench.ladder.__main__ import main

TWO = Ladder("alquerque", 2, ("random", "easy"), "random", 2)


def _row(pairing: str, index: int, seats: list[str], returns: list[float]) -> dict[str, Any]:
    return {
        "pairing": pairing,
        "index": index,
        "round": index // 2,
        "seats": seats,
        "returns": returns,
        "cpu": [0.5, 0.25] if seats[0] == "easy" else [0.25, 0.5],  # easy 0.5 s a game
        "match_cpu": 0.8,
        "plies": 30,
        "ended_by": "normal",
        "opening": 1000 + index,  # every opening distinct: units are the rounds
    }


def _pairs(results: list[tuple[float, float]]) -> list[dict[str, Any]]:
    """Seat-swapped pairs of easy against random, easy's result in each game given."""
    rows = []
    for k, (first, second) in enumerate(results):
        rows.append(_row("easy-random", 2 * k, ["easy", "random"], [first, 1 - first]))
        rows.append(_row("easy-random", 2 * k + 1, ["random", "easy"], [1 - second, second]))
    return rows


def test_two_levels_match_the_logit_of_the_score_and_its_clustered_delta_interval() -> None:
    """Two players: Bradley–Terry's Elo is 400·log10(s / (1 − s)) of the score s, and the
    sandwich over pairs is the delta method on the CR1 variance of the pairs' mean score."""
    outcomes = [(1, 1), (1, 0), (1, 0.5), (0, 1), (1, 1), (0.5, 0.5), (1, 0), (1, 1), (0, 0)]
    outcomes = outcomes * 3
    table = ladder_table(TWO, _pairs(outcomes))
    easy = next(r for r in table.levels if r.level == "easy")
    per_pair = np.array([(a + b) / 2 for a, b in outcomes])
    s = per_pair.mean()
    assert easy.elo == pytest.approx(400 * math.log10(s / (1 - s)), abs=1.0)
    g = per_pair.size
    var_mean = g / (g - 1) * ((per_pair - s) ** 2).sum() / g**2
    se_elo = math.sqrt(var_mean) / (s * (1 - s)) * 400 / math.log(10)
    half = stats.t.ppf(0.975, g - 1) * se_elo
    assert easy.ci_high - easy.elo == pytest.approx(half, rel=0.02)
    assert easy.elo - easy.ci_low == pytest.approx(half, rel=0.02)
    assert table.units == g
    assert easy.cpu_per_game == pytest.approx(0.5)
    assert table.strongest_within(0.4) is not None
    assert table.strongest_within(0.4).level == "random"  # type: ignore[union-attr]
    assert table.strongest_within(1.0).level == "easy"  # type: ignore[union-attr]


def test_a_level_that_lost_every_meeting_is_flagged_and_given_no_interval() -> None:
    ladder = Ladder("alquerque", 2, ("random", "easy", "medium"), "easy", 2)
    rows = _pairs([(1, 1), (1, 0), (0.5, 1), (0, 1)] * 3)
    for k in range(4):
        rows.append(_row("medium-easy", 2 * k, ["medium", "easy"], [1.0, 0.0]))
        rows.append(_row("medium-easy", 2 * k + 1, ["easy", "medium"], [0.0, 1.0]))
    levels = {r.level: r for r in ladder_table(ladder, rows).levels}
    assert levels["easy"].elo == 0
    assert levels["medium"].note is not None and "unbounded" in levels["medium"].note
    assert math.isnan(levels["medium"].ci_low)
    assert levels["random"].ci_low < levels["random"].elo < levels["random"].ci_high < 0


def test_a_line_cut_short_is_left_out_and_the_next_starts_a_line_of_its_own(
    tmp_path: Path,
) -> None:
    first = _row("easy-random", 0, ["easy", "random"], [1.0, 0.0])
    append_result("alquerque", first, tmp_path)
    with (tmp_path / "alquerque.jsonl").open("a") as f:
        f.write(json.dumps(_row("easy-random", 1, ["random", "easy"], [0, 1]))[:40])
    append_result("alquerque", _row("easy-random", 2, ["easy", "random"], [0.0, 1.0]), tmp_path)
    append_result("alquerque", _row("easy-random", 0, ["easy", "random"], [0.0, 1.0]), tmp_path)
    rows = read_results("alquerque", tmp_path)
    assert sorted(r["index"] for r in rows) == [0, 2]
    assert next(r for r in rows if r["index"] == 0)["returns"] == [1.0, 0.0]


def test_a_rerun_plays_only_what_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    args = ["--results", str(tmp_path), "run", "--game", "alquerque", "--pairing", "easy-random"]
    main([*args, "--games", "2"])
    main([*args, "--games", "4"])
    assert capsys.readouterr().out.count("played 2 matches") == 2
    rows = read_results("alquerque", tmp_path)
    assert sorted(r["index"] for r in rows) == [0, 1, 2, 3]
    for row in rows:
        assert sorted(row["seats"]) == ["easy", "random"]
        assert sum(row["returns"]) == pytest.approx(1.0)
        assert row["match_cpu"] >= sum(row["cpu"]) >= 0
    # match 2k and 2k + 1 swap the seats
    by_index = {r["index"]: r["seats"] for r in rows}
    assert by_index[0] == by_index[1][::-1] and by_index[2] == by_index[3][::-1]
