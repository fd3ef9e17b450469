"""A report as one self-contained HTML page: tables plus inline SVG figures, no network.

The tables are ``analysis.report_tables``'s (the terminal shows the same cells); this module
places them in sections with the figures.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import pandas as pd

from analysis import plots
from analysis import report_tables as model
from analysis.formatting import num
from analysis.games import game_report
from analysis.html_parts import figure, text_table

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


def _seats(r: Mapping[str, Any]) -> str:
    out = text_table(model.seat_table(r))
    warning = model.independence_warning(r)
    if warning:
        out += f'<p class="partial" id="independence-warning">{html.escape(warning)}</p>'
    turns = model.turn_position_table(r)
    if turns is not None:
        out += text_table(turns)
    if r["seats"] and r["seats"][0]["games"]:
        svg = plots.to_svg(plots.seat_shares(pd.DataFrame(r["seats"])))
        out += figure("fig-seats", svg, "Win share per seat with 95 % intervals")
    estimate, rest = model.first_player_parts(r)
    return out + (
        f'<p id="fpa">First-player advantage (the player who moved first): '
        f"<b>{html.escape(estimate)}</b> {html.escape(rest)}</p>"
    )


def _agents(r: Mapping[str, Any]) -> str:
    out = text_table(model.agent_table(r))
    if r["agents"]:
        svg = plots.to_svg(plots.agent_scores(pd.DataFrame(r["agents"])))
        out += figure("fig-agents", svg, "Score per agent with 95 % intervals")
    if r["pairings"]:
        out += text_table(model.pairings_table(r))
    if r["strengths"]:
        out += text_table(model.strengths_table(r))
    return out


def _shape(r: Mapping[str, Any]) -> str:
    out = text_table(model.shape_table(r))
    hist = r["shape"]["plies"]["histogram"]
    if hist["counts"]:
        edges = hist["edges"]
        df = pd.DataFrame({"left": edges[:-1], "right": edges[1:], "count": hist["counts"]})
        out += figure("fig-plies", plots.to_svg(plots.plies_histogram(df)), "Plies per match")
    return out


def _compensation(r: Mapping[str, Any]) -> str:
    t = model.compensation_table(r)
    if t is None:
        return ""
    method = html.escape(r["fair_compensation"]["method"])
    # Without offsets there is no table, but its note says why.
    note = f'<p class="note">{html.escape(t.note)}</p>' if t.note else ""
    body = text_table(t) if t.rows else note
    return f'<h2>Fair compensation (komi)</h2>{body}<p class="note">{method}</p>'


def _sprt(r: Mapping[str, Any]) -> str:
    t = model.sprt_table(r)
    if t is None:
        return ""
    verdict = html.escape(r["sprt"]["verdict"])
    return f'<h2>Early stopping (SPRT)</h2><p class="decision" id="sprt">{verdict}</p>' + (
        text_table(t)
    )


def _precision(r: Mapping[str, Any]) -> str:
    t = model.precision_table(r)
    if t is None:
        return ""
    verdict = html.escape(r["precision"]["verdict"])
    return (
        f'<h2>Early stopping (precision)</h2><p class="decision" id="precision">{verdict}</p>'
        + text_table(t)
    )


def _clock(r: Mapping[str, Any]) -> str:
    t = model.clock_table(r)
    return "" if t is None else f"<h2>Clocks</h2>{text_table(t)}"


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
        _clock(report),
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
    parts.append(_precision(report))
    notes = "".join(
        f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in report["method"].items()
    )
    parts.append(f"<h2>Method</h2><ul class='note'>{notes}</ul>")
    return "".join(parts)
