"""The report's tables, built once from the report dict and rendered by every face.

Each function takes the strict-JSON report (``analysis.report.build_report``) and returns a
``TextTable`` of display strings (``analysis.formatting`` formats every number); the terminal
(``api.cli_tables.rich_table``) and the HTML page (``analysis.html_parts.text_table``) only lay
the cells out, so both show the same cells. A new generic table is one function here, added
to ``report_tables`` (and placed on the HTML page by ``analysis.render_html``); a game's own
tables come from its section (``analysis.games``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from analysis.agents import SEAT_EFFECT
from analysis.formatting import (
    MISSING,
    TextTable,
    elo_span,
    independence_line,
    num,
    p_value,
    pct,
    span,
)
from analysis.games import game_report

CI = "95% CI"


def first_player_parts(report: Mapping[str, Any]) -> tuple[str, str]:
    """(estimate, "(95% CI …, p = …)") of the first-player advantage (the player who moved
    first), for a caption or a paragraph."""
    f = report["first_player_advantage"]
    return (
        pct(f.get("estimate")),
        f"({CI} {span(f.get('ci_low'), f.get('ci_high'))}, p = {p_value(f.get('p_value'))})",
    )


def _elo_interval(row: Mapping[str, Any]) -> str:
    """An Elo interval; missing (not unbounded) when the row has none: a single unit, no other
    agent, or a seat effect."""
    if row.get("comparison") == SEAT_EFFECT or (row.get("units") or 0) < 2:
        return MISSING
    return elo_span(row["elo_low"], row["elo_high"])


def _notes(rows: Iterable[Mapping[str, Any]], *extra: str | None) -> str | None:
    """The distinct notes of ``rows`` (key ``note``) and ``extra``, in order, one per line."""
    seen: list[str] = []
    for note in [*(r.get("note") for r in rows), *extra]:
        for part in (note or "").split("; "):
            if part and part not in seen:
                seen.append(part)
    return "\n".join(seen) if seen else None


def _seat_rows(
    rows: list[Mapping[str, Any]], label: str, title: str, css: str, note: str | None = None
) -> TextTable:
    """Win shares with intervals and tests, mean points with intervals: one row per seat (or
    turn position, ``label``)."""
    interval = rows[0]["interval"] if rows else "exact"
    named = "one unit of sampling: no bounds" if interval.startswith("none") else interval
    return TextTable(
        f"{title} (95% intervals: {named})",
        (
            label,
            "games",
            "win share",
            CI,
            "expected",
            "p-value",
            "p (Holm)",
            "mean points",
            "points " + CI,
            "joint " + CI,
        ),
        [
            [
                str(s[label]),
                num(s["games"]),
                pct(s["win_share"]),
                span(s["ci_low"], s["ci_high"]),
                pct(s["expected"]),
                p_value(s["p_value"]),
                p_value(s.get("p_holm")),
                num(s["mean_points"], 2),
                span(s["points_ci_low"], s["points_ci_high"], lambda x: num(x, 2)),
                span(s.get("joint_ci_low"), s.get("joint_ci_high")),
            ]
            for s in rows
        ],
        note=note,
        css_class=css,
    )


def independence_warning(report: Mapping[str, Any]) -> str | None:
    """The report's plain warning that its units are far fewer than its matches, if any: each
    face shows it where it cannot be missed."""
    return (report.get("independence") or {}).get("warning")


def seat_table(report: Mapping[str, Any]) -> TextTable:
    """Seat balance by seat index, with the independence counts below."""
    block = report.get("independence")
    note = independence_line(block) if block else None
    return _seat_rows(report["seats"], "seat", "Seat balance", "seats", note)


def turn_position_table(report: Mapping[str, Any]) -> TextTable | None:
    """Seat balance by turn position (0 = the player who moved first), when it differs from
    seat index; None when every match started with seat 0."""
    rows = report.get("turn_positions")
    if not rows:
        return None
    title = "By turn position, 0 = the player who moved first"
    return _seat_rows(rows, "position", title, "turn-positions")


def _agent_name(a: Mapping[str, Any]) -> str:
    copies = a.get("labels") or [a["agent"]]
    return a["agent"] if len(copies) < 2 else f"{a['agent']} ({', '.join(copies)})"


def agent_table(report: Mapping[str, Any]) -> TextTable:
    """Per agent (copies of one spec pooled): score and Elo against the other agents."""
    agents = report["agents"]
    return TextTable(
        "Agent scores",
        ("agent", "games", "units", "score", CI, "Elo vs field", "Elo " + CI, "model"),
        [
            [
                _agent_name(a),
                num(a["games"]),
                num(a.get("units")),
                pct(a["score"]),
                span(a["ci_low"], a["ci_high"]),
                num(a["elo"]),
                _elo_interval(a),
                str(a["elo_model"]),
            ]
            for a in agents
        ],
        note=_notes(agents),
        css_class="agents",
    )


def _pairing_name(p: Mapping[str, Any]) -> str:
    kind = p.get("comparison")
    tag = f" ({kind})" if kind and kind != "agents" else ""
    return f"{p['agent_a']} vs {p['agent_b']}{tag}"


def pairings_table(report: Mapping[str, Any]) -> TextTable:
    """Head-to-head records: W/D/L, score, Elo with interval, LOS, raw and Holm p-values."""
    pairs = report["pairings"]
    return TextTable(
        "Pairings",
        (
            "pairing",
            "games",
            "units",
            "W/D/L",
            "score",
            "Elo",
            "Elo " + CI,
            "LOS",
            "p-value",
            "Holm p",
            "model",
        ),
        [
            [
                _pairing_name(p),
                num(p["games"]),
                num(p.get("units")),
                f"{p['wins']}/{p['draws']}/{p['losses']}",
                pct(p["score"]),
                num(p["elo"]),
                _elo_interval(p),
                pct(p["los"]),
                p_value(p.get("p_value")),
                p_value(p.get("p_holm")),
                str(p["model"]) + (f" {p['pentanomial']}" if p.get("pentanomial") else ""),
            ]
            for p in pairs
        ],
        note=_notes(pairs),
        css_class="pairings",
    )


def strengths_table(report: Mapping[str, Any]) -> TextTable:
    """Bradley–Terry strengths on the Elo scale with their intervals."""
    rows = report["strengths"]
    return TextTable(
        "Bradley–Terry strengths (Elo scale)",
        ("agent", "strength", CI, "units"),
        [
            [
                _agent_name(s),
                num(s["strength"]),
                span(s["ci_low"], s["ci_high"], num),
                num(s.get("units")),
            ]
            for s in rows
        ],
        note=_notes(rows),
        css_class="strengths",
    )


def shape_table(report: Mapping[str, Any]) -> TextTable:
    """Draws and balance with their intervals, completion, game length, how games ended, and
    the balance's bias."""
    s = report["shape"]
    p = s["plies"]
    ended = s["ended_by"]
    total = sum(ended.values()) or 1
    three = lambda x: num(x, 3)  # noqa: E731
    notes = ["ended by: " + ", ".join(f"{k} {num(v)} ({pct(v / total)})" for k, v in ended.items())]
    if s.get("balance_note"):
        notes.append(f"{s['balance_note']} (here: {three(s.get('balance_if_fair'))})")
    return TextTable(
        "Game shape",
        (
            "matches",
            "failed",
            "draw rate (" + CI + ")",
            "completion",
            "balance (" + CI + ")",
            "mean plies",
            "median",
            "p10",
            "p90",
        ),
        [
            [
                num(s["matches"]),
                num(s.get("failed", 0)),
                f"{pct(s['draw_rate'])} "
                + span(s.get("draw_rate_ci_low"), s.get("draw_rate_ci_high")),
                pct(s["completion"]),
                f"{three(s['balance'])} "
                + span(s.get("balance_ci_low"), s.get("balance_ci_high"), three),
                num(p["mean"]),
                num(p["median"]),
                num(p["p10"]),
                num(p["p90"]),
            ]
        ],
        note="\n".join(notes),
        css_class="shape",
    )


