"""A batch's stop rule against its stored results: the SPRT state, and the decision to stop.

The rule is checked after every written chunk (``workers.lifecycle``). Counts are the chunk
rows' stored ones summed (one small query, however large the batch); a batch with a chunk
written before counts were stored is counted from its seat results (``frames.pair_outcomes``).
The arithmetic is ``analysis.sprt``'s.

The state a report shows (``sprt_status``) adds what the check itself does not need: the
fixed-sample Elo of the counts (``fixed_sample_elo``), and once a bound is crossed the
stopping-aware ``estimate`` (``analysis.sprt_estimate``); what the test compares
(``comparison`` and ``note``, as for pairings: with fixed seats the seats' effect is in it, and
between two copies of one agent it is nothing else); and, given the batch's units of sampling,
``units``, ``distinct_openings`` and a ``warning`` when the test counted far more pairs or games
than there are independent units (deterministic agents replaying a few openings): its counts
then pretend to an independence they lack, and its error rates are not the ``alpha`` and
``beta`` asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine

from analysis import frames, stats
from analysis.agents import COMPARISON_NOTES, comparison_kind
from analysis.precision import PRECISION, check_precision, precision_status
from analysis.sprt import DEFAULTS, sprt_state, uses_pairs
from analysis.sprt_estimate import METHOD, stopping_aware_elo
from analysis.units import Units
from storage.crud import progress, stop_count_totals

FEW_UNITS = 0.5
"""Warn when the batch's units are fewer than this share of the SPRT's counted pairs or games."""


def is_precision(rule: Mapping[str, Any] | None) -> bool:
    """True for a precision stop (``analysis.precision``)."""
    return bool(rule) and rule is not None and rule.get("type") == PRECISION


def stop_status(engine: Engine, batch: Any) -> dict[str, Any] | None:
    """A precision stop's current state (None for any other rule, or none)."""
    return precision_status(engine, batch) if is_precision(batch.stop_rule) else None


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


def sprt_status(engine: Engine, batch: Any, units: Units | None = None) -> dict[str, Any] | None:
    """Current SPRT state of a batch with a stop rule (None without one), with the estimates
    and the warning on units described in the module docstring."""
    rule = _rule(batch)
    if rule is None:
        return None
    state = _state(engine, batch, rule)[0]
    return {**state, **estimates(state), **compared(batch, rule), **units_warning(state, units)}


def compared(batch: Any, rule: Mapping[str, Any]) -> dict[str, Any]:
    """``comparison`` and ``note``: what the rule's two agents' meetings measure."""
    labels = list(batch.labels)
    a, b = (labels.index(x) for x in rule["agents"])
    kind = comparison_kind(batch.seat_policy, batch.agents[a] == batch.agents[b])
    return {"comparison": kind, "note": COMPARISON_NOTES[kind]}


def estimates(state: Mapping[str, Any]) -> dict[str, Any]:
    """The fixed-sample Elo of an SPRT state and, once decided, the stopping-aware one."""
    out: dict[str, Any] = {"fixed_sample_elo": stats.elo_from_score(state["score"]),
                           "estimate": None}  # fmt: skip
    if state["result"] is None:
        return out
    values = stats.PENTANOMIAL_VALUES if state["model"] == "pentanomial" else stats.TRINOMIAL_VALUES
    est = stopping_aware_elo(state["counts"], values, state["elo0"], state["elo1"],
                             (state["lower"], state["upper"]), state["llr"])  # fmt: skip
    out["estimate"] = {"elo": est.elo, "elo_median": est.elo_median, "elo_low": est.elo_low,
                       "elo_high": est.elo_high, "method": METHOD}  # fmt: skip
    return out


def units_warning(state: Mapping[str, Any], units: Units | None) -> dict[str, Any]:
    """``units``, ``distinct_openings`` and ``warning`` (None when the units are enough)."""
    if units is None:
        return {"units": None, "distinct_openings": None, "warning": None}
    counted = int(sum(state["counts"]))
    kind = "pairs" if state["model"] == "pentanomial" else "games"
    warning = None
    if counted and units.count < FEW_UNITS * counted:
        openings = f" ({units.distinct_openings} distinct openings)" if units.openings_known else ""
        warning = (
            f"the test counted {counted} {kind} as independent, but they come from "
            f"{units.count} units of sampling{openings}: its error rates are not the alpha "
            "and beta asked for; vary the openings"
        )
    return {"units": units.count, "distinct_openings": units.distinct_openings,
            "warning": warning}  # fmt: skip


def check_stop_rule(engine: Engine, batch: Any) -> dict[str, Any] | None:
    """The decision when a bound is crossed (or a precision stop's figure is known closely
    enough), else None (called after every written chunk).

    The decision is the SPRT state plus ``decided_at_matches``: the matches written (played or
    failed) when the check crossed the bound.
    """
    if is_precision(batch.stop_rule):
        return check_precision(engine, batch)
    rule = _rule(batch)
    if rule is None:
        return None
    state, written = _state(engine, batch, rule)
    if state["result"] is None:
        return None
    return {**state, "decided_at_matches": written}
