"""Synthetic batches for the report tests: seat results with known answers, stored through the
real storage layer (``create_batch`` + ``write_chunk``) in a throwaway SQLite file."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats as sps
from sqlalchemy import Engine

from engines.seating import seat_agents
from storage import crud
from storage.db import get_engine, upgrade
from storage.models import BatchPlan
from storage.records import MatchRecord, SeatRecord
from storage.settings import Settings

Outcome = tuple[Sequence[float], Sequence[float]]
"""(win shares per seat, points per seat) of one match."""


def ranks_of(win: Sequence[float], points: Sequence[float]) -> list[int]:
    """Competition ranks: higher win share first, then higher points (1 = best)."""
    keys = [(w, p) for w, p in zip(win, points, strict=True)]
    return [1 + sum(1 for o in keys if o > k) for k in keys]


def agent_at(seat: int, match_index: int, agents: int, policy: str) -> int:
    """The agent index in ``seat`` of match ``match_index`` under the seat policy."""
    if policy == "balanced":
        return seat_agents(agents, policy, match_index)[seat]
    return (seat + match_index) % agents if policy == "rotate" else seat % agents


def seat_frame(
    outcomes: Sequence[Outcome], labels: Sequence[str], policy: str = "rotate"
) -> pd.DataFrame:
    """Long seat-results frame (``analysis.frames.seat_results`` columns) for ``outcomes``."""
    rows = []
    n = len(outcomes[0][0]) if outcomes else 0
    for i, (win, pts) in enumerate(outcomes):
        ranks = ranks_of(win, pts)
        for s in range(n):
            a = agent_at(s, i, len(labels), policy)
            rows.append((i, s, labels[a], a, float(pts[s]), float(win[s]), ranks[s]))
    return pd.DataFrame(
        rows, columns=["match_index", "seat", "agent", "agent_index", "points", "win_share", "rank"]
    )


def two_player_outcomes(m: int, p_seat0: float, draw: float = 0.0, seed: int = 0) -> list[Outcome]:
    """Matches where seat 0 wins with probability ``p_seat0`` among decisive games."""
    rng = np.random.default_rng(seed)
    out: list[Outcome] = []
    for u, v in zip(rng.random(m), rng.random(m), strict=True):
        if u < draw:
            out.append(((0.5, 0.5), (0.5, 0.5)))
        elif v < p_seat0:
            out.append(((1.0, 0.0), (1.0, 0.0)))
        else:
            out.append(((0.0, 1.0), (0.0, 1.0)))
    return out


def store_batch(
    url: str,
    *,
    game: str,
    players: int,
    labels: Sequence[str],
    outcomes: Sequence[Outcome],
    seat_policy: str = "rotate",
    plies: Callable[[int], int] = lambda i: 20 + i % 7,
    ended_by: Callable[[int], str] = lambda i: "normal",
    stats: Callable[[int], dict[str, Any]] = lambda i: {},
    openings: Callable[[int], int | None] = lambda i: None,
    moves: Callable[[int], tuple[str, ...]] = lambda i: (),
    failed: Sequence[int] = (),
    stop_rule: dict[str, Any] | None = None,
    chunk: int = 500,
    options: dict[str, Any] | None = None,
    specs: Sequence[dict[str, Any]] | None = None,
) -> tuple[Engine, str]:
    """Store a batch with the given per-match outcomes at ``url``; return (engine, batch id).

    ``plies``, ``ended_by``, ``stats``, ``openings`` (the stored opening key) and ``moves`` (by
    default none: every match then replays one game) are called with the outcome's index;
    the match indices listed in ``failed`` are stored as failed matches in between. ``specs``
    are the agents' specs (by default one spec per label, all different).
    """
    upgrade(url)
    engine = get_engine(url)
    plan = BatchPlan(
        game=game,
        players=players,
        options=options or {},
        agents=list(specs) if specs else [{"name": label} for label in labels],
        labels=list(labels),
        matches=len(outcomes) + len(failed),
        seed=1,
        seat_policy=seat_policy,
        chunk_size=chunk,
        max_plies=1000,
        stop_rule=stop_rule,
    )
    batch = crud.create_batch(engine, plan=plan)
    failed_set = set(failed)
    records: list[MatchRecord] = []
    it = iter(outcomes)
    total = plan.matches
    for i in range(total):
        if i in failed_set:
            records.append(MatchRecord(i, i, False, 0, "error", (), {}, 0.0, "ValueError: boom"))
            continue
        j = len(records) - sum(1 for r in records if not r.ok)  # index into ``outcomes``
        win, pts = next(it)
        ranks = ranks_of(win, pts)
        seats = []
        for s in range(players):
            a = agent_at(s, i, len(labels), seat_policy)
            seats.append(SeatRecord(s, labels[a], a, float(pts[s]), float(win[s]), ranks[s]))
        records.append(
            MatchRecord(
                i, i, True, plies(j), ended_by(j), moves(j), stats(j), 0.01, None, seats,
                opening=openings(j),
            )
        )  # fmt: skip
    for start in range(0, total, chunk):
        stop = min(start + chunk, total)
        part = [r for r in records if start <= r.match_index < stop]
        crud.write_chunk(
            engine, batch_id=batch.id, start=start, stop=stop, records=part, duration=0.1
        )
    return engine, batch.id


CLASSIC_ROWS_TOP_FIRST = (
    (15, 1, 1, 10, 1, 1, 1, 15),
    (1, 30, 1, 5, 5, 1, 1, 1),
    (1, 1, 20, 1, 1, 20, 1, 1),
    (1, 5, 1, 50, 50, 1, 5, 1),
    (1, 5, 1, 50, 50, 1, 5, 1),
    (1, 1, 20, 1, 1, 20, 1, 1),
    (1, 1, 1, 5, 5, 1, 30, 1),
    (15, 1, 1, 1, 10, 1, 1, 15),
)
CLASSIC_VALUES = [v for row in reversed(CLASSIC_ROWS_TOP_FIRST) for v in row]
"""Square values in a1..h1, a2..h2, ... order."""


def alveoles_stats(owners: Sequence[int], rows: Sequence[int] = (0, 0), players: int = 2) -> dict:
    """A stats() dict like the engine's for a finished game with the given square owners."""
    tiers = sorted(set(CLASSIC_VALUES), reverse=True)
    per_seat = []
    for s in range(players):
        by_value = {str(t): 0 for t in tiers}
        for sq, o in enumerate(owners):
            if o == s:
                by_value[str(CLASSIC_VALUES[sq])] += 1
        square_points = sum(CLASSIC_VALUES[sq] for sq, o in enumerate(owners) if o == s)
        per_seat.append(
            {
                "points": square_points + 100 * rows[s],
                "square_points": square_points,
                "squares": sum(by_value.values()),
                "squares_by_value": by_value,
                "row_bonuses": rows[s],
                "column_bonuses": 0,
                "block_bonuses": 0,
                "bonus_points": 100 * rows[s],
                "replays": 3,
            }
        )
    return {"per_seat": per_seat, "owners": "".join(str(o) for o in owners)}


