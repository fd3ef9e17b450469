"""Rich tables that render a report (``analysis.report.build_report``) and describe a batch.

Shared by ``run``, ``show``, ``report`` and ``compare`` so every command shows the same figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table

from analysis.formatting import (
    TextTable,
    elo_span,
    independence_line,
    num,
    p_value,
    pct,
    span,
)
from analysis.games import game_report
from storage.models import Batch


def _table(title: str, columns: Sequence[str]) -> Table:
    table = Table(title=title, title_justify="left")
    for i, name in enumerate(columns):
        table.add_column(name, justify="left" if i == 0 else "right")
    return table


def rich_table(t: TextTable) -> Table:
    """A report's ``TextTable`` as a terminal table."""
    table = _table(t.title, t.columns)
    for row in t.rows:
        table.add_row(*row)
    if t.note:
        table.caption = t.note
    return table


def _seat_rows(rows: Sequence[Mapping[str, Any]], label: str, title: str) -> Table:
    interval = rows[0]["interval"] if rows else "exact"
    named = "one unit of sampling: no bounds" if interval.startswith("none") else interval
    t = _table(
        f"{title} (95% intervals: {named})",
        [label, "games", "win share", "95% CI", "expected", "p-value", "p (Holm)", "mean points"],
    )
    for s in rows:
        t.add_row(
            str(s[label]),
            num(s["games"]),
            pct(s["win_share"]),
            span(s["ci_low"], s["ci_high"]),
            pct(s["expected"]),
            p_value(s["p_value"]),
            p_value(s.get("p_holm")),
            num(s["mean_points"], 2),
        )
    return t


def seat_table(report: Mapping[str, Any]) -> Table:
    """Seat balance with intervals, tests and mean points; the independence counts and any
    warning in its caption."""
    t = _seat_rows(report["seats"], "seat", "Seat balance")
    f = report["first_player_advantage"]
    block = report.get("independence") or {}
    lines = [
        f"first-player advantage (the player who moved first) {pct(f.get('estimate'))} "
        f"(95% CI {span(f.get('ci_low'), f.get('ci_high'))}, p={p_value(f.get('p_value'))})",
        independence_line(block),
    ]
    if block.get("warning"):
        lines.append(f"warning: {block['warning']}")
    partial = report["batch"].get("partial_note")
    if partial:
        lines.append(partial)
    t.caption = "\n".join(line for line in lines if line)
    return t


def turn_position_table(report: Mapping[str, Any]) -> Table | None:
    """Seat balance by turn position (0 = the player who moved first), when it differs from
    seat index."""
    rows = report.get("turn_positions")
    if not rows:
        return None
    return _seat_rows(rows, "position", "By turn position, 0 = the player who moved first")


def agents_table(report: Mapping[str, Any]) -> Table:
    """Per agent: score and Elo against the field, with intervals."""
    t = _table("Agent scores", ["agent", "games", "score", "95% CI", "Elo", "Elo 95% CI", "model"])
    for a in report["agents"]:
        t.add_row(
            a["agent"],
            num(a["games"]),
            pct(a["score"]),
            span(a["ci_low"], a["ci_high"]),
            num(a["elo"]),
            elo_span(a["elo_low"], a["elo_high"]),
            a["elo_model"],
        )
    return t


def pairings_table(report: Mapping[str, Any]) -> Table:
    """Head-to-head records: W/D/L, score, Elo with interval, LOS."""
    t = _table("Pairings", ["pairing", "games", "W/D/L", "score", "Elo", "Elo 95% CI", "LOS"])
    for p in report["pairings"]:
        t.add_row(
            f"{p['agent_a']} vs {p['agent_b']}",
            num(p["games"]),
            f"{p['wins']}/{p['draws']}/{p['losses']}",
            pct(p["score"]),
            num(p["elo"]),
            elo_span(p["elo_low"], p["elo_high"]),
            pct(p["los"]),
        )
    return t


