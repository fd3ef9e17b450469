"""The precision stop: end a batch once one figure is known as closely as asked.

A rule is ``{"type": "precision", "figure": "first_player_advantage", "half_width": 0.02,
"min_units": 30}``; the short form is ``precision:FIGURE,half_width=H[,min_units=N]``. Figures:

``first_player_advantage``
    the starting player's win share − 1/n, with the report's interval (``analysis.seats``);
``score:LABEL``
    the agent ``LABEL``'s score (mean win share) with the agent table's interval
    (``analysis.agents``; copies of one spec pooled, as there).

After every written chunk the check reads the batch's complete rounds of the seating design
(so it decides only at a round boundary), and stops once there are at least ``min_units`` units
of sampling and the figure's interval is no wider than ± ``half_width`` (its width over two).
Stopping as soon as an interval is narrow enough is optional stopping on the interval's width,
not its centre; its coverage is measured in ``bench/coverage.py``.

Pure arithmetic apart from ``check_precision`` and ``precision_status`` (which read the batch).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from sqlalchemy import Engine

from analysis.stopping import FIRST_PLAYER, PrecisionRule, from_json


def figure_interval(w: Any, rule: PrecisionRule, seat_policy: str, groups: Sequence[int]
                    ) -> tuple[float, float, float, int]:  # fmt: skip
    """(estimate, ci_low, ci_high, units) of the rule's figure on per-match arrays ``w``
    (``analysis.tidy.Wide``), as the report computes it."""
    from analysis.agents import agent_table
    from analysis.seats import seat_share
    from analysis.tidy import by_turn

    if rule.figure == FIRST_PLAYER:
        share = seat_share(by_turn(w), 0)
        expected = 1.0 / w.players
        return (share.estimate - expected, share.ci_low - expected, share.ci_high - expected,
                share.units)  # fmt: skip
    label = rule.score_of
    table = agent_table(w, seat_policy, groups)
    for row in table.to_dict(orient="records"):
        if label in row["labels"]:
            return (float(row["score"]), float(row["ci_low"]), float(row["ci_high"]),
                    int(np.unique(w.unit).size))  # fmt: skip
    return (math.nan, math.nan, math.nan, 0)


def precision_state(
    estimate: float, low: float, high: float, units: int, rule: PrecisionRule
) -> dict[str, Any]:
    """The rule's state for a figure's interval over ``units`` units of sampling."""
    half = (high - low) / 2 if math.isfinite(low) and math.isfinite(high) else math.nan
    reached = units >= rule.min_units and half <= rule.half_width
    figure = rule.figure
    if reached:
        verdict = (
            f"stop: {figure} is {estimate:+.4f} within ±{half:.4f} "
            f"({low:+.4f} to {high:+.4f}, 95 %) over {units} units"
        )
    elif units < rule.min_units:
        verdict = f"continue: {units} of the {rule.min_units} units asked for"
    else:
        verdict = f"continue: ±{half:.4f} is wider than the ±{rule.half_width:g} asked"
    return {
        **rule.to_json(),
        "estimate": estimate,
        "ci_low": low,
        "ci_high": high,
        "achieved_half_width": half,
        "units": units,
        "result": "reached" if reached else None,
        "verdict": verdict,
    }


def whole_rounds(w: Any, round_size: int) -> Any:
    """``w`` cut to its complete rounds of ``round_size`` matches (every match present)."""
    rounds = w.match_index // round_size
    present = np.bincount(rounds, minlength=int(rounds.max()) + 1 if rounds.size else 0)
    keep = present[rounds] == round_size
    if bool(keep.all()):
        return w
    kept = {
        "match_index": w.match_index[keep],
        "win": w.win[keep],
        "points": w.points[keep],
        "agent": w.agent[keep],
        "first_seat": w.first_seat[keep],
        "unit": w.unit[keep],
    }
    return replace(w, **kept)


def check_precision(engine: Engine, batch: Any) -> dict[str, Any] | None:
    """The decision when the batch's figure is known closely enough, else None."""
    from analysis.batch_data import agent_groups, load_wide
    from engines.seating import opening_round

    rule = _rule(batch)
    w = whole_rounds(load_wide(engine, batch), opening_round(batch.players, batch.seat_policy))
    if w.matches == 0:
        return None
    state = precision_state(
        *figure_interval(w, rule, batch.seat_policy, agent_groups(list(batch.agents))), rule
    )
    if state["result"] is None:
        return None
    return {**state, "decided_at_matches": int(w.matches)}


def precision_status(engine: Engine, batch: Any) -> dict[str, Any]:
    """The rule's current state on every written match of the batch (for reports)."""
    from analysis.batch_data import agent_groups, load_wide

    rule = _rule(batch)
    w = load_wide(engine, batch)
    if w.matches == 0:
        return precision_state(math.nan, math.nan, math.nan, 0, rule)
    return precision_state(
        *figure_interval(w, rule, batch.seat_policy, agent_groups(list(batch.agents))), rule
    )


def _rule(batch: Any) -> PrecisionRule:
    rule = from_json(batch.stop_rule)
    assert isinstance(rule, PrecisionRule), rule  # the callers check the rule's type
    return rule
