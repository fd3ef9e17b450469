"""Agent strength: score and Elo per agent, head-to-head pairings, Bradley–Terry strengths.

Scores between two agents come from the game result (``returns()``, stored as win share), never
from points: in a meeting of two seats of one match, the larger win share wins (1), equal
shares draw (½), a smaller one loses (0). With two players this is exactly the win share.
Variances are sample variances (ddof=1) of the units the score averages.

``agent_table`` columns: agent, games, score (mean win share), ci_low, ci_high, interval,
field_score (mean result against every other seat), elo, elo_low, elo_high, elo_model
(pentanomial, trinomial, or pairwise: per-game variance of the field score), elo_games (the
matches the Elo uses). An Elo bound is infinite (null in JSON) when the score interval reaches
0 or 1.

``pairings`` columns: agent_a, agent_b, games (matches the score uses), wins, draws, losses
(from a's side, over the same matches), score, elo, elo_low, elo_high, los, model, pairs,
pentanomial (five pair-outcome counts or None). ``strengths`` columns: agent, strength (Elo
scale, mean zero), ci_low, ci_high (null below ``MIN_BOOTSTRAP_MATCHES`` matches).
"""

from __future__ import annotations

import math
from typing import Any

import choix
import numpy as np
import pandas as pd

from analysis import stats
from analysis.tidy import Wide, is_binary, meeting_results
from engines.seating import seat_swapped_pairs

BOOTSTRAP_SEED = 20240601
BOOTSTRAP_SAMPLES = 200
MIN_BOOTSTRAP_MATCHES = 30
"""Fewer matches than this give bootstrap intervals of a handful of distinct resamples."""
BT_ALPHA = 0.01
"""Small ridge penalty so Bradley–Terry strengths stay finite when an agent never wins."""
ELO_PER_NAT = 400.0 / math.log(10.0)


def pairwise_scores(w: Wide) -> np.ndarray:
    """(M, n) mean pairwise score of each seat against every other seat of its match."""
    n = w.players
    if n < 2:
        return np.full(w.win.shape, math.nan)
    # The diagonal (a seat against itself) counts ½ in the sum; take it back out.
    return np.asarray((meeting_results(w.win).sum(axis=2) - 0.5) / (n - 1), dtype=float)


def swapped_pairs(w: Wide, seat_policy: str) -> np.ndarray | None:
    """Row indices (P, 2) of seat-swapped pairs (matches 2k, 2k+1), or None if not paired."""
    if not seat_swapped_pairs(w.players, seat_policy) or w.matches < 2:
        return None
    pos = np.full(int(w.match_index.max()) + 1, -1, dtype=np.int64)
    pos[w.match_index] = np.arange(w.matches)
    first = w.match_index[w.match_index % 2 == 0]
    first = first[first + 1 < pos.size]
    a, b = pos[first], pos[first + 1]
    ok = b >= 0
    a, b = a[ok], b[ok]
    swapped = (w.agent[a, 0] == w.agent[b, 1]) & (w.agent[a, 1] == w.agent[b, 0])
    swapped &= w.agent[a, 0] != w.agent[a, 1]
    if not swapped.any():
        return None
    return np.stack([a[swapped], b[swapped]], axis=1)