def clock_table(report: Mapping[str, Any]) -> TextTable | None:
    """A clocked batch's time per move by agent and its losses on time; None without clocks."""
    c = report.get("clock")
    if not c:
        return None
    return TextTable(
        f"Clocks ({c['time_control']})",
        (
            "agent",
            "moves",
            "mean ms/move",
            "median ms/move",
            "longest ms",
            "s used/match",
            "lost on time",
        ),
        [
            [
                str(a["agent"]),
                num(a["moves"]),
                num(a["mean_ms"]),
                num(a["median_ms"]),
                num(a["max_ms"]),
                num(a["seconds_per_match"], 2),
                num(a["losses_on_time"]),
            ]
            for a in c["agents"]
        ],
        note=f"{num(c['matches_lost_on_time'])} matches lost on time; {c['note']}",
        css_class="clock",
    )


def compensation_table(report: Mapping[str, Any]) -> TextTable | None:
    """Points to add to each later turn position (komi), with intervals; None when not
    computed."""
    komi = report.get("fair_compensation")
    if not komi:
        return None
    return TextTable(
        "Fair compensation (komi)",
        ("turn position", "points to add", CI),
        [
            [str(o["seat"]), num(o["points"]), span(o["ci_low"], o["ci_high"], num)]
            for o in komi["offsets"] or []
        ],
        note=komi.get("note"),
        css_class="komi",
    )


