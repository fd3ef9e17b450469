"""Issue 44 item 9: matches that replay one game are one observation, so the units of sampling
and the warning follow the number of distinct games, with no cliff between one and two.

Expected values come from SciPy on the unit-level data (the documented Korn–Graubard test,
written here apart from ``analysis.stats``), from plain SQL over the stored rows and from a
flood fill written apart from the units' graph.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from analysis_data import store_batch
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps
from sqlalchemy import text

from analysis import seats
from analysis.independence import diversity_warning
from analysis.report import build_report
from analysis.tidy import Wide, with_matches
from analysis.units import links_games, sampling_units
from storage import crud
from storage.db import get_engine
from storage.settings import Settings
from workers.batches import plan_batch
from workers.play import play_chunk

MATCHES = 40


def kg_p_value(totals: np.ndarray, sizes: np.ndarray, expected: float) -> float:
    """The two-sided Korn–Graubard test of a mean share over units (docs/statistics.md): the
    CR1 variance of the mean over the units, the Bernoulli sample with that variance (each unit
    once when the units show no spread), shrunk by (z / t)² on Kish's effective units − 2
    degrees of freedom (at least one), and the central exact binomial test at that size,
    through SciPy's beta distribution."""
    t, n = np.asarray(totals, float), np.asarray(sizes, float)
    m, g = n.sum(), t.size
    p = t.sum() / m
    variance = g / (g - 1) * float(((t - p * n) ** 2).sum()) / m**2
    base = m * p * (1 - p) / (m - 1) / variance if variance > 1e-15 else float(g)
    df = max(m * m / float((n * n).sum()) - 2, 1.0)
    size = base * (sps.norm.ppf(0.975) / sps.t.ppf(0.975, df)) ** 2
    k = p * size
    at_least = 1.0 if k <= 0 else float(sps.beta.cdf(expected, k, size - k + 1))
    at_most = 1.0 if k >= size else float(sps.beta.sf(expected, k + 1, size - k))
    return min(1.0, 2 * min(at_least, at_most))


def replaying(games: int, first_player: list[float]) -> Wide:
    """Forty matches with fixed seats (rounds of one match) replaying ``games`` distinct games
    in turn, game ``j`` giving the starting seat ``first_player[j]``; one opening throughout."""
    game = np.arange(MATCHES) % games
    share = np.array([first_player[j] for j in game], dtype=float)
    win = np.stack([share, 1 - share], axis=1)
    w = Wide(np.arange(MATCHES), win, win.copy(), np.zeros((MATCHES, 2), np.int64), ("a",))
    design = pd.DataFrame(
        {
            "match_index": np.arange(MATCHES),
            "first_seat": 0,
            "opening": pd.array([7] * MATCHES, dtype="Int64"),
            "game": pd.array(game, dtype="Int64"),
        }
    )
    return with_matches(w, design, 1, by_game=True)


def advantage(w: Wide) -> dict[str, Any]:
    return seats.first_player_advantage(seats.seat_balance_wide(w))


@pytest.mark.parametrize("games", [1, 2, 3, 10])
def test_the_units_are_the_distinct_games(games: int) -> None:
    w = replaying(games, [0.0] * games)
    assert w.units is not None
    assert w.units.count == games and w.units.distinct_games == games
    assert w.units.linked_by == ("one line" if games == 1 else "game and round")
    # Every match of one game is in one unit, and no unit holds two games.
    game = np.arange(MATCHES) % games
    assert all(len(set(game[w.unit == u])) == 1 for u in range(games))


def test_two_games_in_forty_matches_claim_no_certainty() -> None:
    """The audit's case: the starting player lost both games, forty times between them. Counted
    as forty units it gave −50 % [−50, −41], p = 1.8e-12; two games are two observations."""
    w = replaying(2, [0.0, 0.0])
    fpa = advantage(w)
    assert fpa["estimate"] == -0.5 and fpa["units"] == 2
    assert fpa["ci_low"] <= 0.0 <= fpa["ci_high"]
    expected = kg_p_value(np.array([0.0, 0.0]), np.array([20.0, 20.0]), 0.5)
    assert fpa["p_value"] == pytest.approx(expected, rel=1e-9) and fpa["p_value"] > 0.05
    # Forty independent losses would give the old figure: SciPy's exact test.
    assert sps.binomtest(0, MATCHES, 0.5).pvalue == pytest.approx(1.82e-12, rel=0.01)


