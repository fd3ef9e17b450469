"""One table model, two renderings: the terminal and the HTML page show the same cells."""

from __future__ import annotations

from html.parser import HTMLParser

from analysis_data import alveoles_outcome, alveoles_stats, store_batch

from analysis import report_tables
from analysis.render_html import render_html
from analysis.report import build_report
from api.cli_tables import report_tables as terminal_tables
from storage.db import get_engine


class Tables(HTMLParser):
    """Every ``<table>`` of a page: its class, header cells and body rows, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[str], list[list[str]]]] = []
        self._cell: list[str] | None = None
        self._row: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.found.append((dict(attrs).get("class") or "", [], []))
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self.found:
            _, head, body = self.found[-1]
            if head:
                body.append(self._row)
            else:
                head.extend(self._row)


def stored_report(url: str) -> dict:
    """Three players with points (komi), a stop rule (SPRT) and the Alvéoles section."""
    stats = [
        alveoles_stats([(m + sq) % 3 if sq % 5 else m % 3 for sq in range(64)], (0, 0, 0), 3)
        for m in range(36)
    ]
    _, bid = store_batch(
        url, game="alveoles", players=3, labels=["greedy", "random", "hunter"],
        outcomes=[alveoles_outcome(s) for s in stats], stats=lambda i: stats[i],
        openings=lambda i: i,
        stop_rule={"type": "sprt", "agents": ["greedy", "random"], "elo0": 0.0, "elo1": 30.0},
    )  # fmt: skip
    return build_report(get_engine(url), bid)


def test_terminal_and_html_show_the_same_cells(migrated_sqlite_url: str) -> None:
    report = stored_report(migrated_sqlite_url)
    model = report_tables.report_tables(report)
    titles = [t.title for t in model]
    for wanted in ("Agent scores", "Pairings", "Bradley–Terry strengths (Elo scale)",
                   "Game shape", "Fair compensation (komi)", "SPRT",
                   "Tiers that separate winners from losers"):  # fmt: skip
        assert wanted in titles
    terminal = terminal_tables(report)
    assert len(terminal) == len(model)
    page = Tables()
    page.feed(render_html(report))
    by_class = {cls: (head, body) for cls, head, body in page.found}
    for t, shown in zip(model, terminal, strict=True):
        cells = [list(c.cells) for c in shown.columns]
        rows = [list(r) for r in zip(*cells, strict=True)] if cells else []
        assert [str(c.header) for c in shown.columns] == list(t.columns), t.title
        assert rows == t.rows, t.title
        head, body = by_class[t.css_class]
        assert head == list(t.columns), t.title
        assert body == t.rows, t.title


def test_the_agent_tables_show_units_holm_and_labels() -> None:
    report = {
        "agents": [
            {"agent": "easy", "labels": ["easy", "easy#2"], "games": 80, "units": 0,
             "score": 0.5, "ci_low": 0.4, "ci_high": 0.6, "elo": None, "elo_low": None,
             "elo_high": None, "elo_model": "clustered",
             "note": "no other agent to compare with"},
        ],
        "pairings": [
            {"agent_a": "easy", "agent_b": "easy#2", "games": 40, "units": 40, "wins": 26,
             "draws": 0, "losses": 14, "score": 0.65, "elo": None, "elo_low": None,
             "elo_high": None, "los": None, "p_value": None, "p_holm": None,
             "model": "trinomial", "pentanomial": None, "comparison": "seat effect",
             "note": "copies of one agent in fixed seats: the gap is the seats' effect"},
        ],
    }  # fmt: skip
    agents = report_tables.agent_table(report)
    assert agents.rows[0][:3] == ["easy (easy, easy#2)", "80", "0"]
    assert agents.rows[0][5] == "–" and agents.note == "no other agent to compare with"
    pairs = report_tables.pairings_table(report)
    assert "Holm p" in pairs.columns and "units" in pairs.columns
    assert pairs.rows[0][0] == "easy vs easy#2 (seat effect)"
    assert pairs.rows[0][5:10] == ["–", "–", "–", "–", "–"]
    assert "seats' effect" in (pairs.note or "")
