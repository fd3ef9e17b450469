"""One report per batch, as a strict-JSON dict, and its CSV form.

Top-level keys: ``batch`` (metadata), ``method`` (how each figure was computed), ``independence``,
``seats``, ``turn_positions``, ``seat_test``, ``first_player_advantage``, ``agents``,
``pairings``, ``strengths``, ``shape``, ``fair_compensation`` (points games, else null),
``game`` (game section or null), ``sprt`` (SPRT state or null), ``precision`` (a precision
stop's state or null: ``figure``, ``half_width``, ``min_units``, ``estimate``, ``ci_low``,
``ci_high``, ``achieved_half_width``, ``units``, ``result``, ``verdict``) and ``clock``.
Values are unrounded; NaN and infinities become null.

Every interval and test counts units of sampling, not matches (``analysis.units``: matches
linked by a shared opening or round). The fields that say so:

- ``independence``: ``matches``; ``distinct_games`` (different move lists); ``distinct_openings``
  (null when some were not recorded; ``openings_known`` says); ``round_size`` (matches per round
  of the seating design); ``units`` and ``linked_by`` (``round``, ``opening and round``,
  ``game and round`` or ``one line``); ``design_effect`` and ``effective_n`` (matches / design
  effect) of the starting player's win share; ``variation`` (what the batch declared, null for
  none); ``warning`` (plain words when the matches replay few games or the units are far
  fewer than the matches, else null);
  ``note`` (how units are formed).
- ``seats[]`` (by seat index) and ``turn_positions[]`` (by turn position, ``position`` 0 = the
  player who moved first; null when every match started with seat 0, where the two coincide):
  ``games``, ``win_share``, ``ci_low``/``ci_high``, ``interval`` (``clopper-pearson``, or
  ``clopper-pearson, design-adjusted`` / ``t-adjusted``, or ``none: one unit ...`` with the
  whole range [0, 1]), ``units``, ``effective_n``, ``expected``, ``p_value``, ``p_holm`` (Holm
  over the seats), ``test``, ``mean_points`` with ``points_ci_low``/``points_ci_high``, and the
  seats' simultaneous intervals ``joint_ci_low``/``joint_ci_high`` (Bonferroni over the seats).
- ``seat_test``: all seats at once (``method``, ``statistic``, ``df``, ``p_value``;
  ``df_denominator`` for the Rao–Scott F test), and ``turn_positions`` (the same by turn
  position) when turn order is not seat order.
- ``first_player_advantage``: the starting player's share − 1/n: ``estimate``, ``ci_low``,
  ``ci_high``, ``p_value``, ``interval``, ``units``, ``effective_n``, ``by``.
- ``decided``: the games one seat won outright apart from the rest: ``matches``, ``decided``,
  ``draws_by_ending`` (the others counted by how they ended) and ``first_player`` (the starting
  player's share of the decided games − 1/n with its interval, test, ``units`` and ``wins``).
- ``shape``: ``draw_rate_ci_low``/``draw_rate_ci_high``; ``balance_ci_low``/``balance_ci_high``,
  ``balance_if_fair`` (the mean balance of a perfectly fair game of this size: the metric's bias)
  and ``balance_note``.
- ``fair_compensation.offsets[].seat`` is the turn position; no ``residual`` (see
  ``analysis.compensation``).

Agent figures (``analysis.agents``, ``analysis.strengths``) are computed over units of
sampling, copies of one agent pooled into one player: ``agents`` rows gain ``labels`` (the
copies), ``units``, ``comparison`` and ``note``; ``pairings`` rows gain ``p_value``, ``p_holm``
(Holm over the pairings), ``units``, ``comparison`` (``agents``, ``agents and seats``,
``seat effect``, ``same agent``) and ``note``; ``strengths`` rows gain ``labels``, ``units``
and ``note``. ``sprt`` gains the stopping-aware estimate once decided (``estimate``:
``elo``, ``elo_median``, ``elo_low``, ``elo_high``, ``method``, beside the fixed-sample
``fixed_sample_elo``), ``comparison``/``note`` (what its agents' meetings measure) and
``units``/``distinct_openings``/``warning`` (its counted games far more than the batch's units).
Les Alvéoles' ``deciding_tiers`` rows gain ``se``, ``p_holm``, ``units`` and ``note``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis import agents as agents_mod
from analysis import frames, seats, shape, stop_rule
from analysis.batch_data import agent_groups, load_wide
from analysis.clock import clock_figures
from analysis.compensation import fair_compensation, points_vary
from analysis.games import game_report
from analysis.independence import independence
from analysis.strengths import strengths
from analysis.tidy import Wide, by_turn
from engines.core import Ending
from engines.registry import game_class
from engines.seating import opening_round, seating_design
from storage import crud
from storage.models import BatchStatus
from storage.soundness import check_rows

REPORT_KEYS = (
    "batch", "method", "independence", "seats", "turn_positions", "seat_test",
    "first_player_advantage", "decided", "agents", "pairings", "strengths", "shape",
    "fair_compensation", "game", "sprt", "precision", "clock",
)  # fmt: skip


def clean(value: Any) -> Any:
    """A strict-JSON copy: NumPy scalars to Python, NaN/inf to None, tuples to lists."""
    if isinstance(value, Mapping):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [clean(v) for v in value]
    if isinstance(value, pd.DataFrame):
        return clean(value.to_dict(orient="records"))
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, datetime):
        # Stored times are UTC; SQLite hands them back without their zone, and the report of
        # one batch must read the same from either database.
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    return value


def coverage_note(batch: Any, played: int) -> str | None:
    """Why a report covers fewer matches than its batch asked for; None when it covers all."""
    if played >= batch.matches:
        return None
    why = (
        "stopped early by its stop rule"
        if batch.stopped_early
        else str(batch.status)
        if batch.status in BatchStatus.FINISHED
        else "still running, or interrupted (resume it to finish)"
    )
    return f"partial: {played:,} of {batch.matches:,} matches played — {why}"


def batch_meta(batch: Any, done: int, failed: int) -> dict[str, Any]:
    """The batch's identity and settings as shown at the top of a report.

    ``matches_done`` counts the matches the figures use; ``partial`` is true when fewer than
    all matches were played (``partial_note`` says how many and why).
    """
    note = coverage_note(batch, done + failed)
    return {
        "id": batch.id,
        "game": batch.game,
        "players": batch.players,
        "options": batch.options,
        "agents": batch.agents,
        "labels": batch.labels,
        "matches": batch.matches,
        "matches_done": done,
        "matches_failed": failed,
        "partial": note is not None,
        "partial_note": note,
        "seed": batch.seed,
        "seat_policy": batch.seat_policy,
        "seating": seating_design(batch.players, batch.seat_policy, batch.matches).as_dict(),
        "max_plies": batch.max_plies,
        "time_control": batch.time_control,
        "status": batch.status,
        "stop_rule": batch.stop_rule,
        "variation": batch.variation,
        "stopped_early": bool(batch.stopped_early),
        "decision": batch.decision,
        "created_at": batch.created_at,
        "finished_at": batch.finished_at,
    }


def method_notes(w: Wide, batch: Any, pentanomial: bool) -> dict[str, str]:
    """Plain-language notes on the methods this report used."""
    n = w.players
    return {
        "results": "every head-to-head figure (W/D/L, score, Elo, LOS, Bradley–Terry, SPRT) "
        "comes from the game result: the larger win share wins a meeting, equal shares draw, "
        "whatever the points; points are reported apart",
        "win_share": "mean of returns(): winners split 1.0, so a shared win counts a fraction",
        "units": "a unit of sampling is what the batch's design draws independently: a round "
        "of the seating design (one match with fixed seats, a seat-swapped pair, the seatings "
        "of one drawn opening); equal openings drawn independently stay apart, unless the batch "
        "declares its book a sample of openings (variation.units = line) or was stored before "
        "variations were declared; where the batch drew nothing per round or match (no "
        "variation, a book, noise that moves no agent), matches that replay one game (the same "
        "moves from first to last) join one unit with their rounds, so the units follow the "
        "distinct games. Seat, turn-position, draw and balance figures and every agent figure "
        "treat units, not matches, as the independent draws (see independence); copies of one "
        "agent spec are one player",
        "variance": "sample variance (ddof=1) everywhere; for a mean over units the CR1 "
        "cluster-robust variance (G/(G−1) · Σ unit residual² / M²), with no floor, so what a "
        "balanced design gains is kept",
        "seat_interval": "95 % Clopper–Pearson (exact) when matches are independent whole wins; "
        "otherwise Korn–Graubard's design-adjusted exact interval: Clopper–Pearson at the "
        "effective sample size (the Bernoulli sample with the cluster-robust variance, shrunk "
        "by (z / t on effective units − 2 df, at least 1)²); the whole range [0, 1] with one unit",
        "seat_p_value": "the test the seat's interval inverts, so the two agree on significance: "
        "the central exact binomial test of this seat vs the rest against 1/n, at the effective "
        "size when matches are not independent; p_holm: Holm-adjusted over the seats (two seats "
        "are one hypothesis: unadjusted)",
        "seat_test": "all seats at once: chi-square (or exact multinomial below 5 expected) for "
        "independent whole wins; otherwise Rao–Scott: Pearson's statistic over the mean design "
        "effect, on F(n − 1, (n − 1)(effective units − 2))",
        "turn_position": "turn position = (seat − first seat) mod n; 0 is the player who moved "
        "first. Identical to the seat index unless the game draws who starts",
        "first_player_advantage": "win share of turn position 0 (the starting player) minus 1/n, "
        "with its interval",
        "mean_points": "t interval over units (effective units − 2 df, at least 1); none for one "
        "unit or no spread",
        "elo": (
            "logistic Elo from the mean score; 95 % interval: Wilson-type with an effective "
            "sample size from the cluster-robust variance of the unit totals, t on effective "
            "units − 2 degrees of freedom ("
            + ("pentanomial where every unit is one seat-swapped pair" if pentanomial else "")
            + ("; " if pentanomial else "")
            + "trinomial where every unit is one game); no interval from fewer than 3 units"
        ),
        "los": "likelihood of superiority: one-sided confidence that the score exceeds ½, from "
        "the test the interval inverts (over units)",
        "pairings_p_value": "two-sided test of a score of ½ over units; p_holm: Holm-adjusted "
        "over every pairing with a p-value",
        "agents_vs_seats": "with fixed seats a comparison of agents includes the seats' effect "
        "(labelled); copies of one agent in fixed seats are a seat effect and get no Elo",
        "strengths": (
            "Bradley–Terry on all pairs of seats held by different players in each match "
            "(ties ½), choix ILSR with a ridge of 0.01, Elo scale; analytic 95 % interval from "
            "the cluster-robust sandwich over units, t on effective units − 2 degrees of "
            "freedom (no resampling, so no seed)"
            if n > 2
            else "not computed for two players (the pairing's Elo says the same)"
        ),
        "draw_rate": "share of matches where every seat got the same share; exact interval "
        "over units as for seats",
        "balance": "Ludii's balance: 1 − (largest − smallest seat win share), draws fractional; "
        "biased low (balance_if_fair); 95 % interval from simultaneous seat intervals "
        "(two seats: seat 0's; more: Bonferroni at 1 − 0.05/n)",
        "fair_compensation": "points to add to each later turn position so win shares "
        "equalise (komi), after taking off each agent's effect on points (least squares, "
        "agents + seats); two players: analytic interval inverting the exact test of the "
        "shares after it; more: bootstrap over units (1,000 resamples, seeded)",
        "sprt": "generalised SPRT, bounds ln(β/(1−α)) and ln((1−β)/α); once decided, the Elo "
        "is the median-unbiased estimate with its interval from the stopping distribution "
        "(Brownian approximation, stage-wise ordering), beside the fixed-sample one",
        "seat_policy": str(batch.seat_policy),
    }


def build_report(engine: Engine, batch_id: str, *, compensation: bool = True) -> dict[str, Any]:
    """The full report of the batch with this full id; ``NotFound`` if there is none,
    ``UnsoundBatch`` if it holds a row no match can produce (``storage.soundness``).

    ``compensation=False`` leaves ``fair_compensation`` null: its bootstrap is most of the
    report's time in a points game of three or more players, and a study page shows it for a
    few of its batches only."""
    batch = crud.get_batch(engine, batch_id)
    if batch is None:
        raise crud.NotFound(f"no batch {batch_id!r}")
    check_rows(engine, batch)
    distinct_games = frames.distinct_games(engine, batch.id)
    w = load_wide(engine, batch)
    ended = frames.ended_by_counts(engine, batch.id)
    failed = int(ended.loc[ended["ended_by"] == Ending.FAILED, "count"].sum())
    ended_ok = ended[ended["ended_by"] != Ending.FAILED]
    plies = frames.plies_counts(engine, batch.id)

    balance = seats.seat_balance_wide(w)
    turn = by_turn(w)
    positions = seats.seat_balance_wide(turn, "position") if turn is not w else None
    seat_test = seats.seat_test(w)
    if positions is not None:
        seat_test["turn_positions"] = seats.seat_test(turn)
    round_size = opening_round(batch.players, batch.seat_policy)
    pairs = agents_mod.swapped_pairs(w, batch.seat_policy)
    groups = agent_groups(list(batch.agents))
    game_shape = shape.game_shape(w, plies, ended_ok)
    game_shape["failed"] = failed

    komi = None
    if compensation and game_class(batch.game).game_type.points and points_vary(w):
        komi = fair_compensation(w, groups)

    game_section = game_report(batch.game)
    section = game_section.build(engine, batch, w) if game_section else None

    report = {
        "batch": batch_meta(batch, w.matches, failed),
        "method": method_notes(w, batch, pairs is not None),
        "independence": independence(w, batch.variation, distinct_games, round_size),
        "seats": balance,
        "turn_positions": positions,
        "seat_test": seat_test,
        "first_player_advantage": seats.first_player_advantage(
            balance if positions is None else positions
        ),
        "decided": seats.decided_games(turn, frames.draw_endings(engine, batch.id)),
        "agents": agents_mod.agent_table(w, batch.seat_policy, groups),
        "pairings": agents_mod.pairings(w, batch.seat_policy, groups),
        "strengths": strengths(w, groups) if w.players > 2 else [],
        "shape": game_shape,
        "fair_compensation": komi,
        "game": section,
        "sprt": stop_rule.sprt_status(engine, batch, w),
        "precision": stop_rule.stop_status(engine, batch),
        "clock": (
            None
            if batch.time_control is None
            else clock_figures(
                frames.move_times(engine, batch.id), batch.time_control, list(batch.labels)
            )
        ),
    }
    cleaned: dict[str, Any] = clean(report)
    return cleaned


# --------------------------------------------------------------------------- CSV


def _item_name(row: Mapping[str, Any], index: int) -> str:
    for keys in (("agent_a", "agent_b"), ("agent", "tier"), ("seat", "tier"), ("agent",),
                 ("seat",), ("tier",), ("cause",)):  # fmt: skip
        if all(k in row for k in keys):
            return (
                " vs ".join(str(row[k]) for k in keys)
                if keys[0] == "agent_a"
                else "/".join(str(row[k]) for k in keys)
            )
    return str(index)


def _flatten(prefix: str, value: Any, out: list[tuple[str, str, Any]]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        for i, row in enumerate(value):
            _flatten(f"{prefix}[{_item_name(row, i)}]", row, out)
    elif isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        for i, row in enumerate(value):
            _flatten(f"{prefix}[{i}]", row, out)
    elif isinstance(value, list):
        out.append((prefix, "", " ".join("" if v is None else str(v) for v in value)))
    else:
        out.append((prefix, "", value))


def to_csv(report: Mapping[str, Any]) -> str:
    """The report as long CSV: ``section,item,value`` (one line per figure, unrounded).

    ``item`` is the dotted path inside the section; list entries are named by their seat,
    agent, pairing or tier (``agents[hard].elo``); numeric lists are space-separated.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["section", "item", "value"])
    for section, content in report.items():
        rows: list[tuple[str, str, Any]] = []
        _flatten("", content, rows)
        for path, _, value in rows:
            writer.writerow([section, path, "" if value is None else value])
    return buf.getvalue()