def test_the_interval_narrows_as_the_distinct_games_grow() -> None:
    widths = {}
    for games in (1, 2, 3, 5, 10):
        fpa = advantage(replaying(games, [0.0] * games))
        widths[games] = fpa["ci_high"] - fpa["ci_low"]
        assert fpa["ci_low"] == -0.5  # every game a loss: the interval starts at the estimate
        if games == 1:
            assert fpa["p_value"] is None or math.isnan(fpa["p_value"])
            continue
        t = np.zeros(games)
        n = np.bincount(np.arange(MATCHES) % games).astype(float)
        assert fpa["p_value"] == pytest.approx(kg_p_value(t, n, 0.5), rel=1e-9)
    assert widths[1] == 1.0  # one game bounds nothing
    assert widths[1] >= widths[2] >= widths[3] >= widths[5] >= widths[10]
    assert widths[10] < widths[5] < widths[3]
    # Ten games, all lost by the starting player, do exclude a fair game, and no more.
    ten = advantage(replaying(10, [0.0] * 10))
    assert 0.0 < -ten["ci_high"] < 0.5 and ten["p_value"] < 0.05


def test_mixed_games_test_what_their_units_hold() -> None:
    results = [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    fpa = advantage(replaying(10, results))
    t = np.array(results) * 4  # each game played four times
    assert fpa["estimate"] == pytest.approx(0.2)
    assert fpa["p_value"] == pytest.approx(kg_p_value(t, np.full(10, 4.0), 0.5), rel=1e-9)
    # The one-sample t test over the ten games' results, SciPy's own, does not reject either.
    assert sps.ttest_1samp(results, 0.5).pvalue > 0.05 and fpa["p_value"] > 0.05


def test_the_warning_follows_the_distinct_games() -> None:
    variation = {"kind": "none"}
    said = {g: diversity_warning(replaying(g, [0.0] * g).units, MATCHES, g, variation)
            for g in (1, 2, 3, 10)}  # fmt: skip
    assert said[1] is not None
    assert "40 matches make one unit of sampling (1 distinct game)" in said[1]
    for g in (2, 3, 10):
        assert said[g] is not None
        assert f"40 matches replay {g} distinct games and make {g} units of sampling" in said[g]
    # Forty distinct games: nothing to say.
    distinct = sampling_units(np.arange(MATCHES), np.arange(MATCHES), 1, game=np.arange(MATCHES))
    assert diversity_warning(distinct, MATCHES, MATCHES, variation) is None


def test_a_pair_replaying_its_line_is_one_unit_per_line() -> None:
    # Seat-swapped pairs of deterministic players on a book of three lines: each line gives
    # two games (one per seating), replayed whenever the line comes again.
    drawn = np.array([0, 1, 0, 2, 1, 0, 2, 2, 1, 0])  # the opening of each of ten pairs
    opening = np.repeat(drawn, 2)
    game = opening * 2 + np.tile([0, 1], 10)
    u = sampling_units(np.arange(20), opening, 2, game=game)
    assert u.count == 3 and u.distinct_games == 6
    assert [set(opening[u.label == k]) for k in range(3)] == [{0}, {1}, {2}]


@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 8)), min_size=1, max_size=40),
    st.integers(1, 4),
    st.booleans(),
)
def test_units_are_the_components_of_round_game_and_declared_opening(
    keys: list[tuple[int, int]], size: int, by_opening: bool
) -> None:
    openings = [o for o, _ in keys]
    games = [g for _, g in keys]
    m = len(keys)
    u = sampling_units(
        np.arange(m), np.array(openings, dtype=object), size, by_opening=by_opening,
        game=np.array(games, dtype=object),
    )  # fmt: skip
    # Independent check: flood fill over "same round, same game or (declared) same opening".
    seen = [-1] * m
    comp = 0
    for start in range(m):
        if seen[start] >= 0:
            continue
        seen[start] = comp
        stack = [start]
        while stack:
            i = stack.pop()
            for j in range(m):
                linked = (
                    j // size == i // size
                    or games[j] == games[i]
                    or (by_opening and openings[j] == openings[i])
                )
                if seen[j] < 0 and linked:
                    seen[j] = comp
                    stack.append(j)
        comp += 1
    assert u.count == comp and list(u.label) == seen


@given(st.lists(st.integers(0, 6), min_size=1, max_size=40), st.integers(1, 5), st.booleans())
def test_all_distinct_games_leave_the_units_as_they_were(
    openings: list[int], size: int, by_opening: bool
) -> None:
    m = len(openings)
    keys = np.array(openings, dtype=object)
    before = sampling_units(np.arange(m), keys, size, by_opening=by_opening)
    after = sampling_units(np.arange(m), keys, size, by_opening=by_opening, game=np.arange(m))
    assert after.count == before.count and list(after.label) == list(before.label)
    assert after.linked_by == before.linked_by


