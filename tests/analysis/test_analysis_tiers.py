"""Les Alvéoles' "tiers that separate winners": standard errors clustered by match (and by unit
where matches share an opening), checked against statsmodels' cluster-robust OLS."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from analysis_data import CLASSIC_VALUES, alveoles_outcome, alveoles_stats, store_batch
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from analysis.games.alveoles import alveoles_section
from analysis.report import build_report
from analysis.tidy import to_wide, with_matches
from storage.db import get_engine

TIERS = sorted(set(CLASSIC_VALUES), reverse=True)


def three_player_stats(matches: int, seed: int) -> list[dict]:
    """Random owners, seat 0 favoured on the 50s: every square to a seat at random."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(matches):
        owners = [
            int(rng.choice(3, p=[0.5, 0.25, 0.25] if v == 50 else [1 / 3] * 3))
            for v in CLASSIC_VALUES
        ]
        out.append(alveoles_stats(owners, rows=(0, 0, 0), players=3))
    return out


def cluster_fit(stats: list[dict], groups: np.ndarray, tier: int) -> sm.regression.linear_model:
    """OLS of every seat's share of ``tier`` on a winner indicator, clustered by ``groups``."""
    shares, winner, cluster = [], [], []
    for m, st in enumerate(stats):
        win, _ = alveoles_outcome(st)
        taken = [seat["squares_by_value"][str(tier)] for seat in st["per_seat"]]
        total = sum(taken)
        for s, got in enumerate(taken):
            shares.append(got / total)
            winner.append(float(win[s] > 0))
            cluster.append(groups[m])
    x = sm.add_constant(np.asarray(winner))
    return sm.OLS(np.asarray(shares), x).fit(
        cov_type="cluster", cov_kwds={"groups": np.asarray(cluster)}, use_t=True
    )


def section(stats: list[dict], openings: list[int] | None = None) -> dict:
    w = to_wide(
        pd.DataFrame(
            [
                (m, s, f"p{s}", s, p, share, 1)
                for m, st in enumerate(stats)
                for s, (share, p) in enumerate(zip(*alveoles_outcome(st), strict=True))
            ],
            columns=["match_index", "seat", "agent", "agent_index", "points", "win_share", "rank"],
        ),
        3,
    )
    if openings is not None:
        design = pd.DataFrame(
            {"match_index": w.match_index, "first_seat": 0, "opening": pd.array(openings, "Int64")}
        )
        w = with_matches(w, design, 1, by_opening=True)
    frame = pd.DataFrame({"match_index": range(len(stats)), "stats": stats})
    return alveoles_section(frame, w)


@pytest.mark.parametrize("shared_openings", [False, True])
def test_tier_standard_errors_are_statsmodels_cluster_robust_ones(shared_openings: bool) -> None:
    stats = three_player_stats(120, seed=201)
    openings = [m // 4 for m in range(120)] if shared_openings else None
    groups = np.asarray(openings) if openings else np.arange(120)
    rows = {d["tier"]: d for d in section(stats, openings)["deciding_tiers"]}
    raw = []
    for tier in TIERS:
        fit = cluster_fit(stats, groups, tier)
        row = rows[tier]
        assert row["difference"] == pytest.approx(fit.params[1], rel=1e-12, abs=1e-15)
        assert row["se"] == pytest.approx(fit.bse[1], rel=1e-10)
        # statsmodels' t is on G − 1; the project's rule on units of one size is G − 2.
        dfree = len(set(groups.tolist())) - 2
        half = float(sps.t.ppf(0.975, dfree)) * fit.bse[1]
        ci = (fit.params[1] - half, fit.params[1] + half)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(ci, rel=1e-9)
        p = float(2 * sps.t.sf(abs(fit.params[1] / fit.bse[1]), dfree))
        assert row["p_value"] == pytest.approx(p, rel=1e-9)
        assert row["units"] == len(set(groups.tolist()))
        raw.append(p)
    holm = multipletests(raw, method="holm")[1]
    assert [rows[t]["p_holm"] for t in TIERS] == pytest.approx(holm, rel=1e-9)


def test_the_seats_of_a_match_widen_the_interval_over_independent_seats() -> None:
    # A winner's share and its losers' shares of one tier add up to one: treating the three
    # seats as independent understates the standard error (the 18–32 %).
    stats = three_player_stats(300, seed=202)
    row = {d["tier"]: d for d in section(stats)["deciding_tiers"]}[50]
    shares, winner = [], []
    for st in stats:
        win, _ = alveoles_outcome(st)
        taken = [seat["squares_by_value"]["50"] for seat in st["per_seat"]]
        for s, got in enumerate(taken):
            shares.append(got / sum(taken))
            winner.append(win[s] > 0)
    a = np.asarray(shares)[np.asarray(winner)]
    b = np.asarray(shares)[~np.asarray(winner)]
    independent = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert row["se"] > 1.1 * independent


def test_a_stored_three_player_batch_reports_clustered_tiers(migrated_sqlite_url: str) -> None:
    stats = three_player_stats(60, seed=203)
    _, bid = store_batch(
        migrated_sqlite_url, game="alveoles", players=3, labels=["greedy", "random", "greedy#2"],
        outcomes=[alveoles_outcome(s) for s in stats], stats=lambda i: stats[i],
        openings=lambda i: i, moves=lambda i: (f"m{i}",),
    )  # fmt: skip
    report = build_report(get_engine(migrated_sqlite_url), bid)
    # Rotate over three players: a round of three matches is one unit.
    groups = np.arange(60) // 3
    for row in report["game"]["deciding_tiers"]:
        fit = cluster_fit(stats, groups, row["tier"])
        assert row["se"] == pytest.approx(fit.bse[1], rel=1e-10)
        assert row["units"] == 20
