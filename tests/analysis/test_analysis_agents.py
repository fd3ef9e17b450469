"""Agent table, pairings (W/D/L, Elo, LOS, p-values, pentanomial) and Bradley–Terry strengths.

Expected values come from closed forms, statsmodels (cluster-robust variance, Holm), SciPy,
choix and loops written here, never from ``analysis``. Conventions: a head-to-head result
comes from the win shares (equal win shares are a draw, whatever the points); every interval is
over units of sampling (``analysis_data.clustered_score``: cluster-robust variance, Wilson with
an effective sample size, t with units − 2 degrees of freedom); Elo = −400·log10(1/score − 1).
"""

from __future__ import annotations

import math

import choix
import numpy as np
import pandas as pd
import pytest
from analysis_data import clustered_score, seat_frame
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from analysis.agents import agent_table, pairings, swapped_pairs
from analysis.strengths import strengths
from analysis.tidy import Wide, to_wide, with_matches

WIN, LOSS, DRAW = ((1.0, 0.0), (1.0, 0.0)), ((0.0, 1.0), (0.0, 1.0)), ((0.5, 0.5), (0.5, 0.5))
DRAW_SEAT0_AHEAD = ((0.5, 0.5), (3.0, 1.0))
"""A drawn game (equal returns) in which seat 0 has more points: ``rank`` puts seat 0 first."""
DRAW_SEAT1_AHEAD = ((0.5, 0.5), (2.0, 4.0))


def elo(score: float) -> float:
    return -400.0 * math.log10(1.0 / score - 1.0)


def elo_ends(est: dict[str, float]) -> tuple[float, float]:
    return (elo(est["lo"]), elo(est["hi"]))


def with_openings(df: pd.DataFrame, players: int, openings: list[int], round_size: int) -> Wide:
    """The batch with each match's opening key, units made as the report makes them for a book
    declared a sample of openings (``units: "line"``): matches of one opening form one unit."""
    w = to_wide(df, players)
    design = pd.DataFrame(
        {"match_index": w.match_index, "first_seat": 0, "opening": pd.array(openings, "Int64")}
    )
    return with_matches(w, design, round_size, by_opening=True)


def rotate_pairs_table() -> pd.DataFrame:
    # Rotate: a sits in seat 0 in even matches, seat 1 in odd ones. a's points per pair:
    # pair 0 wins both (2), pair 1 wins as seat 0 and loses as seat 1 (1), pair 2 draws as seat 0
    # and wins as seat 1 (1½), pair 3 loses both (0).
    outcomes = [WIN, LOSS, WIN, WIN, DRAW, LOSS, LOSS, WIN]
    df = seat_frame(outcomes, ["a", "b"])
    before = df.copy(deep=True)
    w = to_wide(df, 2)
    pairs = swapped_pairs(w, "rotate")
    assert pairs is not None and pairs.shape == (4, 2)
    table = pairings(w, "rotate")
    pd.testing.assert_frame_equal(df, before)
    return table


def test_pentanomial_counts_score_and_elo_from_hand_made_pairs() -> None:
    row = rotate_pairs_table().iloc[0]
    assert (row["agent_a"], row["agent_b"]) == ("a", "b")
    assert (row["wins"], row["draws"], row["losses"]) == (4, 1, 3)
    assert row["pentanomial"] == [1, 0, 1, 1, 1]
    assert (row["model"], row["pairs"], row["games"], row["units"]) == ("pentanomial", 4, 8, 4)
    assert row["score"] == pytest.approx((0 + 0.5 + 0.75 + 1) / 4)
    assert row["elo"] == pytest.approx(400 * math.log10(9 / 7))  # score 9/16
    assert row["comparison"] == "agents"


