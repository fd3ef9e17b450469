"""A batch's stop rule against its stored results: the SPRT state, and the decision to stop.

The rule is checked after every written chunk (``workers.lifecycle``). Counts are the chunk
rows' stored ones summed (one small query, however large the batch); a batch with a chunk
written before counts were stored is counted from its seat results (``frames.pair_outcomes``).
The arithmetic is ``analysis.sprt``'s.

The statistic counts units of sampling (``analysis.sprt``). Seat-swapped pairs whose units
are the design's rounds (two players, ``balanced`` or ``rotate``) are counted from the chunk
rows' stored pentanomial counts (one small query, however large the batch; a batch with a
chunk written before counts were stored is counted from its seat results,
``frames.pair_outcomes``). Every other design (three to six players, or openings linked into
units by a declared book) is counted from the batch's complete rounds, read as the report reads
them (``analysis.batch_data.load_wide``), so the check and the report agree unit for unit.

The state a report shows (``sprt_status``) adds what the check itself does not need: the
fixed-sample Elo of the counts (``fixed_sample_elo``), and once a bound is crossed the
stopping-aware ``estimate`` (``analysis.sprt_estimate``), in whose words the ``verdict`` then
speaks; what the test compares (``comparison`` and ``note``, as for pairings: with fixed seats
the seats' effect is in it, and between two copies of one agent it is nothing else).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from analysis import frames, stats
from analysis.agents import COMPARISON_NOTES, comparison_kind
from analysis.precision import check_precision, precision_status, whole_rounds
from analysis.sprt import PENTANOMIAL, sprt_state, units_state, uses_pairs, verdict
from analysis.sprt_estimate import METHOD, stopping_aware_elo
from analysis.stopping import PrecisionRule, SprtRule, of_batch
from analysis.tidy import Wide
from analysis.units import links_openings
from engines.seating import opening_round
from storage.crud import progress, stop_count_totals


def stop_status(engine: Engine, batch: Any) -> dict[str, Any] | None:
    """A precision stop's current state (None for any other rule, or none)."""
    return precision_status(engine, batch) if isinstance(of_batch(batch), PrecisionRule) else None


def _rule(batch: Any) -> SprtRule | None:
    rule = of_batch(batch)
    return rule if isinstance(rule, SprtRule) else None


def counts_pairs(batch: Any) -> bool:
    """True when the chunk rows' pentanomial counts are the units' scores: seat-swapped pairs
    whose units are the design's rounds (not openings linked by a declared book)."""
    return uses_pairs(batch) and not links_openings(batch.variation)


def _state(
    engine: Engine, batch: Any, rule: SprtRule, w: Wide | None = None
) -> tuple[dict[str, Any], int]:
    """The SPRT state and the matches written it covers (see the module docstring); ``w``: the
    batch's per-match arrays when already read."""
    if not counts_pairs(batch):
        from analysis.batch_data import load_wide

        size = opening_round(batch.players, batch.seat_policy)
        whole = whole_rounds(w if w is not None else load_wide(engine, batch), size)
        return units_state(whole, rule), int(whole.matches)
    totals = stop_count_totals(engine, batch.id)
    if totals.counts is not None:
        counts = totals.counts[:5]
        written = totals.matches
    else:
        a, b = rule.agents
        counts = frames.pair_outcomes(engine, batch.id, a, b, pairs=True)
        written = progress(engine, batch.id).finished_matches
    return sprt_state(counts, PENTANOMIAL, rule), written


def sprt_status(engine: Engine, batch: Any, w: Wide | None = None) -> dict[str, Any] | None:
    """Current SPRT state of a batch with a stop rule (None without one), with the estimates
    described in the module docstring; ``w``: the batch's per-match arrays when already read."""
    rule = _rule(batch)
    if rule is None:
        return None
    state = _state(engine, batch, rule, w)[0]
    found = estimates(state)
    worded = verdict(state["result"], rule, found["estimate"])
    return {**state, **found, **compared(batch, rule), "verdict": worded}


def compared(batch: Any, rule: SprtRule) -> dict[str, Any]:
    """``comparison`` and ``note``: what the rule's two agents' meetings measure."""
    labels = list(batch.labels)
    a, b = (labels.index(x) for x in rule.agents)
    kind = comparison_kind(batch.seat_policy, batch.agents[a] == batch.agents[b])
    return {"comparison": kind, "note": COMPARISON_NOTES[kind]}


def estimates(state: dict[str, Any]) -> dict[str, Any]:
    """The fixed-sample Elo of an SPRT state and, once decided, the stopping-aware one."""
    out: dict[str, Any] = {"fixed_sample_elo": stats.elo_from_score(state["score"]),
                           "estimate": None}  # fmt: skip
    if state["result"] is None:
        return out
    est = stopping_aware_elo(state["counts"], state["values"], state["elo0"], state["elo1"],
                             (state["lower"], state["upper"]), state["llr"])  # fmt: skip
    out["estimate"] = {"elo": est.elo, "elo_median": est.elo_median, "elo_low": est.elo_low,
                       "elo_high": est.elo_high, "method": METHOD}  # fmt: skip
    return out


def check_stop_rule(engine: Engine, batch: Any) -> dict[str, Any] | None:
    """The decision when a bound is crossed (or a precision stop's figure is known closely
    enough), else None (called after every written chunk).

    The decision is the SPRT state plus ``decided_at_matches``: the matches written (played or
    failed) when the check crossed the bound.
    """
    if isinstance(of_batch(batch), PrecisionRule):
        return check_precision(engine, batch)
    rule = _rule(batch)
    if rule is None:
        return None
    state, written = _state(engine, batch, rule)
    if state["result"] is None:
        return None
    found = estimates(state)
    worded = verdict(state["result"], rule, found["estimate"])
    return {**state, **found, "verdict": worded, "decided_at_matches": written}
