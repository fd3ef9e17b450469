"""A report as one self-contained HTML page: tables plus inline SVG figures, no network."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import pandas as pd

from analysis import plots
from analysis.formatting import elo_span, independence_line, num, p_value, pct, span
from analysis.games import game_report
from analysis.html_parts import figure, table, text_table

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 1100px;
       color: #222; line-height: 1.4; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; } h2 { font-size: 1.2rem; margin-top: 2rem;
     border-bottom: 1px solid #ccc; } .meta { color: #555; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
th, td { padding: 0.2rem 0.6rem; border-bottom: 1px solid #e4e4e4; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
figure { margin: 0.5rem 0; display: inline-block; vertical-align: top; }
figure svg { max-width: 100%; height: auto; width: 620px; }
figure.small svg { width: 340px; } figcaption { font-size: 0.8rem; color: #555; }
.note { font-size: 0.85rem; color: #555; } .decision { font-weight: bold; }
.partial { background: #fff4d6; border-left: 4px solid #d9a400; padding: 0.3rem 0.6rem; }
"""


def _seat_rows(rows: list[Mapping[str, Any]], label: str, cls: str) -> str:
    cells = [
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
        ]
        for s in rows
    ]
    headers = [label, "games", "win share", "95 % interval", "expected", "p-value"]
    headers += ["p (Holm)", "mean points", "points interval"]
    return table(headers, cells, cls)


def _independence(r: Mapping[str, Any]) -> str:
    block = r.get("independence")
    if not block:
        return ""
    warning = block.get("warning")
    return f"<p class='note' id='independence'>{html.escape(independence_line(block))}</p>" + (
        f"<p class='partial' id='independence-warning'>{html.escape(warning)}</p>"
        if warning
        else ""
    )


def _seats(r: Mapping[str, Any]) -> str:
    out = _independence(r) + _seat_rows(r["seats"], "seat", "seats")
    if r.get("turn_positions"):
        out += "<h3>By turn position (0 = the player who moved first)</h3>" + _seat_rows(
            r["turn_positions"], "position", "turn-positions-generic"
        )
    if r["seats"] and r["seats"][0]["games"]:
        svg = plots.to_svg(plots.seat_shares(pd.DataFrame(r["seats"])))
        out += figure("fig-seats", svg, "Win share per seat with 95 % intervals")
    f = r["first_player_advantage"]
    out += (
        f'<p id="fpa">First-player advantage (the player who moved first): '
        f"<b>{pct(f.get('estimate'))}</b> "
        f"(95 % interval {span(f.get('ci_low'), f.get('ci_high'))}, "
        f"p = {p_value(f.get('p_value'))})</p>"
    )
    return out


def _agents(r: Mapping[str, Any]) -> str:
    rows = [
        [
            html.escape(a["agent"]),
            num(a["games"]),
            pct(a["score"]),
            span(a["ci_low"], a["ci_high"]),
            num(a["elo"], 1),
            elo_span(a["elo_low"], a["elo_high"]),
            a["elo_model"],
        ]
        for a in r["agents"]
    ]
    out = table(
        ["agent", "games", "score", "95 % interval", "Elo vs field", "Elo interval", "model"],
        rows,
        "agents",
    )
    if r["agents"]:
        svg = plots.to_svg(plots.agent_scores(pd.DataFrame(r["agents"])))
        out += figure("fig-agents", svg, "Score per agent with 95 % intervals")
    if r["pairings"]:
        prow = [
            [
                html.escape(f"{p['agent_a']} vs {p['agent_b']}"),
                num(p["games"]),
                f"{p['wins']}/{p['draws']}/{p['losses']}",
                pct(p["score"]),
                num(p["elo"], 1),
                elo_span(p["elo_low"], p["elo_high"]),
                pct(p["los"]),
                p["model"] + (f" {p['pentanomial']}" if p["pentanomial"] else ""),
            ]
            for p in r["pairings"]
        ]
        out += "<h3>Pairings</h3>" + table(
            ["pairing", "games", "W/D/L", "score", "Elo", "Elo interval", "LOS", "model"],
            prow,
            "pairings",
        )
    if r["strengths"]:
        srow = [
            [
                html.escape(s["agent"]),
                num(s["strength"], 1),
                span(s["ci_low"], s["ci_high"], lambda x: num(x, 1)),
            ]
            for s in r["strengths"]
        ]
        out += "<h3>Bradley–Terry strengths (Elo scale)</h3>" + table(
            ["agent", "strength", "95 % bootstrap interval"], srow, "strengths"
        )
    return out


