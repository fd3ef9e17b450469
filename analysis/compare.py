"""Comparing two batches: difference of first-player advantage and of each seat's win share.

Typical uses: two Alvéoles layouts, two agent line-ups, two options of one game. Both batches
must be of one game with one player count (seat by seat differences need the same seats). The
two batches are independent samples; within each, matches count by their units of sampling
(``analysis.units``). Each difference gets Newcombe's interval from the two batches' exact,
design-adjusted share intervals, and a p-value: Fisher's exact test when both batches are
independent whole wins, else a score test on the effective sample sizes
(``stats.share_difference``). The first-player advantage is the starting player's (turn
position 0); seats are compared by index, and by turn position too (``turn_positions``) when
either batch's turn order is not seat order. Seat p-values get Holm's adjustment (``p_holm``).
A game whose report section declares ``shares`` (``analysis.games``) adds those figures, each
compared the same way (``game_figures``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from analysis import stats
from analysis.batch_data import load_wide
from analysis.games import game_report
from analysis.report import clean
from analysis.tidy import Wide, by_turn, turn_order_varies
from engines.core import OptionError
from storage import crud
from storage.soundness import check_rows


def _meta(batch: Any, w: Wide) -> dict[str, Any]:
    return {
        "id": batch.id,
        "game": batch.game,
        "players": batch.players,
        "options": batch.options,
        "time_control": batch.time_control,
        "labels": batch.labels,
        "matches": w.matches,
    }


def _diff(a: Wide, b: Wide, column: int, shift: float = 0.0) -> dict[str, Any]:
    d = stats.share_difference(
        stats.unit_sums(a.win[:, column], a.unit), stats.unit_sums(b.win[:, column], b.unit)
    )
    row = d.as_dict()
    row["a"] -= shift
    row["b"] -= shift
    return row


def _rows(a: Wide, b: Wide, label: str) -> list[dict[str, Any]]:
    rows = [{label: s, **_diff(a, b, s)} for s in range(min(a.players, b.players))]
    # Two seats' differences are one hypothesis (the shares sum to 1): no family to adjust.
    adjusted = stats.holm([r["p_value"] for r in rows]) if len(rows) > 2 else None
    for i, row in enumerate(rows):
        row["p_holm"] = row["p_value"] if adjusted is None else adjusted[i]
    return rows


def compare_wide(wa: Wide, wb: Wide) -> dict[str, Any]:
    """Differences (a − b) of the starting player's advantage and per-seat win shares (and per
    turn position when either batch's turn order is not seat order)."""
    ta, tb = by_turn(wa), by_turn(wb)
    varies = turn_order_varies(wa) or turn_order_varies(wb)
    return {
        "first_player_advantage": _diff(ta, tb, 0, 1.0 / wa.players),
        "seats": _rows(wa, wb, "seat"),
        "turn_positions": _rows(ta, tb, "position") if varies else None,
    }


def game_figures(engine: Engine, a: Any, wa: Wide, b: Any, wb: Wide) -> list[dict[str, Any]]:
    """The game's own per-match shares (its report section's ``shares``) of both batches,
    each with its difference a − b; empty when the game declares none."""
    section = game_report(a.game)
    if section is None or section.shares is None:
        return []
    sa, sb = section.shares(engine, a, wa), section.shares(engine, b, wb)
    return [
        {"figure": name, **stats.share_difference(sa[name], sb[name]).as_dict()}
        for name in sa
        if name in sb
    ]


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
    ``OptionError`` if they are of different games or player counts, ``UnsoundBatch`` if
    either holds a row no match can produce."""
    batches = []
    for name in (batch_a, batch_b):
        batch = crud.get_batch(engine, name)
        if batch is None:
            raise crud.NotFound(f"no batch {name!r}")
        batches.append(check_rows(engine, batch))
    check_comparable(*batches)
    (ba, wa), (bb, wb) = ((batch, load_wide(engine, batch)) for batch in batches)
    result = {
        "a": _meta(ba, wa),
        "b": _meta(bb, wb),
        **compare_wide(wa, wb),
        "game_figures": game_figures(engine, ba, wa, bb, wb),
        "method": "difference a − b, matches counted by units of sampling; 95 % interval: "
        "Newcombe's (MOVER) from each batch's exact, design-adjusted share interval; p: "
        "Fisher's exact test when both batches are independent whole wins, else a score test "
        "on the effective sample sizes; p_holm: Holm-adjusted over the seats; first-player "
        "advantage = the starting player's share − 1/n",
    }
    cleaned: dict[str, Any] = clean(result)
    return cleaned