SPRT_COLUMNS = ("agents", "elo0", "elo1", "model", "units", "games", "LLR", "bounds", "Elo",
                "Elo " + CI, "state")  # fmt: skip


def sprt_table(report: Mapping[str, Any]) -> TextTable | None:
    """The stop rule's state: hypotheses, counts, LLR and bounds, Elo, verdict."""
    s = report.get("sprt")
    if not s:
        return None
    est = s.get("estimate")
    if est:
        elo, low, high = est["elo"], est["elo_low"], est["elo_high"]
        how = f"Elo after the stop: bias-adjusted, fixed-sample {num(s.get('fixed_sample_elo'))}"
    else:
        elo, low, high, how = s.get("fixed_sample_elo"), None, None, None
    return TextTable(
        "SPRT",
        SPRT_COLUMNS,
        [
            [
                " vs ".join(s["agents"]),
                num(s["elo0"]),
                num(s["elo1"]),
                str(s["model"]),
                num(s.get("units")),
                num(s["games"]),
                num(s["llr"], 3),
                span(s["lower"], s["upper"], lambda x: num(x, 3)),
                num(elo),
                elo_span(low, high) if est else span(low, high, num),
                str(s["verdict"]),
            ]
        ],
        note=_notes([], s.get("note"), how),
        css_class="sprt",
    )


def precision_table(report: Mapping[str, Any]) -> TextTable | None:
    """The precision stop's state: the figure, its interval, the half-width asked and reached,
    the units, verdict (``analysis.precision``)."""
    s = report.get("precision")
    if not s:
        return None
    return TextTable(
        "Precision stop",
        ("figure", "estimate", CI, "half-width", "asked", "units", "least units", "state"),
        [
            [
                str(s["figure"]),
                num(s["estimate"], 4),
                span(s["ci_low"], s["ci_high"], lambda v: num(v, 4)),
                num(s["achieved_half_width"], 4),
                num(s["half_width"], 4),
                num(s["units"]),
                num(s["min_units"]),
                str(s["verdict"]),
            ]
        ],
        css_class="precision",
    )


def report_tables(report: Mapping[str, Any]) -> list[TextTable]:
    """Every table of a report, in reading order (the game section's included)."""
    tables = [seat_table(report)]
    turns = turn_position_table(report)
    if turns is not None:
        tables.append(turns)
    tables.append(agent_table(report))
    if report["pairings"]:
        tables.append(pairings_table(report))
    if report["strengths"]:
        tables.append(strengths_table(report))
    tables.append(shape_table(report))
    clocks = clock_table(report)
    if clocks is not None:
        tables.append(clocks)
    komi = compensation_table(report)
    if komi is not None:
        tables.append(komi)
    game = report.get("game")
    section = game_report(game["name"]) if game else None
    if game and section:
        tables.extend(section.tables(game))
    for stop in (sprt_table(report), precision_table(report)):
        if stop is not None:
            tables.append(stop)
    return tables
