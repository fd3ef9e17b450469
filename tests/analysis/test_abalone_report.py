"""The Abalone report section: marbles by seat and agent, endings, length by layout."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from analysis_data import seat_frame, store_batch

from analysis.games.abalone import abalone_section, tables
from analysis.html_parts import text_table
from analysis.report import build_report
from analysis.tidy import to_wide
from engines.core import agent_rng, match_seed, play_match
from engines.registry import load_game, make_agent


def seat_stats(pushed: int, lost: int, ejections: int | None = None) -> dict:
    return {
        "pushed_off": pushed,
        "lost": lost,
        "inline": 10,
        "broadside": 4,
        "pushes": pushed + 1,
        "ejections": pushed if ejections is None else ejections,
    }


def game_stats(plies: int, ended_by: str | None, a: int, b: int, layout: str = "standard") -> dict:
    return {
        "plies": plies,
        "layout": layout,
        "ended_by": ended_by,
        "per_seat": [seat_stats(a, b), seat_stats(b, a)],
    }


def test_section_on_hand_built_matches() -> None:
    stats = [
        game_stats(100, "normal", 6, 2),  # seat 0 wins by six
        game_stats(200, "normal", 1, 6),  # seat 1 wins by six
        game_stats(400, "move_limit", 3, 3),
        game_stats(50, "repetition", 0, 1),
    ]
    outcomes = [((1.0, 0.0), (6, 2)), ((0.0, 1.0), (1, 6)), ((0.5, 0.5), (3, 3)),
                ((0.5, 0.5), (0, 1))]  # fmt: skip
    w = to_wide(seat_frame(outcomes, ["hard", "easy"]), 2)  # rotate: odd matches swap seats
    match_stats = pd.DataFrame({"match_index": range(4), "stats": stats})
    before = match_stats.copy(deep=True)
    sec = abalone_section(match_stats, w, goal=6)
    pd.testing.assert_frame_equal(match_stats, before)
    seat0, seat1 = sec["marbles_by_seat"]
    assert seat0["pushed_off"] == pytest.approx((6 + 1 + 3 + 0) / 4)
    assert seat1["lost"] == pytest.approx((6 + 1 + 3 + 0) / 4)
    assert seat1["pushed_off"] == pytest.approx((2 + 6 + 3 + 1) / 4)
    by_agent = {r["agent"]: r for r in sec["marbles_by_agent"]}
    # hard sits in seat 0 in matches 0 and 2, in seat 1 in matches 1 and 3.
    assert by_agent["hard"]["pushed_off"] == pytest.approx((6 + 6 + 3 + 1) / 4)
    assert by_agent["easy"]["pushed_off"] == pytest.approx((2 + 1 + 3 + 0) / 4)
    causes = {c["ended_by"]: c for c in sec["endings"]["by_cause"]}
    assert causes["normal"]["share"] == 0.5 and causes["move_limit"]["games"] == 1
    assert causes["repetition"]["share"] == 0.25 and causes["no_move"]["games"] == 0
    assert causes["normal"]["ci_low"] < 0.5 < causes["normal"]["ci_high"]
    assert sec["endings"]["pushed_off_to_win"]["games"] == 2
    (length,) = sec["length_by_layout"]
    assert length["layout"] == "standard" and length["mean"] == 187.5
    assert length["median"] == 150.0
    rendered = [text_table(t) for t in tables(sec)]
    assert len(rendered) == 4 and "How games ended" in rendered[2]


def test_batch_cap_counts_apart_from_the_move_limit_and_layouts_split() -> None:
    stats = [game_stats(30, None, 0, 0, "belgian_daisy"), game_stats(10, "normal", 4, 0)]
    outcomes = [((0.5, 0.5), (0, 0)), ((1.0, 0.0), (4, 0))]
    w = to_wide(seat_frame(outcomes, ["a", "b"]), 2)
    sec = abalone_section(pd.DataFrame({"match_index": [0, 1], "stats": stats}), w, goal=4)
    causes = {c["ended_by"]: c["games"] for c in sec["endings"]["by_cause"]}
    # The match the batch's cap cut (no ending in its stats) is no move-limit draw.
    assert causes["max_plies"] == 1 and causes["move_limit"] == 0 and causes["normal"] == 1
    assert [r["layout"] for r in sec["length_by_layout"]] == ["belgian_daisy", "standard"]
    assert sec["endings"]["pushed_off_to_win"]["games"] == 1


@pytest.mark.slow
def test_report_of_a_stored_batch_of_real_games(migrated_sqlite_url: str) -> None:
    game = load_game("abalone", move_limit=80)
    results = []
    for i in range(4):
        seed = match_seed(8, i)
        names = ["easy", "random"] if i % 2 == 0 else ["random", "easy"]
        agents = [make_agent(game, n, agent_rng(seed, s)) for s, n in enumerate(names)]
        results.append(play_match(game, agents, seed))
    _, bid = store_batch(
        migrated_sqlite_url,
        game="abalone",
        players=2,
        labels=["easy", "random"],
        outcomes=[(r.returns, r.scores) for r in results],
        plies=lambda i: results[i].plies,
        ended_by=lambda i: results[i].ended_by,
        stats=lambda i: results[i].stats,
        options={"layout": "standard", "marbles_to_win": 6, "move_limit": 80},
    )
    from storage.db import get_engine

    report = build_report(get_engine(migrated_sqlite_url), bid)
    json.dumps(report, allow_nan=False)
    sec = report["game"]
    assert sec["name"] == "abalone" and sec["matches"] == 4
    easy_off = [r.scores[0 if i % 2 == 0 else 1] for i, r in enumerate(results)]
    by_agent = {r["agent"]: r for r in sec["marbles_by_agent"]}
    assert by_agent["easy"]["pushed_off"] == pytest.approx(sum(easy_off) / 4)
    decided = sum(r.ended_by == "normal" for r in results)
    causes = {c["ended_by"]: c["games"] for c in sec["endings"]["by_cause"]}
    assert causes["normal"] == decided
    assert causes["move_limit"] + causes["repetition"] == 4 - decided
    assert sec["length_by_layout"][0]["mean"] == pytest.approx(sum(r.plies for r in results) / 4)


def test_a_match_lost_on_time_counts_as_decided_on_time_not_at_the_ply_cap() -> None:
    stats = [game_stats(30, None, 0, 0), game_stats(12, None, 1, 0), game_stats(10, "normal", 6, 0)]
    outcomes = [((0.5, 0.5), (0, 0)), ((1.0, 0.0), (1, 0)), ((1.0, 0.0), (6, 0))]
    w = to_wide(seat_frame(outcomes, ["a", "b"]), 2)
    frame = pd.DataFrame(
        {"match_index": [0, 1, 2], "stats": stats, "ended_by": ["max_plies", "time", "normal"]}
    )
    sec = abalone_section(frame, w, goal=6)
    causes = {c["ended_by"]: c for c in sec["endings"]["by_cause"]}
    assert causes["max_plies"]["games"] == 1 and causes["normal"]["games"] == 1
    assert causes["time"]["games"] == 1
    assert causes["time"]["label"] == "decided: lost on time (clocks)"