def _pair_record(w: Wide, a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, seat of a, result of a for every (match, seat of a, seat of b) meeting of a and b."""
    rows, seats, scores = [], [], []
    n = w.players
    for s in range(n):
        for t in range(n):
            if s == t:
                continue
            hit = np.flatnonzero((w.agent[:, s] == a) & (w.agent[:, t] == b))
            if hit.size:
                ws, wt = w.win[hit, s], w.win[hit, t]
                res = np.where(ws > wt, 1.0, np.where(ws == wt, 0.5, 0.0))
                rows.append(hit)
                seats.append(np.full(hit.size, s))
                scores.append(res)
    if not rows:
        empty = np.zeros(0)
        return empty.astype(np.int64), empty.astype(np.int64), empty
    return np.concatenate(rows), np.concatenate(seats), np.concatenate(scores)


def pairs_of(w: Wide, pairs: np.ndarray, a: int, b: int) -> np.ndarray:
    """The seat-swapped pairs (rows of ``pairs``) in which agents ``a`` and ``b`` meet."""
    first = w.agent[pairs[:, 0]]
    return pairs[
        ((first[:, 0] == a) & (first[:, 1] == b)) | ((first[:, 0] == b) & (first[:, 1] == a))
    ]


def pentanomial_counts(w: Wide, pairs: np.ndarray, a: int, b: int) -> np.ndarray:
    """Counts of agent ``a``'s points (0, ½, 1, 1½, 2) over its seat-swapped pairs with ``b``."""
    pairs = pairs_of(w, pairs, a, b)
    seat_a_first = np.where(w.agent[pairs[:, 0], 0] == a, 0, 1)
    seat_a_second = 1 - seat_a_first
    total = w.win[pairs[:, 0], seat_a_first] + w.win[pairs[:, 1], seat_a_second]
    idx = np.clip(np.rint(total * 2).astype(np.int64), 0, 4)
    return np.bincount(idx, minlength=5)


def pairings(w: Wide, seat_policy: str) -> pd.DataFrame:
    """Head-to-head record of every pair of distinct agents (see module docstring)."""
    out: list[dict[str, Any]] = []
    present = np.unique(w.agent) if w.matches else np.zeros(0, np.int64)
    pairs = swapped_pairs(w, seat_policy)
    for i, a in enumerate(present):
        for b in present[i + 1 :]:
            rows, _, sc = _pair_record(w, int(a), int(b))
            if sc.size == 0:
                continue
            penta: list[int] | None = None
            if pairs is not None:
                counts = pentanomial_counts(w, pairs, int(a), int(b))
                if counts.sum() > 0:
                    penta = counts.tolist()
                    # Every figure of the row uses the same matches: those of complete pairs.
                    sc = sc[np.isin(rows, pairs_of(w, pairs, int(a), int(b)).ravel())]
            wins, draws, losses = int((sc == 1).sum()), int((sc == 0.5).sum()), int((sc == 0).sum())
            if penta is not None:
                score, var = stats.pentanomial(penta)
                elo, lo, hi = stats.elo_with_interval(score, var, sum(penta))
                model = "pentanomial"
            else:
                score, var = stats.trinomial(wins, draws, losses)
                elo, lo, hi = stats.elo_with_interval(score, var, sc.size)
                model = "trinomial"
            out.append(
                {
                    "agent_a": w.labels[a],
                    "agent_b": w.labels[b],
                    "games": int(sc.size),
                    "wins": wins,
                    "draws": draws,
                    "losses": losses,
                    "score": score,
                    "elo": elo,
                    "elo_low": lo,
                    "elo_high": hi,
                    "los": stats.los(wins, losses),
                    "model": model,
                    "pairs": sum(penta) if penta is not None else 0,
                    "pentanomial": penta,
                }
            )
    columns = [
        "agent_a", "agent_b", "games", "wins", "draws", "losses", "score", "elo", "elo_low",
        "elo_high", "los", "model", "pairs", "pentanomial",
    ]  # fmt: skip
    return pd.DataFrame(out, columns=columns)


def agent_table(w: Wide, seat_policy: str) -> pd.DataFrame:
    """One row per agent: games, score with interval, Elo versus the field with interval."""
    ps = pairwise_scores(w)
    pairs = swapped_pairs(w, seat_policy)
    binary = is_binary(w.win)
    rows: list[dict[str, Any]] = []
    for a in np.unique(w.agent) if w.matches else []:
        mask = w.agent == a
        ws = w.win[mask]
        games = int(ws.size)
        score = float(ws.mean())
        lo, hi, interval = stats.share_interval(ws, binary)
        field = ps[mask]
        fscore = float(field.mean()) if w.players > 1 else math.nan
        others = np.unique(w.agent)
        others = others[others != a]
        if pairs is not None and others.size == 1:
            penta = pentanomial_counts(w, pairs, int(a), int(others[0]))
            pscore, var = stats.pentanomial(penta.tolist())
            elo, elo_lo, elo_hi = stats.elo_with_interval(pscore, var, int(penta.sum()))
            model, elo_games = "pentanomial", 2 * int(penta.sum())
        else:
            var = float(field.var(ddof=1)) if games > 1 else math.nan
            elo, elo_lo, elo_hi = stats.elo_with_interval(fscore, var, games)
            model, elo_games = ("trinomial" if w.players == 2 else "pairwise"), games
        rows.append(
            {
                "agent": w.labels[a],
                "games": games,
                "score": score,
                "ci_low": lo,
                "ci_high": hi,
                "interval": interval,
                "field_score": fscore,
                "elo": elo,
                "elo_low": elo_lo,
                "elo_high": elo_hi,
                "elo_model": model,
                "elo_games": elo_games,
            }
        )
    columns = [
        "agent", "games", "score", "ci_low", "ci_high", "interval", "field_score", "elo",
        "elo_low", "elo_high", "elo_model", "elo_games",
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _comparison_patterns(w: Wide, n_agents: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (agents, results) match patterns: their comparison matrices and counts."""
    key = np.concatenate([w.agent.astype(float), w.win], axis=1)
    uniq, counts = np.unique(key, axis=0, return_counts=True)
    n = w.players
    agents = uniq[:, :n].astype(np.int64)
    results = meeting_results(uniq[:, n:])
    mats = np.zeros((uniq.shape[0], n_agents, n_agents))
    for s in range(n):
        for t in range(n):
            if s != t:
                k = np.flatnonzero(agents[:, s] != agents[:, t])
                np.add.at(mats, (k, agents[k, s], agents[k, t]), results[k, s, t])
    return mats, counts


def strengths(w: Wide, samples: int = BOOTSTRAP_SAMPLES) -> pd.DataFrame:
    """Bradley–Terry strengths (Elo scale, mean zero) with bootstrap 95 % intervals.

    Every ordered pair of seats held by different agents in a match is one comparison, won by
    the larger win share (a tie counts ½ each way); strengths are fitted by choix's ILSR with a
    small ridge penalty. The bootstrap resamples whole matches; below
    ``MIN_BOOTSTRAP_MATCHES`` matches the intervals are null.
    """
    columns = ["agent", "strength", "ci_low", "ci_high"]
    if w.matches == 0:
        return pd.DataFrame(columns=columns)
    present = np.unique(w.agent)
    if present.size < 2:
        return pd.DataFrame(columns=columns)
    n_agents = int(w.agent.max()) + 1
    mats, counts = _comparison_patterns(w, n_agents)

    def fit(weights: np.ndarray) -> np.ndarray:
        comp = np.tensordot(weights.astype(float), mats, axes=1)[np.ix_(present, present)]
        theta = choix.ilsr_pairwise_dense(comp, alpha=BT_ALPHA)
        return np.asarray(theta - theta.mean()) * ELO_PER_NAT

    est = fit(counts)
    if w.matches < MIN_BOOTSTRAP_MATCHES:
        nothing = np.full(est.shape, math.nan)
        return pd.DataFrame(
            {"agent": [w.labels[a] for a in present], "strength": est, "ci_low": nothing,
             "ci_high": nothing},
            columns=columns,
        )  # fmt: skip
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    boots = np.array(
        [fit(rng.multinomial(int(counts.sum()), counts / counts.sum())) for _ in range(samples)]
    )
    lo, hi = np.percentile(boots, [2.5, 97.5], axis=0)
    return pd.DataFrame(
        {
            "agent": [w.labels[a] for a in present],
            "strength": est,
            "ci_low": lo,
            "ci_high": hi,
        },
        columns=columns,
    )
