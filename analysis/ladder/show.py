"""A ladder's tables as text or Markdown, and the strength-against-CPU plot."""

from __future__ import annotations

import math
from collections.abc import Collection
from pathlib import Path

import numpy as np

from analysis.ladder.fit import BUDGETS, LadderTable
from analysis.stats import UnitMean


def _elo(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:+.0f}"


def _interval(low: float, high: float) -> str:
    return "" if math.isnan(low) else f"[{_elo(low)}, {_elo(high)}]"


def _share(u: UnitMean) -> str:
    if math.isnan(u.estimate):
        return "—"
    return f"{u.estimate:.3f} [{u.ci_low:.3f}, {u.ci_high:.3f}]"


def _cpu(seconds: float) -> str:
    if math.isnan(seconds):
        return "—"
    return f"{seconds:.3f}" if seconds < 10 else f"{seconds:.1f}"


def _rows_markdown(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def _rows_text(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows, strict=True)]
    return [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [head, *rows]
    ]


def level_lines(t: LadderTable, markdown: bool, bold: Collection[str] = ()) -> list[str]:
    """Each level: games, its own CPU seconds a game, Elo against the reference [95 %]; in
    Markdown the levels in ``bold`` are set in bold."""
    head = ["level", "games", "CPU s/game", f"Elo vs {t.ladder.reference} [95 %]", "note"]

    def name(level: str) -> str:
        if not markdown:
            return level
        return f"**`{level}`**" if level in bold else f"`{level}`"

    rows = [
        [
            name(r.level),
            str(r.games),
            _cpu(r.cpu_per_game),
            f"{_elo(r.elo)} {_interval(r.ci_low, r.ci_high)}".strip(),
            r.note or "",
        ]
        for r in sorted(t.levels, key=lambda r: (math.isnan(r.cpu_per_game), r.cpu_per_game))
    ]
    return (_rows_markdown if markdown else _rows_text)(head, rows)


def pairing_lines(t: LadderTable, markdown: bool) -> list[str]:
    """Each pairing: games (units), the first level's score and win share [95 %], plies, CPU."""
    share = "win share (vs 1/3)" if t.ladder.players == 3 else "win share"
    head = ["pairing", "games (units)", "score [95 %]", share, "plies", "CPU s/game"]
    rows = [
        [
            f"{p.a} vs {p.b}",
            f"{p.games} ({p.units})",
            _share(p.score),
            _share(p.win_share),
            f"{p.plies:.0f}",
            _cpu(p.cpu_per_game),
        ]
        for p in t.pairings
    ]
    return (_rows_markdown if markdown else _rows_text)(head, rows)


def budget_line(t: LadderTable) -> str:
    """The strongest level within each CPU budget a game."""
    parts = []
    for budget in BUDGETS:
        best = t.strongest_within(budget)
        parts.append(f"≤ {budget:g} CPU s: {best.level if best else '—'}")
    return "strongest level within " + "; ".join(parts)


def ladder_text(t: LadderTable, markdown: bool = False) -> str:
    """The whole ladder of one game, titled with its setting."""
    lad = t.ladder
    title = (
        f"{lad.game}: {lad.players} players, reference {lad.reference}, {t.games} games, "
        f"{t.units} units of sampling in the fit"
    )
    lines = [f"### {title}" if markdown else title, ""]
    lines += [*level_lines(t, markdown), "", *pairing_lines(t, markdown)]
    lines += ["", budget_line(t), ""]
    return "\n".join(lines)


def plot(tables: list[LadderTable], path: Path) -> None:
    """Elo against the reference over CPU seconds a game (log scale), one panel per game: each
    level with its interval, and the frontier, the best Elo within each CPU budget."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(len(tables), 2)
    rows = math.ceil(len(tables) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 3.8 * rows), squeeze=False)
    for ax in axes.flat[len(tables) :]:
        ax.set_visible(False)
    for ax, t in zip(axes.flat, tables, strict=False):
        shown = [r for r in t.levels if r.games and not math.isnan(r.elo)]
        shown.sort(key=lambda r: r.cpu_per_game)
        xs = [max(r.cpu_per_game, 1e-4) for r in shown]
        bounded = [not math.isnan(r.ci_low) or r.level == t.ladder.reference for r in shown]
        low = [r.elo - r.ci_low if not math.isnan(r.ci_low) else 0.0 for r in shown]
        high = [r.ci_high - r.elo if not math.isnan(r.ci_high) else 0.0 for r in shown]
        ax.errorbar(xs, [r.elo for r in shown], yerr=[low, high], fmt="o", ms=4, capsize=3)
        best = np.maximum.accumulate(np.array([r.elo for r in shown], dtype=float))
        ax.step(xs, best, where="post", color="0.5", lw=1, label="best within the budget")
        for x, r, ok in zip(xs, shown, bounded, strict=True):
            ax.annotate(
                r.level + ("" if ok else " (unbounded)"),
                (x, r.elo),
                fontsize=7,
                xytext=(4, -10),
                textcoords="offset points",
            )
        for budget in BUDGETS:
            ax.axvline(budget, color="0.8", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_title(f"{t.ladder.game} ({t.ladder.players} players)", fontsize=9)
        ax.set_xlabel("CPU s a game (the level's own moves)", fontsize=8)
        ax.set_ylabel(f"Elo vs {t.ladder.reference}", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