def shape_table(report: Mapping[str, Any]) -> Table:
    """Draws, completion, balance and game length; the intervals and the balance's bias in its
    caption."""
    s = report["shape"]
    p = s["plies"]
    t = _table(
        "Game shape",
        ["matches", "draw rate", "completion", "balance", "plies mean", "median", "p10", "p90"],
    )
    t.add_row(
        num(s["matches"]),
        pct(s["draw_rate"]),
        pct(s["completion"]),
        num(s["balance"], 3),
        num(p["mean"]),
        num(p["median"]),
        num(p["p10"]),
        num(p["p90"]),
    )
    three = lambda x: num(x, 3)  # noqa: E731
    t.caption = "\n".join(
        [
            "ended by: " + ", ".join(f"{k} {v:,}" for k, v in s["ended_by"].items()),
            f"95% CI: draw rate {span(s.get('draw_rate_ci_low'), s.get('draw_rate_ci_high'))}, "
            f"balance {span(s.get('balance_ci_low'), s.get('balance_ci_high'), three)} "
            f"(a perfectly fair game of this size scores {three(s.get('balance_if_fair'))})",
        ]
    )
    return t


def report_tables(report: Mapping[str, Any]) -> list[Table]:
    """Every table of a report, in reading order."""
    tables = [seat_table(report)]
    turns = turn_position_table(report)
    if turns is not None:
        tables.append(turns)
    tables.append(agents_table(report))
    if report["pairings"]:
        tables.append(pairings_table(report))
    if report["strengths"]:
        t = _table("Bradley–Terry strengths (Elo scale)", ["agent", "strength", "95% CI"])
        for s in report["strengths"]:
            t.add_row(s["agent"], num(s["strength"]), span(s["ci_low"], s["ci_high"], num))
        tables.append(t)
    tables.append(shape_table(report))
    komi = report.get("fair_compensation")
    if komi:
        t = _table("Fair compensation (komi)", ["turn position", "points to add", "95% CI"])
        for o in komi["offsets"] or []:
            t.add_row(str(o["seat"]), num(o["points"]), span(o["ci_low"], o["ci_high"], num))
        if komi.get("note"):
            t.caption = komi["note"]
        tables.append(t)
    game = report.get("game")
    section = game_report(game["name"]) if game else None
    if game and section:
        tables.extend(rich_table(t) for t in section.tables(game))
    sprt = report.get("sprt")
    if sprt:
        t = _table("SPRT", ["agents", "LLR", "bounds", "games", "state"])
        t.add_row(
            " vs ".join(sprt["agents"]),
            num(sprt["llr"], 3),
            span(sprt["lower"], sprt["upper"], lambda x: num(x, 3)),
            num(sprt["games"]),
            sprt["verdict"],
        )
        tables.append(t)
    return tables


def compare_table(result: Mapping[str, Any]) -> Table:
    """Differences a − b of the starting player's advantage and of seat (and turn-position)
    shares."""
    a, b = result["a"], result["b"]
    t = _table(
        f"{a['id']} ({a['game']}/{a['players']}) − {b['id']} ({b['game']}/{b['players']})",
        ["figure", "a", "b", "a − b", "95% CI", "p-value", "p (Holm)"],
    )
    f = result["first_player_advantage"]
    rows = [("first-player advantage", f)]
    rows += [(f"seat {s['seat']} share", s) for s in result["seats"]]
    rows += [
        (f"turn position {s['position']} share", s) for s in result.get("turn_positions") or []
    ]
    for name, r in rows:
        t.add_row(
            name,
            pct(r["a"]),
            pct(r["b"]),
            pct(r["difference"]),
            span(r["ci_low"], r["ci_high"]),
            p_value(r["p_value"]),
            p_value(r.get("p_holm")),
        )
    t.caption = result.get("method")
    return t


def describe_batch(batch: Batch) -> str:
    """One line: game, players, agents, matches, seed, seat policy."""
    opts = ", ".join(f"{k}={v}" for k, v in batch.options.items() if not isinstance(v, list))
    return (
        f"{batch.game} ({batch.players} players{', ' + opts if opts else ''}): "
        f"{' vs '.join(batch.labels)}; {batch.matches} matches, seed {batch.seed}, "
        f"seats {batch.seat_policy}, {chunking(batch.chunk_size)}"
    )


def chunking(chunk_size: int) -> str:
    """How a batch is cut: ``chunks of 50``, or measured sizes when none was given."""
    return f"chunks of {chunk_size}" if chunk_size else "chunks sized by measurement"
