"""The series' plot: the first player's advantage with its 95 % interval at each point, in the
series' order, with what perfect play gives written under the points that have an exact value
and the points not yet played marked as such. Drawn with :mod:`analysis.plots`' figures (no
pyplot, the same bytes every time)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes

from analysis import plots
from analysis.studies.series import SeriesPoint

SIZE = (6.4, 2.1)
"""Inches: at the docs site's width it is drawn about 700 pixels wide and short enough to
stay on the first screen under the verdict's table."""
GREY = "#888"


def _tick(p: SeriesPoint) -> str:
    """A point's label, over what perfect play gives there where it is known."""
    if p.exact is None:
        return p.label
    value = p.exact.start_value
    if value == 0:
        return f"{p.label}\na draw"
    return f"{p.label}\n{'wins' if value > 0 else 'loses'} by {abs(value):,}"


def series_plot(found: Sequence[SeriesPoint], axis: str, level: str) -> Axes:
    """The advantage, in percentage points, at every point (filled where its interval is as
    narrow as the precision aimed at, open where it is not yet); under each label, what
    perfect play gives the first player where it is known."""
    ax = plots.new_axes(SIZE)
    colour = plots.COLOURS[0]
    for settled in (True, False):
        shown = [(x, p) for x, p in enumerate(found) if p.played and (p.state == "settled")
                 is settled]  # fmt: skip
        if not shown:
            continue
        xs = np.array([x for x, _ in shown], dtype=float)
        y = np.array([_value(p, "value") for _, p in shown]) * 100
        low = np.array([_value(p, "low") for _, p in shown]) * 100
        high = np.array([_value(p, "high") for _, p in shown]) * 100
        errors = np.vstack([np.clip(np.nan_to_num(y - low), 0, None),
                            np.clip(np.nan_to_num(high - y), 0, None)])  # fmt: skip
        ax.errorbar(xs, y, yerr=errors, fmt="o", capsize=3, color=colour,
                    markerfacecolor=colour if settled else "white",
                    label="settled" if settled else "not yet settled")  # fmt: skip
    for x, p in enumerate(found):
        if not p.played:
            ax.text(x, 0.5, "not yet played", transform=ax.get_xaxis_transform(), rotation=90,
                    ha="center", va="center", fontsize=7, color=GREY)  # fmt: skip
    ax.axhline(0, color=GREY, ls="--", lw=1)
    ax.set_xticks(range(len(found)), [_tick(p) for p in found], fontsize=7)
    ax.set_xlim(-0.5, len(found) - 0.5)
    solved = any(p.exact is not None for p in found)
    under = "; under it, the first player under perfect play" if solved else ""
    ax.set_xlabel(f"{axis}{under}", fontsize=8)
    ax.set_ylabel("advantage, pp (95 %)", fontsize=8)
    at = f" at {level}" if level else ""
    ax.set_title(f"The first player's advantage{at}", fontsize=9, loc="left")
    ax.tick_params(axis="y", labelsize=7)
    if any(p.played for p in found):
        ax.legend(fontsize=7, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=2,
                  frameon=False, borderaxespad=0.1)  # fmt: skip
    return ax


def _value(p: SeriesPoint, part: str) -> float:
    """The point's advantage, or an end of its interval; NaN where the report gives none."""
    a = p.advantage
    if a is None:
        return float("nan")
    value = {"value": a.value, "low": a.interval.low, "high": a.interval.high}[part]
    return float("nan") if value is None else value
