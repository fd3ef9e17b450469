"""The Alhambra report section: win share by turn position, points by round and source, tiles,
the collector; figures checked against hand counts and statsmodels' Wilson interval."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from analysis.games import game_report
from analysis.games.alhambra import alhambra_section
from analysis.tidy import Wide

TYPES = ("pavilion", "seraglio", "arcades", "chambers", "garden", "tower")


def seat(position: int, rounds: list[tuple[int, int]], towers: int = 0) -> dict[str, Any]:
    return {
        "turn_position": position,
        "points": sum(m + w for m, w in rounds),
        "rounds": [{"majorities": m, "walls": w} for m, w in rounds],
        "tiles_by_type": {t: (towers if t == "tower" else 1) for t in TYPES},
        "reserve_by_type": dict.fromkeys(TYPES, 0),
        "longest_wall": 4,
        "money_left": 10,
        "exact_purchases": 2,
    }


def two_player_batch() -> tuple[pd.DataFrame, Wide]:
    """Four two-player matches; the starting player (seat 1 in matches 0 and 3) wins three."""
    starts = [1, 0, 0, 1]
    winners = [1, 0, 1, 1]
    stats = []
    for start in starts:
        per_seat = [
            seat((s - start) % 2, [(1, 2), (8, 3), (16 + s, 4)], towers=s) for s in range(2)
        ]
        stats.append(
            {"per_seat": per_seat, "turns": 50, "collector": {"points": 20, "rounds": [2, 6, 12]}}
        )
    frame = pd.DataFrame({"match_index": range(4), "stats": stats})
    win = np.array([[float(w == s) for s in range(2)] for w in winners])
    wide = Wide(
        match_index=np.arange(4, dtype=np.int64),
        win=win,
        points=np.array([[40.0, 41.0]] * 4),
        agent=np.array([[0, 1], [1, 0], [0, 1], [1, 0]], dtype=np.int64),
        labels=("greedy", "random"),
    )
    return frame, wide


def test_win_share_by_turn_position_with_exact_intervals() -> None:
    section = alhambra_section(*two_player_batch())
    start, second = section["turn_positions"]
    # Match 0: start seat 1 won; 1: start seat 0 won; 2: start seat 0 lost; 3: start seat 1 won.
    assert (start["games"], start["win_share"]) == (4, 0.75)
    assert second["win_share"] == 0.25
    lo, hi = proportion_confint(3, 4, alpha=0.05, method="beta")  # four independent matches
    assert start["ci_low"] == pytest.approx(lo) and start["ci_high"] == pytest.approx(hi)
    assert start["expected"] == 0.5
    adv = section["start_advantage"]
    assert adv["estimate"] == pytest.approx(0.25)
    assert (adv["ci_low"], adv["ci_high"]) == (pytest.approx(lo - 0.5), pytest.approx(hi - 0.5))


def test_points_per_round_split_by_source_by_position_and_agent() -> None:
    section = alhambra_section(*two_player_batch())
    rows = {(r["position"], r["round"]): r for r in section["rounds_by_position"]}
    assert rows[(0, 1)]["majorities"] == 1 and rows[(0, 1)]["walls"] == 2
    # Round 3 majorities are 16 for seat 0 and 17 for seat 1; the start is seat 1 twice out of 4.
    assert rows[(0, 3)]["majorities"] == pytest.approx(16.5)
    by_agent = {(r["agent"], r["round"]): r for r in section["rounds_by_agent"]}
    # greedy sits in seat 0 in matches 0 and 2 and in seat 1 in matches 1 and 3.
    assert by_agent[("greedy", 3)]["majorities"] == pytest.approx(16.5)
    assert by_agent[("random", 2)]["walls"] == 3


def test_tiles_by_type_and_the_collector() -> None:
    section = alhambra_section(*two_player_batch())
    tiles = {t["agent"]: t for t in section["tiles_by_agent"]}
    assert tiles["greedy"]["tower"] == pytest.approx(0.5)  # seat 1 (1 tower) half the time
    assert tiles["greedy"]["garden"] == 1 and tiles["greedy"]["longest_wall"] == 4
    collector = section["collector"]
    assert collector["matches"] == 4 and collector["mean_points"] == 20
    assert collector["rounds"] == [2, 6, 12]


def test_the_section_is_registered_and_renders_tables() -> None:
    report = game_report("alhambra")
    assert report is not None
    section = alhambra_section(*two_player_batch())
    titles = [t.title for t in report.tables(section)]
    assert titles[0].startswith("Win share by turn position")
    assert any("collector" in title for title in titles)
    three_player = alhambra_section(
        pd.DataFrame({"match_index": [], "stats": []}),
        Wide(
            np.zeros(0, np.int64),
            np.zeros((0, 3)),
            np.zeros((0, 3)),
            np.zeros((0, 3), np.int64),
            (),
        ),
    )
    assert three_player["collector"] is None and three_player["matches"] == 0