def _shape(r: Mapping[str, Any]) -> str:
    s = r["shape"]
    p = s["plies"]
    out = table(
        [
            "matches",
            "failed",
            "draw rate",
            "draw interval",
            "completion",
            "balance",
            "balance interval",
            "mean plies",
            "median",
            "p10",
            "p90",
        ],
        [
            [
                num(s["matches"]),
                num(s.get("failed", 0)),
                pct(s["draw_rate"]),
                span(s.get("draw_rate_ci_low"), s.get("draw_rate_ci_high")),
                pct(s["completion"]),
                num(s["balance"], 3),
                span(s.get("balance_ci_low"), s.get("balance_ci_high"), lambda x: num(x, 3)),
                num(p["mean"], 1),
                num(p["median"], 1),
                num(p["p10"], 1),
                num(p["p90"], 1),
            ]
        ],
        "shape",
    )
    if s.get("balance_note"):
        fair = num(s.get("balance_if_fair"), 3)
        out += f'<p class="note">{html.escape(s["balance_note"])} (here: {fair}).</p>'
    hist = p["histogram"]
    if hist["counts"]:
        edges = hist["edges"]
        df = pd.DataFrame({"left": edges[:-1], "right": edges[1:], "count": hist["counts"]})
        out += figure("fig-plies", plots.to_svg(plots.plies_histogram(df)), "Plies per match")
    total = sum(s["ended_by"].values()) or 1
    out += table(
        ["ended by", "matches", "share"],
        [[html.escape(k), num(v), pct(v / total)] for k, v in s["ended_by"].items()],
        "ended",
    )
    return out


def _compensation(r: Mapping[str, Any]) -> str:
    c = r["fair_compensation"]
    if not c:
        return ""
    rows = [
        [
            str(o["seat"]),
            num(o["points"], 1),
            span(o["ci_low"], o["ci_high"], lambda x: num(x, 1)),
        ]
        for o in c["offsets"] or []
    ]
    note = f'<p class="note">{html.escape(c["note"])}</p>' if c.get("note") else ""
    return (
        "<h2>Fair compensation (komi)</h2>"
        + (table(["turn position", "points to add", "95 % interval"], rows, "komi") if rows else "")
        + f'<p class="note">{html.escape(c["method"])}</p>'
        + note
    )


def _sprt(r: Mapping[str, Any]) -> str:
    s = r["sprt"]
    if not s:
        return ""
    return (
        "<h2>Early stopping (SPRT)</h2>"
        f'<p class="decision" id="sprt">{html.escape(s["verdict"])}</p>'
        + table(
            ["agents", "elo0", "elo1", "model", "games", "LLR", "lower", "upper"],
            [
                [
                    html.escape(" vs ".join(s["agents"])),
                    num(s["elo0"], 1),
                    num(s["elo1"], 1),
                    s["model"],
                    num(s["games"]),
                    num(s["llr"], 3),
                    num(s["lower"], 3),
                    num(s["upper"], 3),
                ]
            ],
            "sprt",
        )
    )


def report_title(report: Mapping[str, Any]) -> str:
    """The report's title: batch id, game and player count."""
    b = report["batch"]
    return f"playtester report {b['id']}: {b['game']}, {b['players']} players"


def render_html(report: Mapping[str, Any]) -> str:
    """The whole report as one HTML page (inline CSS and SVG; nothing fetched)."""
    title = html.escape(report_title(report))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{title}</title><style>{STYLE}</style></head><body>"
        f"<h1>{title}</h1>{render_sections(report)}</body></html>"
    )


def render_sections(report: Mapping[str, Any]) -> str:
    """The report's content under its title (meta line, sections, figures, method), for a
    page that brings its own head, title and style (the dashboard's batch page)."""
    b = report["batch"]
    stopped = " — stopped early" if b.get("stopped_early") else ""
    parts = [
        f"<p class='meta'>{html.escape(' vs '.join(b['labels']))}; "
        f"{num(b['matches_done'])} of {num(b['matches'])} matches "
        f"({num(b['matches_failed'])} failed); seats {html.escape(b['seat_policy'])}; "
        f"status {html.escape(b['status'])}{stopped}; seed {b['seed']}</p>",
        (
            f"<p class='partial'>{html.escape(b['partial_note'])}</p>"
            if b.get("partial_note")
            else ""
        ),
        "<h2>Seats</h2>",
        _seats(report),
        "<h2>Agents</h2>",
        _agents(report),
        "<h2>Game shape</h2>",
        _shape(report),
        _compensation(report),
    ]
    game = report.get("game")
    section = game_report(game["name"]) if game else None
    if game and section:
        body = (
            section.html(game) if section.html else "".join(map(text_table, section.tables(game)))
        )
        parts.append(f"<h2>{html.escape(section.title)}</h2>{body}")
    parts.append(_sprt(report))
    notes = "".join(
        f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in report["method"].items()
    )
    parts.append(f"<h2>Method</h2><ul class='note'>{notes}</ul>")
    return "".join(parts)