def test_with_pairs_as_units_the_variance_is_the_pentanomial_one() -> None:
    row = rotate_pairs_table().iloc[0]
    pair_scores = np.array([1.0, 0.5, 0.75, 0.0])
    mean = float(pair_scores.mean())
    variance = float(pair_scores.var(ddof=1)) / 4  # the pentanomial variance of the mean
    n_eff, q = mean * (1 - mean) / variance, float(sps.t.ppf(0.975, 2))
    centre = (mean + q * q / (2 * n_eff)) / (1 + q * q / n_eff)
    half = q * math.sqrt(mean * (1 - mean) / n_eff + q**2 / (4 * n_eff**2)) / (1 + q * q / n_eff)
    assert (row["elo_low"], row["elo_high"]) == pytest.approx(
        (elo(centre - half), elo(centre + half)), rel=1e-12
    )
    stat = (mean - 0.5) / math.sqrt(0.25 / n_eff)
    assert row["los"] == pytest.approx(sps.t.cdf(stat, 2), rel=1e-12)
    assert row["p_value"] == pytest.approx(2 * sps.t.sf(stat, 2), rel=1e-12)


def fixed_table() -> tuple[pd.Series, pd.DataFrame]:
    w = to_wide(seat_frame([WIN] * 75 + [LOSS] * 25, ["a", "b"], policy="fixed"), 2)
    assert swapped_pairs(w, "fixed") is None
    return pairings(w, "fixed").iloc[0], agent_table(w, "fixed").set_index("agent")


def test_fixed_seats_with_different_agents_are_labelled_agents_and_seats() -> None:
    row, table = fixed_table()
    assert (row["model"], row["games"], row["pairs"], row["units"]) == ("trinomial", 100, 0, 100)
    assert row["pentanomial"] is None
    assert row["score"] == pytest.approx(0.75)
    assert row["elo"] == pytest.approx(400 * math.log10(3))
    assert row["comparison"] == "agents and seats" and "seat" in row["note"]
    assert set(table["comparison"]) == {"agents and seats"}
    assert table.loc["a", "elo"] == pytest.approx(400 * math.log10(3))
    assert table.loc["b", "elo"] == pytest.approx(-400 * math.log10(3))


def test_independent_games_give_the_clustered_interval_with_one_game_a_unit() -> None:
    row, table = fixed_table()
    est = clustered_score([1.0] * 75 + [0.0] * 25, list(range(100)))
    assert (row["elo_low"], row["elo_high"]) == pytest.approx(elo_ends(est), rel=1e-12)
    assert (table.loc["a", "ci_low"], table.loc["a", "ci_high"]) == pytest.approx(
        (est["lo"], est["hi"]), rel=1e-12
    )
    assert (table.loc["b", "elo_low"], table.loc["b", "elo_high"]) == pytest.approx(
        (-elo(est["hi"]), -elo(est["lo"])), rel=1e-12
    )


