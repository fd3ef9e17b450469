"""Rich tables for the ``playtester`` commands: seat balance, agent scores, game shape."""

from __future__ import annotations

from rich.table import Table
from sqlalchemy import Engine

from analysis.frames import matches, seat_results
from analysis.seats import agent_scores, seat_balance
from storage.models import Batch


def _pct(value: float) -> str:
    return "-" if value != value else f"{100 * value:.1f}%"


def seat_table(engine: Engine, batch: Batch) -> Table:
    """The seat-balance table of a batch."""
    frame = seat_balance(seat_results(engine, batch.id), batch.players)
    table = Table(title="Seat balance (95% Wilson intervals)", title_justify="left")
    for name in ("seat", "games", "win share", "95% CI", "expected", "p-value", "mean points"):
        table.add_column(name, justify="left" if name == "seat" else "right")
    for row in frame.itertuples():
        table.add_row(
            str(row.seat),
            str(row.games),
            _pct(row.win_share),
            f"{_pct(row.ci_low)}–{_pct(row.ci_high)}",
            _pct(row.expected),
            "-" if row.p_value != row.p_value else f"{row.p_value:.3g}",
            "-" if row.mean_points != row.mean_points else f"{row.mean_points:.2f}",
        )
    return table


def agent_table(engine: Engine, batch: Batch) -> Table:
    """Per agent: games and score (mean win share) with its interval."""
    frame = agent_scores(seat_results(engine, batch.id))
    table = Table(title="Agent scores (win share, 95% Wilson intervals)", title_justify="left")
    for name in ("agent", "games", "score", "95% CI", "mean points"):
        table.add_column(name, justify="left" if name == "agent" else "right")
    for row in frame.itertuples():
        table.add_row(
            str(row.agent),
            str(row.games),
            _pct(row.score),
            f"{_pct(row.ci_low)}–{_pct(row.ci_high)}",
            f"{row.mean_points:.2f}",
        )
    return table


def shape_tables(engine: Engine, batch: Batch) -> list[Table]:
    """Game length (mean, median, p10, p90) and how games ended."""
    frame = matches(engine, batch.id)
    played = frame[frame["ok"]]
    length = Table(title="Game length (plies)", title_justify="left")
    for name in ("games", "mean", "median", "p10", "p90", "min", "max"):
        length.add_column(name, justify="right")
    if len(played):
        plies = played["plies"]
        length.add_row(
            str(len(played)),
            f"{plies.mean():.1f}",
            f"{plies.median():g}",
            f"{plies.quantile(0.1):g}",
            f"{plies.quantile(0.9):g}",
            str(plies.min()),
            str(plies.max()),
        )
    ended = Table(title="How games ended", title_justify="left")
    ended.add_column("ended by")
    ended.add_column("games", justify="right")
    ended.add_column("share", justify="right")
    counts = frame["ended_by"].value_counts()
    for how, n in counts.items():
        ended.add_row(str(how), str(n), _pct(n / len(frame)))
    return [length, ended]


def describe_batch(batch: Batch) -> str:
    """One line: game, players, agents, matches, seed, seat policy."""
    opts = ", ".join(f"{k}={v}" for k, v in batch.options.items() if not isinstance(v, list))
    return (
        f"{batch.game} ({batch.players} players{', ' + opts if opts else ''}): "
        f"{' vs '.join(batch.labels)}; {batch.matches} matches, seed {batch.seed}, "
        f"seats {batch.seat_policy}, chunks of {batch.chunk_size}"
    )
