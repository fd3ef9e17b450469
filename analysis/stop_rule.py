"""A batch's stop rule against its stored results: the SPRT state, and the decision to stop.

The rule is checked after every written chunk (``workers.lifecycle``). Counts are the chunk
rows' stored ones summed (one small query, however large the batch); a batch with a chunk
written before counts were stored is counted from its seat results (``frames.pair_outcomes``).
The arithmetic is ``analysis.sprt``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine

from analysis import frames
from analysis.sprt import DEFAULTS, sprt_state, uses_pairs
from storage.crud import progress, stop_count_totals


def _rule(batch: Any) -> dict[str, Any] | None:
    rule = batch.stop_rule
    if not rule or rule.get("type", "sprt") != "sprt":
        return None
    return {**DEFAULTS, **rule}


def _state(engine: Engine, batch: Any, rule: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """The SPRT state and the matches written it covers.

    Counts are the chunk rows' stored ones summed (one small query, however large the batch);
    for a batch with a chunk written before counts were stored, they come from its seat
    results instead.
    """
    model = "pentanomial" if uses_pairs(batch) else "trinomial"
    size = 5 if model == "pentanomial" else 3
    totals = stop_count_totals(engine, batch.id)
    if totals.counts is not None:
        counts = totals.counts[:size]
        written = totals.matches
    else:
        a, b = rule["agents"]
        counts = frames.pair_outcomes(engine, batch.id, a, b, pairs=model == "pentanomial")
        written = progress(engine, batch.id).finished_matches
    return sprt_state(counts, model, rule), written


def sprt_status(engine: Engine, batch: Any) -> dict[str, Any] | None:
    """Current SPRT state of a batch with a stop rule (None without one)."""
    rule = _rule(batch)
    return None if rule is None else _state(engine, batch, rule)[0]


def check_stop_rule(engine: Engine, batch: Any) -> dict[str, Any] | None:
    """The decision when a bound is crossed, else None (called after every written chunk).

    The decision is the SPRT state plus ``decided_at_matches``: the matches written (played or
    failed) when the check crossed the bound.
    """
    rule = _rule(batch)
    if rule is None:
        return None
    state, written = _state(engine, batch, rule)
    if state["result"] is None:
        return None
    return {**state, "decided_at_matches": written}