@pytest.mark.parametrize("policy", ["fixed", "rotate"])
def test_drawn_games_are_draws_whatever_the_points(policy: str) -> None:
    outcomes = [WIN] * 6 + [LOSS] * 2 + [DRAW_SEAT0_AHEAD] * 4 + [DRAW_SEAT1_AHEAD] * 2
    w = to_wide(seat_frame(outcomes, ["a", "b"], policy=policy), 2)
    # a's result in each match, read off the win shares (a sits in seat 0 unless rotated).
    seat_of_a = [0 if policy == "fixed" or i % 2 == 0 else 1 for i in range(len(outcomes))]
    results = []
    for (win, _), s in zip(outcomes, seat_of_a, strict=True):
        results.append(1.0 if win[s] > win[1 - s] else 0.5 if win[s] == win[1 - s] else 0.0)
    wdl = (results.count(1.0), results.count(0.5), results.count(0.0))
    assert sum(wdl) == len(outcomes) and wdl[1] == 6
    row = pairings(w, policy).iloc[0]
    assert (row["wins"], row["draws"], row["losses"]) == wdl
    assert row["score"] == pytest.approx(float(np.mean(results)))
    table = agent_table(w, policy).set_index("agent")
    assert table.loc["a", "field_score"] == pytest.approx(float(np.mean(results)))
    assert table.loc["b", "field_score"] == pytest.approx(1 - float(np.mean(results)))
    units = list(range(14)) if policy == "fixed" else [i // 2 for i in range(14)]
    est = clustered_score(results, units)
    assert (row["elo_low"], row["elo_high"]) == pytest.approx(elo_ends(est), rel=1e-12)
    assert row["los"] == pytest.approx(est["los"], rel=1e-12)


# --------------------------------------------------------------------------- units of sampling


def three_openings_batch() -> tuple[Wide, list[float], list[int]]:
    """20 seat-swapped pairs of hard vs medium replaying 3 openings (the seed-603 situation):
    on opening 0 hard wins both games, on 1 it wins only from seat 0, on 2 it wins from seat 0
    and draws from seat 1. Returns the batch, hard's result per match and its opening."""
    by_opening = {0: (WIN, LOSS), 1: (WIN, WIN), 2: (WIN, DRAW)}
    outcomes, openings = [], []
    for k in range(20):
        first, second = by_opening[k % 3]
        outcomes += [first, second]
        openings += [k % 3, k % 3]
    w = with_openings(seat_frame(outcomes, ["hard", "medium"]), 2, openings, 2)
    hard = [win[i % 2] for i, (win, _) in enumerate(outcomes)]
    return w, hard, openings


def test_pairs_sharing_three_openings_are_three_units() -> None:
    w, hard, openings = three_openings_batch()
    assert w.units is not None and w.units.count == 3 and w.units.distinct_openings == 3
    row = pairings(w, "balanced").iloc[0]
    assert (row["units"], row["model"], row["pairs"]) == (3, "clustered", 20)
    est = clustered_score(hard, openings)
    assert est["units"] == 3
    assert row["score"] == pytest.approx(est["mean"])
    assert (row["elo_low"], row["elo_high"]) == pytest.approx(elo_ends(est), rel=1e-12)
    # Twenty "independent" pairs would claim an interval a fraction of the width.
    naive = clustered_score(hard, [i // 2 for i in range(40)])
    assert est["hi"] - est["lo"] > 3 * (naive["hi"] - naive["lo"])
    table = agent_table(w, "balanced").set_index("agent")
    assert table.loc["hard", "units"] == 3 and table.loc["hard", "elo_model"] == "clustered"
    assert table.loc["hard", "elo_low"] == pytest.approx(row["elo_low"], rel=1e-12)


def test_one_opening_is_one_unit_and_gives_no_finite_interval() -> None:
    # Forty matches on one opening, the stronger agent winning every one (the seed-601 case).
    w = with_openings(seat_frame([WIN, LOSS] * 20, ["hard", "medium"]), 2, [7] * 40, 2)
    row = pairings(w, "balanced").iloc[0]
    assert row["score"] == 1.0 and row["elo"] == math.inf and row["units"] == 1
    assert math.isnan(row["elo_low"]) and math.isnan(row["elo_high"])
    assert math.isnan(row["p_value"]) and "one unit" in row["note"]
    table = agent_table(w, "balanced").set_index("agent")
    assert math.isnan(table.loc["hard", "ci_low"]) and "one unit" in table.loc["hard", "note"]


def test_copies_of_one_agent_in_fixed_seats_are_a_seat_effect_not_a_strength() -> None:
    # easy vs easy#2 in fixed seats, seat 0 winning 65 % (the self-play table of seed 102).
    rng = np.random.default_rng(102)
    outcomes = [WIN if rng.random() < 0.65 else LOSS for _ in range(200)]
    w = to_wide(seat_frame(outcomes, ["easy", "easy#2"], policy="fixed"), 2)
    table = agent_table(w, "fixed", groups=[0, 0])
    assert len(table) == 1  # one player, both copies pooled
    row = table.iloc[0]
    assert row["agent"] == "easy" and row["labels"] == ["easy", "easy#2"]
    assert row["score"] == 0.5 and math.isnan(row["elo"]) and math.isnan(row["elo_low"])
    assert (
        row["note"].startswith("no other agent to compare with")
        and "1/n by construction" in row["note"]
    )
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    pair = pairings(w, "fixed", groups=[0, 0]).iloc[0]
    assert pair["comparison"] == "seat effect" and "seat" in pair["note"]
    assert pair["score"] == pytest.approx(sum(o == WIN for o in outcomes) / 200)
    for key in ("elo", "elo_low", "elo_high", "los", "p_value", "p_holm"):
        assert math.isnan(pair[key]), key


def test_copies_with_varied_seats_are_a_same_agent_check() -> None:
    _, df = three_player_batch(["random", "greedy", "random#2"])
    w = to_wide(df, 3)
    table = pairings(w, "rotate", groups=[0, 1, 0]).set_index(["agent_a", "agent_b"])
    assert list(table.index) == [("random", "greedy"), ("random", "random#2")]
    twin = table.loc[("random", "random#2")]
    assert twin["comparison"] == "same agent" and math.isfinite(twin["elo_low"])
    pooled = table.loc[("random", "greedy")]
    assert pooled["games"] == 900 and pooled["wins"] + pooled["draws"] + pooled["losses"] == 1800
    agents = agent_table(w, "rotate", groups=[0, 1, 0]).set_index("agent")
    assert list(agents.index) == ["random", "greedy"] and agents.loc["random", "games"] == 1800


# --------------------------------------------------------------------------- three players


def three_player_batch(labels: list[str] | None = None) -> tuple[list, pd.DataFrame]:
    """900 matches of strong/mid/weak; the winner takes 1.0, the two losers 0 with any points."""
    rng = np.random.default_rng(2)
    outcomes = []
    strength = {0: 3.0, 1: 1.0, 2: 0.3}
    for i in range(900):
        seat_agent = [(s + i) % 3 for s in range(3)]
        weights = np.array([strength[a] for a in seat_agent])
        winner = rng.choice(3, p=weights / weights.sum())
        pts = tuple(float(10 if s == winner else rng.integers(0, 9)) for s in range(3))
        outcomes.append((tuple(float(s == winner) for s in range(3)), pts))
    return outcomes, seat_frame(outcomes, labels or ["strong", "mid", "weak"])


def three_player_results(outcomes: list) -> tuple[np.ndarray, np.ndarray, dict[int, list]]:
    """From the win shares: C[m, a, b] = a's result against b in match m; R[a, b, r] = how
    often a's result against b was r (0 loss, 1 draw, 2 win); each agent's per-game field
    score."""
    comp, record = np.zeros((900, 3, 3)), np.zeros((3, 3, 3), dtype=np.int64)
    field: dict[int, list[float]] = {0: [], 1: [], 2: []}
    for i, (win, _) in enumerate(outcomes):
        agent = [(s + i) % 3 for s in range(3)]
        for s in range(3):
            mine = []
            for t in (t for t in range(3) if t != s):
                r = 1.0 if win[s] > win[t] else 0.5 if win[s] == win[t] else 0.0
                comp[i, agent[s], agent[t]] += r
                record[agent[s], agent[t], int(2 * r)] += 1
                mine.append(r)
            field[agent[s]].append(sum(mine) / 2)
    return comp, record, field


def test_three_player_pairings_count_two_losers_as_a_draw() -> None:
    outcomes, df = three_player_batch()
    comp, record, _ = three_player_results(outcomes)
    table = pairings(to_wide(df, 3), "rotate").set_index(["agent_a", "agent_b"])
    names = ["strong", "mid", "weak"]
    for a in range(3):
        for b in range(a + 1, 3):
            row = table.loc[(names[a], names[b])]
            losses, draws, wins = record[a, b]
            assert draws > 0  # both lost to the third agent
            assert (row["wins"], row["draws"], row["losses"], row["games"]) == (
                wins,
                draws,
                losses,
                900,
            )
            assert row["score"] == pytest.approx(comp[:, a, b].sum() / 900)
            est = clustered_score(comp[:, a, b].tolist(), list(range(900)))
            assert row["los"] == pytest.approx(est["los"], rel=1e-9)
            assert row["p_value"] == pytest.approx(est["p"], rel=1e-9)


def test_pairings_p_values_are_holm_adjusted() -> None:
    _, df = three_player_batch()
    table = pairings(to_wide(df, 3), "rotate")
    holm = multipletests(table["p_value"].to_numpy(), method="holm")[1]
    assert table["p_holm"].to_numpy() == pytest.approx(holm, rel=1e-12)
    assert (table["p_holm"] >= table["p_value"]).all()


def bt_log_likelihood(comp: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Per match: Σ_{a≠b} C[a, b] · log P(a beats b), P from Bradley–Terry."""
    diff = theta[:, None] - theta[None, :]
    return (comp * -np.logaddexp(0.0, -diff)).sum(axis=(1, 2))


def sandwich_by_differences(comp: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Cluster-robust covariance of mean-zero strengths, from numerical derivatives."""
    h, k = 1e-5, theta.size
    eye = np.eye(k)

    def gradients(t: np.ndarray) -> np.ndarray:  # (M, k), one row per match
        return np.stack(
            [(bt_log_likelihood(comp, t + h * e) - bt_log_likelihood(comp, t - h * e)) / (2 * h)
             for e in eye], axis=1)  # fmt: skip

    scores = gradients(theta)
    hessian = np.stack(
        [(gradients(theta + h * e).sum(0) - gradients(theta - h * e).sum(0)) / (2 * h)
         for e in eye])  # fmt: skip
    g = comp.shape[0]
    # Strengths are defined up to a constant: keep the Hessian exactly singular along it (the
    # differences leave a residue of 1e-3 that the pseudo-inverse would blow up).
    centre = np.eye(k) - 1.0 / k
    bread = np.linalg.pinv(-centre @ (hessian + hessian.T) / 2 @ centre)
    return np.asarray(bread @ (g / (g - 1) * scores.T @ scores) @ bread)


def test_three_player_field_scores_and_strengths_from_results() -> None:
    outcomes, df = three_player_batch()
    comp, _, field = three_player_results(outcomes)
    w = to_wide(df, 3)
    agents = agent_table(w, "rotate").set_index("agent")
    for a, name in enumerate(["strong", "mid", "weak"]):
        est = clustered_score(field[a], list(range(900)))
        assert agents.loc[name, "field_score"] == pytest.approx(float(np.mean(field[a])))
        assert agents.loc[name, "elo"] == pytest.approx(elo(float(np.mean(field[a]))))
        assert (agents.loc[name, "elo_low"], agents.loc[name, "elo_high"]) == pytest.approx(
            elo_ends(est), rel=1e-9
        )
    theta = choix.ilsr_pairwise_dense(comp.sum(axis=0), alpha=0.01)
    theta = theta - theta.mean()
    scale = 400 / math.log(10)
    bt = strengths(w).set_index("agent").loc[["strong", "mid", "weak"]]
    assert bt["strength"].to_numpy() == pytest.approx(theta * scale, abs=1e-6)
    assert theta[0] > theta[1] > theta[2]
    se = np.sqrt(np.diag(sandwich_by_differences(comp, theta))) * scale
    q = float(sps.t.ppf(0.975, 898))
    assert bt["ci_low"].to_numpy() == pytest.approx(theta * scale - q * se, rel=1e-4)
    assert bt["ci_high"].to_numpy() == pytest.approx(theta * scale + q * se, rel=1e-4)
    assert set(bt["units"]) == {900}


def test_strengths_without_variance_between_units_have_no_interval() -> None:
    _, df = three_player_batch()
    w = to_wide(df, 3)
    one_unit = with_matches(
        w,
        pd.DataFrame({"match_index": w.match_index, "first_seat": 0,
                      "opening": pd.array([5] * w.matches, "Int64")}),
        3,
        by_opening=True,
    )  # fmt: skip
    bt = strengths(one_unit)
    assert bt["ci_low"].isna().all() and bt["ci_high"].isna().all()
    assert set(bt["units"]) == {1} and "one unit" in bt["note"].iloc[0]


def test_two_units_are_too_few_for_an_interval() -> None:
    # Two openings of unequal weight: a t interval on two units would claim far too much.
    outcomes = [WIN, LOSS] * 15 + [WIN, WIN] * 5
    w = with_openings(seat_frame(outcomes, ["hard", "medium"]), 2, [0] * 30 + [1] * 10, 2)
    row = pairings(w, "balanced").iloc[0]
    assert row["units"] == 2 and math.isnan(row["elo_low"]) and math.isnan(row["p_value"])
    assert row["note"].startswith("2 units of sampling: too few")