def test_a_stored_batch_of_distinct_games_keeps_its_units(migrated_sqlite_url: str) -> None:
    # Pairs (rotate) that share an opening per pair, every match its own move list: the
    # units are the twenty pairs, as before games were read.
    rng = np.random.default_rng(44)
    outcomes = [((1.0, 0.0), (1.0, 0.0)) if rng.random() < 0.6 else ((0.0, 1.0), (0.0, 1.0))
                for _ in range(MATCHES)]  # fmt: skip
    engine, batch_id = store_batch(
        migrated_sqlite_url, game="alveoles", players=2, labels=["a", "b"], outcomes=outcomes,
        openings=lambda i: 100 + i, moves=lambda i: (f"m{i}", "n"),
    )  # fmt: skip
    block = build_report(engine, batch_id)["independence"]
    # Stored with no variation declared: linked by opening too, which joins nothing here.
    assert block["units"] == 20 and block["linked_by"] == "opening and round"
    assert block["distinct_games"] == MATCHES and block["warning"] is None


def test_stored_replays_join_and_matches_without_moves_do_not(migrated_sqlite_url: str) -> None:
    win = ((1.0, 0.0), (1.0, 0.0))
    common: dict[str, Any] = {"game": "alveoles", "players": 2, "labels": ["a", "b"],
                              "seat_policy": "fixed", "outcomes": [win] * 12}  # fmt: skip
    # Openings not recorded (rows stored before they were kept): only the games link.
    engine, replays = store_batch(
        migrated_sqlite_url, moves=lambda i: ("a", "b" if i % 3 else "c"), **common
    )
    block = build_report(engine, replays)["independence"]
    assert block["units"] == 2 and block["distinct_games"] == 2
    assert block["linked_by"] == "game and round"
    assert "12 matches replay 2 distinct games and make 2 units" in block["warning"]
    # An archive exported without moves stores none: nothing says which games repeat.
    _, bare = store_batch(migrated_sqlite_url, openings=lambda i: 100 + i, **common)
    assert build_report(engine, bare)["independence"]["units"] == 12


@pytest.mark.slow
def test_a_search_replaying_four_games_is_four_units(migrated_sqlite_url: str) -> None:
    """``playtester run alquerque -a alphabeta --no-variation -n 40 --seed 1``: fixed seats,
    forty matches, four distinct games, every one won by the starting player. Counted as forty
    units it gave +50 % [+41, +50], p = 1.8e-12."""
    plan = plan_batch(
        game="alquerque", agents=["alphabeta"], matches=MATCHES, seed=1,
        variation={"kind": "none"}, players=None, options={}, seat_policy=None,
        chunk_size=None, max_plies=None, settings=Settings(),
    )  # fmt: skip
    engine = get_engine(migrated_sqlite_url)
    batch = crud.create_batch(engine, plan=plan)
    records = play_chunk(batch, 0, MATCHES)
    crud.write_chunk(
        engine, batch_id=batch.id, start=0, stop=MATCHES, records=records, duration=0.1
    )
    crud.set_status(engine, batch.id, "done")
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT m.moves, s.win_share FROM match m JOIN seat_result s ON "
                "s.batch_id = m.batch_id AND s.match_index = m.match_index "
                "AND s.seat = m.first_seat WHERE m.batch_id = :b AND m.ok"
            ),
            {"b": batch.id},
        ).all()
    by_game: dict[str, list[float]] = {}
    for moves, share in rows:
        by_game.setdefault(moves, []).append(float(share))
    assert len(rows) == MATCHES and len(by_game) == 4
    report = build_report(engine, batch.id)
    block = report["independence"]
    assert block["units"] == 4 and block["distinct_games"] == 4
    fpa = report["first_player_advantage"]
    totals = np.array([sum(v) for v in by_game.values()])
    sizes = np.array([len(v) for v in by_game.values()], dtype=float)
    assert fpa["estimate"] == pytest.approx(totals.sum() / MATCHES - 0.5)
    assert fpa["p_value"] == pytest.approx(kg_p_value(totals, sizes, 0.5), rel=1e-9)
    assert fpa["p_value"] > 0.05 and fpa["ci_low"] <= 0.0 <= fpa["ci_high"]
    assert "40 matches replay 4 distinct games and make 4 units" in block["warning"]


def test_what_joins_equal_games_is_what_the_batch_drew() -> None:
    # Nothing drawn: an equal game is a replay.
    assert links_games(None) and links_games({"kind": "none"})
    assert links_games({"kind": "openings", "source": "book", "book": [["a"]]})
    assert links_games({"kind": "noise", "plies": 4, "noised": []})  # noise that moves no one
    # A random opening per round, or noise on a search, draws afresh: an equal game is another
    # draw of the same distribution, as an equal opening is.
    assert not links_games({"kind": "openings", "plies": 8, "source": "random"})
    assert not links_games({"kind": "noise", "plies": 10, "noised": ["medium", "medium#2"]})
