"""Rich tables that render a report (``analysis.report.build_report``) and describe a batch.

Shared by ``run``, ``show``, ``report`` and ``compare`` so every command shows the same figures.
The report's tables are built once by ``analysis.report_tables`` (the HTML page renders the same
ones); this module only lays them out for the terminal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table

from analysis import report_tables as model
from analysis.formatting import TextTable, p_value, pct, span
from engines.variation import Variation
from storage.models import Batch


def _table(title: str, columns: Sequence[str]) -> Table:
    table = Table(title=title, title_justify="left")
    for i, name in enumerate(columns):
        # Fold rather than cut: an 80-column terminal must still show every interval whole.
        table.add_column(name, justify="left" if i == 0 else "right", overflow="fold")
    return table


def rich_table(t: TextTable) -> Table:
    """A report's ``TextTable`` as a terminal table."""
    table = _table(t.title, t.columns)
    for row in t.rows:
        table.add_row(*row)
    if t.note:
        table.caption = t.note
    return table


def seat_table(report: Mapping[str, Any]) -> Table:
    """Seat balance, with the first-player advantage, the independence counts, any warning
    about them and a partial batch's note below."""
    model_table = model.seat_table(report)
    estimate, rest = model.first_player_parts(report)
    warning = model.independence_warning(report)
    lines = [
        f"first-player advantage (the player who moved first) {estimate} {rest}",
        model_table.note,
        f"warning: {warning}" if warning else None,
        report["batch"].get("partial_note"),
    ]
    t = rich_table(model_table)
    t.caption = "\n".join(line for line in lines if line)
    return t


def agents_table(report: Mapping[str, Any]) -> Table:
    """Per agent: score and Elo against the field, with intervals."""
    return rich_table(model.agent_table(report))


def shape_table(report: Mapping[str, Any]) -> Table:
    """Draws, completion, balance, game length and endings."""
    return rich_table(model.shape_table(report))


def report_tables(report: Mapping[str, Any]) -> list[Table]:
    """Every table of a report, in reading order (``analysis.report_tables``)."""
    tables = model.report_tables(report)
    return [seat_table(report), *(rich_table(t) for t in tables[1:])]


def compare_table(result: Mapping[str, Any]) -> Table:
    """Differences a − b of the starting player's advantage, of seat (and turn-position)
    shares and of the game's own shares."""
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
    rows += [(str(g["figure"]), g) for g in result.get("game_figures") or []]
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
    """One line: game, players, agents, matches, seed, seat policy, variation, clocks."""
    opts = ", ".join(f"{k}={v}" for k, v in batch.options.items() if not isinstance(v, list))
    varied = ""
    if batch.variation is not None:
        varied = "; " + Variation.from_record(batch.variation).describe()
    clocks = ""
    if batch.time_control is not None:
        clocks = f"; clocks {batch.time_control} (not reproducible from the seed)"
    return (
        f"{batch.game} ({batch.players} players{', ' + opts if opts else ''}): "
        f"{' vs '.join(batch.labels)}; {batch.matches} matches, seed {batch.seed}, "
        f"seats {batch.seat_policy}, {chunking(batch.chunk_size)}{varied}{clocks}"
    )


def chunking(chunk_size: int) -> str:
    """How a batch is cut: ``chunks of 50``, or measured sizes when none was given."""
    return f"chunks of {chunk_size}" if chunk_size else "chunks sized by measurement"
