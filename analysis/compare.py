"""Comparing two batches: difference of first-player advantage and of each seat's win share.

Typical uses: two Alvéoles layouts, two agent line-ups, two options of one game. Both batches
must be of one game with one player count (seat by seat differences need the same seats). The two
batches are independent samples, so each difference gets an unpooled normal (Wald) 95 % interval
and a two-sided z-test from the per-game variances.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlalchemy import Engine

from analysis import frames, stats
from analysis.report import clean
from analysis.tidy import Wide, to_wide
from engines.core import OptionError
from storage import crud


def _meta(batch: Any, w: Wide) -> dict[str, Any]:
    return {
        "id": batch.id,
        "game": batch.game,
        "players": batch.players,
        "options": batch.options,
        "labels": batch.labels,
        "matches": w.matches,
    }


def _diff(a: np.ndarray, b: np.ndarray, shift_a: float = 0.0, shift_b: float = 0.0) -> dict:
    ma, mb = (float(a.mean()) if a.size else np.nan), (float(b.mean()) if b.size else np.nan)
    est, lo, hi, p = stats.two_sample_difference(
        ma - shift_a,
        float(a.var()) if a.size else np.nan,
        a.size,
        mb - shift_b,
        float(b.var()) if b.size else np.nan,
        b.size,
    )
    return {
        "a": ma - shift_a,
        "b": mb - shift_b,
        "difference": est,
        "ci_low": lo,
        "ci_high": hi,
        "p_value": p,
    }


def compare_wide(wa: Wide, wb: Wide) -> dict[str, Any]:
    """Differences (a − b) of first-player advantage and per-seat win shares."""
    fpa = _diff(wa.win[:, 0], wb.win[:, 0], 1.0 / wa.players, 1.0 / wb.players)
    seats = []
    for s in range(min(wa.players, wb.players)):
        seats.append({"seat": s, **_diff(wa.win[:, s], wb.win[:, s])})
    return {"first_player_advantage": fpa, "seats": seats}


def check_comparable(a: Any, b: Any) -> None:
    """Raise ``OptionError`` (field ``b``) unless both batches are of one game and player count."""
    if a.game != b.game:
        raise OptionError(
            f"batches {a.id} ({a.game}) and {b.id} ({b.game}) are of different games; "
            "compare batches of one game",
            field="b",
        )
    if a.players != b.players:
        raise OptionError(
            f"batches {a.id} ({a.players} players) and {b.id} ({b.players} players) have "
            "different player counts; seat by seat differences need the same seats",
            field="b",
        )


def compare(engine: Engine, batch_a: str, batch_b: str) -> dict[str, Any]:
    """Compare two stored batches (full ids); ``NotFound`` if either is missing,
    ``OptionError`` if they are of different games or player counts."""
    batches = []
    for name in (batch_a, batch_b):
        batch = crud.get_batch(engine, name)
        if batch is None:
            raise crud.NotFound(f"no batch {name!r}")
        batches.append(batch)
    check_comparable(*batches)
    found = []
    for batch in batches:
        long = frames.seat_results_numeric(engine, batch.id, batch.labels)
        found.append((batch, to_wide(long, batch.players)))
    (ba, wa), (bb, wb) = found
    result = {
        "a": _meta(ba, wa),
        "b": _meta(bb, wb),
        **compare_wide(wa, wb),
        "method": "difference a − b; unpooled normal (Wald) 95 % interval and two-sided z-test "
        "from per-game variances; first-player advantage = seat 0's share − 1/n of each batch",
    }
    cleaned: dict[str, Any] = clean(result)
    return cleaned
