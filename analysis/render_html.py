"""A report as one self-contained HTML page: tables plus inline SVG figures, no network."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from analysis import plots

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


def _num(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:.{digits}g}" if abs(v) < 1e-3 and v != 0 else f"{v:,.{digits}f}"
    return html.escape(str(v))


def _pct(v: Any) -> str:
    return "–" if v is None else f"{100 * float(v):.1f} %"


def _interval(lo: Any, hi: Any, fmt: Callable[[Any], str] = _pct) -> str:
    return "–" if lo is None or hi is None else f"{fmt(lo)} – {fmt(hi)}"


def _elo_interval(lo: Any, hi: Any) -> str:
    """An Elo interval; a missing end is unbounded (the score interval reached 0 or 1)."""
    return f"{'−∞' if lo is None else _num(lo, 1)} – {'+∞' if hi is None else _num(hi, 1)}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _figure(fig_id: str, svg: str, caption: str, small: bool = False) -> str:
    cls = ' class="small"' if small else ""
    return (
        f'<figure id="{fig_id}"{cls}>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>'
    )


def _seats(r: Mapping[str, Any]) -> str:
    rows = [
        [
            str(s["seat"]),
            _num(s["games"]),
            _pct(s["win_share"]),
            _interval(s["ci_low"], s["ci_high"]),
            _pct(s["expected"]),
            _num(s["p_value"]),
            _num(s["mean_points"], 2),
            _interval(s["points_ci_low"], s["points_ci_high"], lambda x: _num(x, 2)),
        ]
        for s in r["seats"]
    ]
    out = _table(
        [
            "seat",
            "games",
            "win share",
            "95 % interval",
            "expected",
            "p-value",
            "mean points",
            "points interval",
        ],
        rows,
        "seats",
    )
    if r["seats"] and r["seats"][0]["games"]:
        svg = plots.to_svg(plots.seat_shares(pd.DataFrame(r["seats"])))
        out += _figure("fig-seats", svg, "Win share per seat with 95 % intervals")
    f = r["first_player_advantage"]
    out += (
        f'<p id="fpa">First-player advantage: <b>{_pct(f.get("estimate"))}</b> '
        f"(95 % interval {_interval(f.get('ci_low'), f.get('ci_high'))}, "
        f"p = {_num(f.get('p_value'))})</p>"
    )
    return out


def _agents(r: Mapping[str, Any]) -> str:
    rows = [
        [
            html.escape(a["agent"]),
            _num(a["games"]),
            _pct(a["score"]),
            _interval(a["ci_low"], a["ci_high"]),
            _num(a["elo"], 1),
            _elo_interval(a["elo_low"], a["elo_high"]),
            a["elo_model"],
        ]
        for a in r["agents"]
    ]
    out = _table(
        ["agent", "games", "score", "95 % interval", "Elo vs field", "Elo interval", "model"],
        rows,
        "agents",
    )
    if r["agents"]:
        svg = plots.to_svg(plots.agent_scores(pd.DataFrame(r["agents"])))
        out += _figure("fig-agents", svg, "Score per agent with 95 % intervals")
    if r["pairings"]:
        prow = [
            [
                html.escape(f"{p['agent_a']} vs {p['agent_b']}"),
                _num(p["games"]),
                f"{p['wins']}/{p['draws']}/{p['losses']}",
                _pct(p["score"]),
                _num(p["elo"], 1),
                _elo_interval(p["elo_low"], p["elo_high"]),
                _pct(p["los"]),
                p["model"] + (f" {p['pentanomial']}" if p["pentanomial"] else ""),
            ]
            for p in r["pairings"]
        ]
        out += "<h3>Pairings</h3>" + _table(
            ["pairing", "games", "W/D/L", "score", "Elo", "Elo interval", "LOS", "model"],
            prow,
            "pairings",
        )
    if r["strengths"]:
        srow = [
            [
                html.escape(s["agent"]),
                _num(s["strength"], 1),
                _interval(s["ci_low"], s["ci_high"], lambda x: _num(x, 1)),
            ]
            for s in r["strengths"]
        ]
        out += "<h3>Bradley–Terry strengths (Elo scale)</h3>" + _table(
            ["agent", "strength", "95 % bootstrap interval"], srow, "strengths"
        )
    return out


def _shape(r: Mapping[str, Any]) -> str:
    s = r["shape"]
    p = s["plies"]
    out = _table(
        [
            "matches",
            "failed",
            "draw rate",
            "completion",
            "balance",
            "mean plies",
            "median",
            "p10",
            "p90",
        ],
        [
            [
                _num(s["matches"]),
                _num(s.get("failed", 0)),
                _pct(s["draw_rate"]),
                _pct(s["completion"]),
                _num(s["balance"]),
                _num(p["mean"], 1),
                _num(p["median"], 1),
                _num(p["p10"], 1),
                _num(p["p90"], 1),
            ]
        ],
        "shape",
    )
    hist = p["histogram"]
    if hist["counts"]:
        edges = hist["edges"]
        df = pd.DataFrame({"left": edges[:-1], "right": edges[1:], "count": hist["counts"]})
        out += _figure("fig-plies", plots.to_svg(plots.plies_histogram(df)), "Plies per match")
    total = sum(s["ended_by"].values()) or 1
    out += _table(
        ["ended by", "matches", "share"],
        [[html.escape(k), _num(v), _pct(v / total)] for k, v in s["ended_by"].items()],
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
            _num(o["points"], 1),
            _interval(o["ci_low"], o["ci_high"], lambda x: _num(x, 1)),
        ]
        for o in c["offsets"] or []
    ]
    note = f'<p class="note">{html.escape(c["note"])}</p>' if c.get("note") else ""
    return (
        "<h2>Fair compensation (komi)</h2>"
        + (_table(["seat", "points to add", "95 % interval"], rows, "komi") if rows else "")
        + f'<p class="note">{html.escape(c["method"])}</p>'
        + note
    )


def _heat_df(grid: Sequence[Sequence[float | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        [[float("nan") if v is None else v for v in row] for row in grid],
        index=range(1, 9),
        columns=list("abcdefgh"),
    )


def _alveoles(g: Mapping[str, Any]) -> str:
    out = "<h2>Les Alvéoles: square values</h2>"
    heat = g["heat_map"]
    figs = [
        _figure(
            "fig-heat-seat0",
            plots.to_svg(plots.heat_map(_heat_df(heat["seat0"]), title="Seat 0 owns the square")),
            "P(seat 0 owns square)",
            True,
        )
    ]
    for i, (agent, grid) in enumerate(heat["by_agent"].items()):
        svg = plots.to_svg(plots.heat_map(_heat_df(grid), title=f"{agent} owns the square"))
        figs.append(_figure(f"fig-heat-agent-{i}", svg, f"P({agent} owns square)", True))
    out += "".join(figs)
    tiers = pd.DataFrame(g["tiers_by_agent"])
    if not tiers.empty:
        tiers = tiers.rename(columns={"agent": "group"})
        out += _figure(
            "fig-tiers",
            plots.to_svg(plots.tier_shares(tiers)),
            "Share of each value tier's squares taken, per agent",
        )
        rows = [
            [
                html.escape(str(t["agent"])),
                str(t["tier"]),
                _num(t["squares"], 2),
                _num(t["points"], 1),
                _pct(t["share"]),
            ]
            for t in g["tiers_by_agent"]
        ]
        out += _table(["agent", "tier", "squares", "points", "share"], rows, "tiers")
    rows = [
        [
            str(d["tier"]),
            _pct(d["difference"]),
            _interval(d["ci_low"], d["ci_high"]),
            _num(d["p_value"]),
        ]
        for d in g["deciding_tiers"]
    ]
    out += "<h3>Tiers that separate winners from losers</h3>" + _table(
        ["tier", "winners − losers (share)", "95 % interval", "p-value"], rows, "deciding"
    )
    rows = [
        [
            html.escape(str(b["agent"])),
            _num(b["row_points"], 1),
            _num(b["column_points"], 1),
            _num(b["block_points"], 1),
            _num(b["replays"], 1),
        ]
        for b in g["bonus_by_agent"]
    ]
    out += "<h3>Bonus points per game</h3>" + _table(
        ["agent", "rows", "columns", "3 × 3 blocks", "replays"], rows, "bonus"
    )
    return out


def _alquerque(g: Mapping[str, Any]) -> str:
    rows = [[html.escape(c["label"]), _num(c["draws"]), _pct(c["share"])] for c in g["draw_causes"]]
    return "<h2>Alquerque: draw causes</h2>" + _table(["cause", "draws", "share"], rows, "draws")


def _sprt(r: Mapping[str, Any]) -> str:
    s = r["sprt"]
    if not s:
        return ""
    return (
        "<h2>Early stopping (SPRT)</h2>"
        f'<p class="decision" id="sprt">{html.escape(s["verdict"])}</p>'
        + _table(
            ["agents", "elo0", "elo1", "model", "games", "LLR", "lower", "upper"],
            [
                [
                    html.escape(" vs ".join(s["agents"])),
                    _num(s["elo0"], 1),
                    _num(s["elo1"], 1),
                    s["model"],
                    _num(s["games"]),
                    _num(s["llr"]),
                    _num(s["lower"]),
                    _num(s["upper"]),
                ]
            ],
            "sprt",
        )
    )


def render_html(report: Mapping[str, Any]) -> str:
    """The whole report as one HTML page (inline CSS and SVG; nothing fetched)."""
    b = report["batch"]
    title = f"playtester report {b['id']}: {b['game']}, {b['players']} players"
    stopped = " — stopped early" if b.get("stopped_early") else ""
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='meta'>{html.escape(' vs '.join(b['labels']))}; "
        f"{_num(b['matches_done'])} of {_num(b['matches'])} matches "
        f"({_num(b['matches_failed'])} failed); seats {html.escape(b['seat_policy'])}; "
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
    if game and game.get("name") == "alveoles":
        parts.append(_alveoles(game))
    elif game and game.get("name") == "alquerque":
        parts.append(_alquerque(game))
    parts.append(_sprt(report))
    notes = "".join(
        f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in report["method"].items()
    )
    parts.append(f"<h2>Method</h2><ul class='note'>{notes}</ul></body></html>")
    return "".join(parts)
