"""What the dashboard shows of a batch in one row: progress, rate, ETA and its headline.

A page of batches costs three grouped queries (chunk tallies, the starting player's sums by
round or opening, distinct games) plus one progress read per running batch for its rate and
ETA, however many matches the batches hold; and one more over the matches of the batches whose
units are not their rounds (``starter_sums_of``). The headline's figure and interval come from
``analysis.independence.headline`` over the report's units (``analysis.units``), so the list
and the report give one interval for one batch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import Engine

from analysis import stats
from analysis.formatting import num, pct, span
from analysis.independence import headline as starter_headline
from analysis.stop_rule import sprt_status
from analysis.stopping import SprtRule, of_batch
from analysis.units import links_games, links_openings, sampling_units
from engines.seating import opening_round
from storage.crud import progress
from storage.models import Batch, BatchStatus
from storage.queries import BatchTally, batch_tallies, starter_matches, starter_sums
from storage.soundness import batch_problem

LIVE = frozenset({BatchStatus.QUEUED, BatchStatus.RUNNING})
"""Statuses whose rows the pages keep updating."""


def first_player_headline(
    sums: stats.UnitSums | None, players: int, seat_policy: str
) -> dict[str, Any] | None:
    """The starting player's win share minus 1/players with its 95 % interval, as the analysis
    computes it from sums over the batch's units (``analysis.independence.headline``)."""
    if sums is None:
        return None
    return starter_headline(sums, players, seat_policy)


def _sprt_headline(engine: Engine, batch: Batch) -> str:
    if batch.decision:
        return f"SPRT: {batch.decision.get('verdict', 'decided')}"
    state = sprt_status(engine, batch)
    if state is None:
        return ""
    return (
        f"SPRT: LLR {num(state['llr'], 2)} in ({num(state['lower'], 2)}, "
        f"{num(state['upper'], 2)}), {num(state['games'])} games"
    )


def _eta_text(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "—"
    seconds = round(seconds)
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def batch_row(
    engine: Engine, batch: Batch, tally: BatchTally | None, sums: stats.UnitSums | None
) -> dict[str, Any]:
    """One batch as the list and the live updates show it (plain JSON types only)."""
    done = tally.done if tally else 0
    failed = tally.failed if tally else 0
    rate = eta = None
    if batch.status in LIVE:
        p = progress(engine, batch.id)
        done, failed, rate, eta = p.done, p.failed, p.rate, p.eta_seconds
    finished = done + failed
    fpa = first_player_headline(sums, batch.players, batch.seat_policy)
    if fpa is not None and not _finite(fpa):
        # Sums over stored results no match can produce (infinite points, shares past 1):
        # the batch's page and report name the row.
        return unreadable_row(batch, "its stored results hold values no match can produce")
    if isinstance(of_batch(batch), SprtRule):
        headline = _sprt_headline(engine, batch)
    elif fpa is not None:
        headline = f"first player {pct(fpa['estimate'])} ({span(fpa['ci_low'], fpa['ci_high'])})"
        if fpa["warning"]:
            headline += f" · only {fpa['warning']}"
    else:
        headline = ""
    return {
        "id": batch.id,
        "game": batch.game,
        "players": batch.players,
        "labels": list(batch.labels),
        "agents": " vs ".join(batch.labels),
        "status": str(batch.status),
        "live": batch.status in LIVE,
        "stopped_early": batch.stopped_early,
        "matches": batch.matches,
        "done": done,
        "failed": failed,
        "finished": finished,
        "fraction": min(1.0, finished / batch.matches) if batch.matches else 0.0,
        "rate": rate,
        "rate_text": f"{num(rate, 1)}/s" if rate else "—",
        "eta_text": _eta_text(eta) if batch.status in LIVE else "—",
        "headline": headline,
        "first_player": fpa,
        "created_at": batch.created_at.strftime("%Y-%m-%d %H:%M"),
        "readable": True,
    }


def _finite(figures: dict[str, Any]) -> bool:
    return all(math.isfinite(v) for v in figures.values() if isinstance(v, float))


def unreadable_row(batch: Batch, problem: str) -> dict[str, Any]:
    """A batch whose stored rows cannot be read (``storage.soundness``), as the list shows it:
    its id, game and creation as stored, and the problem in place of a headline."""
    created = batch.created_at
    return {
        "id": str(batch.id),
        "game": str(batch.game),
        "players": batch.players if isinstance(batch.players, int) else "?",
        "labels": [],
        "agents": "—",
        "status": "unreadable",
        "live": False,
        "stopped_early": False,
        "matches": 0,
        "done": 0,
        "failed": 0,
        "finished": 0,
        "fraction": 0.0,
        "rate": None,
        "rate_text": "—",
        "eta_text": "—",
        "headline": f"cannot be read: {problem}; delete it",
        "first_player": None,
        "created_at": created.strftime("%Y-%m-%d %H:%M") if hasattr(created, "strftime") else "—",
        "readable": False,
    }


def batch_rows(engine: Engine, batches: Sequence[Batch]) -> list[dict[str, Any]]:
    """``batch_row`` of each batch, from two grouped queries over the whole page; a batch
    whose row cannot be read gets ``unreadable_row``."""
    problems = {b.id: batch_problem(b) for b in batches}
    sound = [b for b in batches if problems[b.id] is None]
    tallies = batch_tallies(engine, [b.id for b in sound])
    sums = starter_sums_of(engine, sound)
    return [
        batch_row(engine, b, tallies.get(b.id), sums.get(b.id))
        if problems[b.id] is None
        else unreadable_row(b, str(problems[b.id]))
        for b in batches
    ]


def starter_sums_of(engine: Engine, batches: Sequence[Batch]) -> dict[str, stats.UnitSums]:
    """The starting player's ``UnitSums`` of each batch over its units of sampling, the
    report's (``analysis.units.sampling_units``).

    Where the units are the design's rounds, grouped in SQL (``storage.queries.starter_sums``):
    a batch that draws its matches (random openings, noise on a player), or that replays no
    game twice. Where matches join through a shared game or opening, the units are connected
    sets no SQL grouping gives, so its matches' keys are read and joined as the report joins
    them (``storage.queries.starter_matches``)."""
    rounds = {b.id: opening_round(b.players, b.seat_policy) for b in batches}
    by_opening = {b.id for b in batches if links_openings(b.variation)}
    grouped = starter_sums(engine, rounds, by_opening)
    by_game = {b.id for b in batches if links_games(b.variation)}
    # ``grouped``'s distinct move lists below its matches: some game was replayed (or some
    # moves were not recorded; reading the keys then gives the rounds, as the SQL would).
    keyed = [
        b
        for b in batches
        if b.id in grouped
        and (b.id in by_opening or (b.id in by_game and grouped[b.id][8] < grouped[b.id][0]))
    ]
    sums = {batch_id: stats.UnitSums(*row[:8]) for batch_id, row in grouped.items()}
    rows = starter_matches(engine, [b.id for b in keyed])
    for b in keyed:
        if b.id not in rows:
            continue
        matches = rows[b.id]
        units = sampling_units(
            np.array(matches.match_index, np.int64),
            np.array(matches.opening, object),
            rounds[b.id],
            by_opening=b.id in by_opening,
            game=np.array(matches.game, object) if b.id in by_game else None,
        )
        sums[b.id] = stats.unit_sums(np.array(matches.win_share, np.float64), units.label)
    return sums