def alveoles_outcome(st: dict) -> Outcome:
    """(win shares, points) of a stats dict: highest points win, ties share."""
    pts = [float(p["points"]) for p in st["per_seat"]]
    top = max(pts)
    winners = [p == top for p in pts]
    share = 1.0 / sum(winners)
    return ([share if w else 0.0 for w in winners], pts)


def stored_alveoles_report(url: str, matches: int, p_seat0: float, seed: int) -> dict:
    """The report of a stored two-player Alvéoles batch (greedy vs random) whose squares each
    go to seat 0 with probability ``p_seat0``."""
    from analysis.report import build_report

    rng = np.random.default_rng(seed)
    stats = [
        alveoles_stats([int(rng.random() < p_seat0) for _ in range(64)]) for _ in range(matches)
    ]
    _, bid = store_batch(
        url,
        game="alveoles",
        players=2,
        labels=["greedy", "random"],
        outcomes=[alveoles_outcome(s) for s in stats],
        stats=lambda i: stats[i],
    )
    return build_report(get_engine(url), bid)


def random_plan(settings: Settings, matches: int = 2) -> BatchPlan:
    """A plan of random Alquerque players, validated with ``settings`` as a request is."""
    from workers.batches import plan_batch

    return plan_batch(
        game="alquerque",
        players=None,
        options={},
        agents=["random"],
        matches=matches,
        seed=1,
        seat_policy=None,
        chunk_size=None,
        max_plies=None,
        settings=settings,
    )


def played_batch(url: str, game: str, agents: list[str], matches: int) -> str:
    """A batch really played by the workers' code, stored through storage."""
    from storage import crud
    from storage.db import get_engine
    from workers.batches import plan_batch
    from workers.play import play_chunk

    plan = plan_batch(
        settings=Settings(),
        game=game,
        players=None,
        options={},
        agents=agents,
        matches=matches,
        seed=5,
        seat_policy=None,
        chunk_size=None,
        max_plies=None,
    )
    engine = get_engine(url)
    batch = crud.create_batch(engine, plan=plan)
    records = play_chunk(batch, 0, matches)
    crud.write_chunk(
        engine, batch_id=batch.id, start=0, stop=matches, records=records, duration=0.1
    )
    crud.set_status(engine, batch.id, "done")
    return batch.id


def clustered_score(values: Sequence[float], units: Sequence[int]) -> dict[str, float]:
    """Mean of ``values`` in [0, 1] over units, as the agent figures document it.

    The variance is statsmodels' cluster-robust one (OLS on a constant, ``cov_type="cluster"``);
    the interval is Wilson's with the effective sample size mean·(1 − mean)/variance (the
    number of units when the variance is 0) and Student's t in place of z, on Kish's effective
    number of units (Σ size)² / Σ size² minus two, at least one (units − 2 when every unit
    holds as many values); ``p`` and ``los`` are the t test of ½ with the same effective size.
    """
    mean = sum(values) / len(values)
    groups = len(set(units))
    if groups < 2:
        nan = math.nan
        return {"mean": mean, "lo": nan, "hi": nan, "p": nan, "los": nan, "units": groups}
    fit = sm.OLS(np.asarray(values), np.ones(len(values))).fit(
        cov_type="cluster", cov_kwds={"groups": np.asarray(units)}
    )
    variance = float(fit.bse[0]) ** 2
    n_eff = mean * (1 - mean) / variance if variance > 1e-15 and 0 < mean < 1 else groups
    sizes = np.unique(np.asarray(units), return_counts=True)[1].astype(float)
    df = max(sizes.sum() ** 2 / (sizes**2).sum() - 2, 1.0)
    q = float(sps.t.ppf(0.975, df))
    k = q * q / n_eff
    centre = (mean + k / 2) / (1 + k)
    half = q * math.sqrt(mean * (1 - mean) / n_eff + k / (4 * n_eff)) / (1 + k)
    stat = (mean - 0.5) / math.sqrt(0.25 / n_eff)
    return {
        "mean": mean,
        "lo": 0.0 if mean == 0 else centre - half,
        "hi": 1.0 if mean == 1 else centre + half,
        "p": float(2 * sps.t.sf(abs(stat), df)),
        "los": float(sps.t.cdf(stat, df)),
        "units": groups,
    }
