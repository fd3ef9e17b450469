"""Rich tables that render a report (``analysis.report.build_report``) and describe a batch.

Shared by ``run``, ``show``, ``report`` and ``compare`` so every command shows the same figures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.table import Table

from storage.models import Batch


def _pct(v: Any) -> str:
    return "-" if v is None else f"{100 * float(v):.1f}%"


def _num(v: Any, digits: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return f"{float(v):.{digits}f}"


def _p(v: Any) -> str:
    return "-" if v is None else f"{float(v):.3g}"


def _span(lo: Any, hi: Any, fmt: Callable[[Any], str] = _pct) -> str:
    return "-" if lo is None or hi is None else f"{fmt(lo)}–{fmt(hi)}"


def _elo_span(lo: Any, hi: Any) -> str:
    """An Elo interval; a missing end is unbounded (the score interval reached 0 or 1)."""
    return f"{'-∞' if lo is None else _num(lo)}–{'+∞' if hi is None else _num(hi)}"


def _table(title: str, columns: list[str]) -> Table:
    table = Table(title=title, title_justify="left")
    for i, name in enumerate(columns):
        table.add_column(name, justify="left" if i == 0 else "right")
    return table


def seat_table(report: Mapping[str, Any]) -> Table:
    """Seat balance with intervals, tests and mean points."""
    interval = report["seats"][0]["interval"] if report["seats"] else "wilson"
    t = _table(
        f"Seat balance (95% {interval} intervals)",
        ["seat", "games", "win share", "95% CI", "expected", "p-value", "mean points"],
    )
    for s in report["seats"]:
        t.add_row(
            str(s["seat"]),
            _num(s["games"]),
            _pct(s["win_share"]),
            _span(s["ci_low"], s["ci_high"]),
            _pct(s["expected"]),
            _p(s["p_value"]),
            _num(s["mean_points"], 2),
        )
    f = report["first_player_advantage"]
    t.caption = (
        f"first-player advantage {_pct(f.get('estimate'))} "
        f"(95% CI {_span(f.get('ci_low'), f.get('ci_high'))}, p={_p(f.get('p_value'))})"
    )
    partial = report["batch"].get("partial_note")
    if partial:
        t.caption += f"\n{partial}"
    return t


def agents_table(report: Mapping[str, Any]) -> Table:
    """Per agent: score and Elo against the field, with intervals."""
    t = _table("Agent scores", ["agent", "games", "score", "95% CI", "Elo", "Elo 95% CI", "model"])
    for a in report["agents"]:
        t.add_row(
            a["agent"],
            _num(a["games"]),
            _pct(a["score"]),
            _span(a["ci_low"], a["ci_high"]),
            _num(a["elo"]),
            _elo_span(a["elo_low"], a["elo_high"]),
            a["elo_model"],
        )
    return t


def pairings_table(report: Mapping[str, Any]) -> Table:
    """Head-to-head records: W/D/L, score, Elo with interval, LOS."""
    t = _table("Pairings", ["pairing", "games", "W/D/L", "score", "Elo", "Elo 95% CI", "LOS"])
    for p in report["pairings"]:
        t.add_row(
            f"{p['agent_a']} vs {p['agent_b']}",
            _num(p["games"]),
            f"{p['wins']}/{p['draws']}/{p['losses']}",
            _pct(p["score"]),
            _num(p["elo"]),
            _elo_span(p["elo_low"], p["elo_high"]),
            _pct(p["los"]),
        )
    return t


def shape_table(report: Mapping[str, Any]) -> Table:
    """Draws, completion, balance and game length."""
    s = report["shape"]
    p = s["plies"]
    t = _table(
        "Game shape",
        ["matches", "draw rate", "completion", "balance", "plies mean", "median", "p10", "p90"],
    )
    t.add_row(
        _num(s["matches"]),
        _pct(s["draw_rate"]),
        _pct(s["completion"]),
        _num(s["balance"], 3),
        _num(p["mean"]),
        _num(p["median"]),
        _num(p["p10"]),
        _num(p["p90"]),
    )
    t.caption = "ended by: " + ", ".join(f"{k} {v:,}" for k, v in s["ended_by"].items())
    return t


def report_tables(report: Mapping[str, Any]) -> list[Table]:
    """Every table of a report, in reading order."""
    tables = [seat_table(report), agents_table(report)]
    if report["pairings"]:
        tables.append(pairings_table(report))
    if report["strengths"]:
        t = _table("Bradley–Terry strengths (Elo scale)", ["agent", "strength", "95% CI"])
        for s in report["strengths"]:
            t.add_row(s["agent"], _num(s["strength"]), _span(s["ci_low"], s["ci_high"], _num))
        tables.append(t)
    tables.append(shape_table(report))
    komi = report.get("fair_compensation")
    if komi:
        t = _table("Fair compensation (komi)", ["seat", "points to add", "95% CI"])
        for o in komi["offsets"] or []:
            t.add_row(str(o["seat"]), _num(o["points"]), _span(o["ci_low"], o["ci_high"], _num))
        if komi.get("note"):
            t.caption = komi["note"]
        tables.append(t)
    game = report.get("game") or {}
    if game.get("name") == "alquerque":
        t = _table("Draw causes", ["cause", "draws", "share"])
        for c in game["draw_causes"]:
            t.add_row(c["label"], _num(c["draws"]), _pct(c["share"]))
        tables.append(t)
    elif game.get("name") == "alveoles":
        t = _table("Tiers that separate winners from losers", ["tier", "share diff", "95% CI"])
        for d in game["deciding_tiers"]:
            t.add_row(str(d["tier"]), _pct(d["difference"]), _span(d["ci_low"], d["ci_high"]))
        tables.append(t)
    sprt = report.get("sprt")
    if sprt:
        t = _table("SPRT", ["agents", "LLR", "bounds", "games", "state"])
        t.add_row(
            " vs ".join(sprt["agents"]),
            _num(sprt["llr"], 3),
            _span(sprt["lower"], sprt["upper"], lambda x: _num(x, 3)),
            _num(sprt["games"]),
            sprt["verdict"],
        )
        tables.append(t)
    return tables


def compare_table(result: Mapping[str, Any]) -> Table:
    """Differences a − b of first-player advantage and seat shares."""
    a, b = result["a"], result["b"]
    t = _table(
        f"{a['id']} ({a['game']}/{a['players']}) − {b['id']} ({b['game']}/{b['players']})",
        ["figure", "a", "b", "a − b", "95% CI", "p-value"],
    )
    f = result["first_player_advantage"]
    rows = [("first-player advantage", f)] + [
        (f"seat {s['seat']} share", s) for s in result["seats"]
    ]
    for name, r in rows:
        t.add_row(
            name,
            _pct(r["a"]),
            _pct(r["b"]),
            _pct(r["difference"]),
            _span(r["ci_low"], r["ci_high"]),
            _p(r["p_value"]),
        )
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
