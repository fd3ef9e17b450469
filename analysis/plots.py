"""Report figures. Each function takes a DataFrame (columns in its docstring) and ``ax=None``
and returns the axes it drew on; with no axes given it makes a new Agg figure (no display).

Figures are rendered without touching matplotlib's process-wide state (no pyplot, no
``rcParams`` or ``rc_context``): the API renders reports from several threads at once, and a
setting changed by one thread would leak into another's figure. The two SVG settings this
module needs (text kept as text, stable element ids) are built into its own SVG renderer.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import re
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import cbook
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.backends.backend_mixed import MixedModeRenderer
from matplotlib.backends.backend_svg import RendererSVG
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

SIZE = (6.4, 3.2)
COLOURS = ("#3465a4", "#cc0000", "#4e9a06", "#c4a000", "#75507b", "#ce5c00", "#555753")
SVG_ID_SALT = "playtester"
"""Seeds the SVG element ids, so the same figure always gives the same bytes."""


class _ReportSVGRenderer(RendererSVG):
    """matplotlib's SVG renderer with text kept as ``<text>`` and ids derived from content.

    The stock renderer reads both choices from ``rcParams`` (``svg.fonttype``,
    ``svg.hashsalt``) while drawing; here they are fixed, so no global setting is needed.
    """

    def _make_id(self, kind: str, content: Any) -> str:
        digest = hashlib.sha256(f"{SVG_ID_SALT}{content}".encode()).hexdigest()
        return f"{kind}{digest[:10]}"

    def _draw_text_as_path(self, *args: Any, **kwargs: Any) -> None:
        # Text as text: searchable, selectable and a fraction of the size of glyph outlines.
        self._draw_text_as_text(*args, **kwargs)


class _ReportCanvas(FigureCanvasAgg):
    """An Agg canvas (for layout) whose SVG output goes through ``_ReportSVGRenderer``."""

    def print_svg(self, target: Any, *, bbox_inches_restore: Any = None, **_: Any) -> None:
        """Write the figure as SVG to ``target`` (``Figure.savefig`` calls it).

        ``target`` is a text or binary stream: the layout pass probes with a ``BytesIO``.
        """
        unicode = cbook.file_requires_unicode(target)
        stream = target if unicode else codecs.getwriter("utf-8")(target)
        figure = self.figure
        dpi = figure.dpi
        figure.dpi = 72  # SVG user units are points
        width, height = figure.get_size_inches()
        renderer = MixedModeRenderer(
            figure,
            width,
            height,
            dpi,
            _ReportSVGRenderer(width * 72, height * 72, stream, image_dpi=dpi, metadata=None),
            bbox_inches_restore=bbox_inches_restore,
        )
        figure.draw(renderer)  # type: ignore[arg-type]  # a proxy for a RendererSVG
        renderer.finalize()


def new_axes(size: tuple[float, float] = SIZE) -> Axes:
    """A fresh axes on its own figure (object-oriented API, safe in threads)."""
    fig = Figure(figsize=size, layout="constrained")
    _ReportCanvas(fig)  # no pyplot, no global state: safe in API threads
    return fig.add_subplot()


def _errors(df: pd.DataFrame, value: str) -> np.ndarray:
    v = df[value].to_numpy(float)
    lo = np.nan_to_num(v - df["ci_low"].to_numpy(float), nan=0.0)
    hi = np.nan_to_num(df["ci_high"].to_numpy(float) - v, nan=0.0)
    return np.vstack([np.clip(lo, 0, None), np.clip(hi, 0, None)])


def seat_shares(df: pd.DataFrame, ax: Axes | None = None, label: str = "seat") -> Axes:
    """Win share per seat (or, with ``label="position"``, per turn position) with its interval
    and the fair share. Columns: ``label``, win_share, ci_low, ci_high, expected."""
    ax = ax or new_axes()
    y = np.arange(len(df))
    ax.barh(y, df["win_share"], xerr=_errors(df, "win_share"), color=COLOURS[0], capsize=4)
    if len(df):
        ax.axvline(float(df["expected"].iloc[0]), color="#888", ls="--", lw=1, label="fair share")
        ax.legend(loc="lower right", fontsize=8)
    name = "turn position" if label == "position" else "seat"
    ax.set_yticks(y, [f"{name} {s}" for s in df[label]])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("win share (95 % interval)")
    ax.set_title("Turn-position balance" if label == "position" else "Seat balance")
    return ax


def agent_scores(df: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Score per agent with its interval. Columns: agent, score, ci_low, ci_high."""
    ax = ax or new_axes()
    y = np.arange(len(df))
    colours = [COLOURS[i % len(COLOURS)] for i in range(len(df))]
    ax.barh(y, df["score"], xerr=_errors(df, "score"), color=colours, capsize=4)
    ax.set_yticks(y, [str(a) for a in df["agent"]])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("score: mean win share (95 % interval)")
    ax.set_title("Agents")
    return ax


def plies_histogram(df: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Game lengths. Columns: left, right (bin edges), count."""
    ax = ax or new_axes()
    left = df["left"].to_numpy(float)
    width = df["right"].to_numpy(float) - left
    ax.bar(left, df["count"], width=width, align="edge", color=COLOURS[2], edgecolor="white")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("plies")
    ax.set_ylabel("matches")
    ax.set_title("Game length")
    return ax


def heat_map(df: pd.DataFrame, ax: Axes | None = None, title: str = "") -> Axes:
    """8 × 8 probabilities. Index: rows 1..8, columns: a..h (the board as seen by seat 0)."""
    ax = ax or new_axes((3.6, 3.4))
    grid = df.sort_index(ascending=False).to_numpy(float)
    image = ax.imshow(grid, cmap="viridis", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(grid.shape[1]), [str(c) for c in df.columns])
    ax.set_yticks(range(grid.shape[0]), [str(r) for r in df.sort_index(ascending=False).index])
    for r in range(grid.shape[0]):
        for c in range(grid.shape[1]):
            v = grid[r, c]
            if np.isfinite(v):
                ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if v < 0.6 else "black")  # fmt: skip
    fig = ax.get_figure(root=True)
    if fig is not None:
        fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_title(title or "P(owns square)")
    return ax


def tier_shares(df: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Share of each value tier's squares taken, grouped by tier. Columns: group, tier, share."""
    ax = ax or new_axes()
    tiers = sorted(df["tier"].unique(), reverse=True)
    groups = list(dict.fromkeys(df["group"]))
    width = 0.8 / max(1, len(groups))
    x = np.arange(len(tiers))
    for g, name in enumerate(groups):
        part = df[df["group"] == name].set_index("tier").reindex(tiers)
        ax.bar(x + g * width, part["share"], width, label=str(name), color=COLOURS[g % 7])
    ax.set_xticks(x + width * (len(groups) - 1) / 2, [str(t) for t in tiers])
    ax.set_xlabel("square value")
    ax.set_ylabel("share of the tier's squares")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("Squares taken by value tier")
    return ax


def deciding_tiers(df: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Per square value, the winners' share of its squares minus the losers', with its
    interval. Columns: tier, difference, ci_low, ci_high."""
    ax = ax or new_axes()
    df = df.sort_values("tier", ascending=False)
    y = np.arange(len(df))
    ax.barh(y, df["difference"], xerr=_errors(df, "difference"), color=COLOURS[1], capsize=4)
    ax.axvline(0.0, color="#888", lw=1)
    ax.set_yticks(y, [f"value {t}" for t in df["tier"]])
    ax.invert_yaxis()
    ax.set_xlabel("winners' share − losers' share (95 % interval)")
    ax.set_title("Which squares decide the game")
    return ax


def advantage_by_strength(
    df: pd.DataFrame, ax: Axes | None = None, size: tuple[float, float] = SIZE
) -> Axes:
    """The first player's advantage against the strength of the level played, one line per
    group (a player count, a start). Columns: group, elo, estimate, ci_low, ci_high (shares).
    ``size`` (inches) is the new figure's when no axes are given."""
    ax = ax or new_axes(size)
    for k, (group, rows) in enumerate(df.groupby("group", sort=False)):
        rows = rows.sort_values("elo")
        y = rows["estimate"].to_numpy(float) * 100
        lo = np.clip(y - rows["ci_low"].to_numpy(float) * 100, 0, None)
        hi = np.clip(rows["ci_high"].to_numpy(float) * 100 - y, 0, None)
        ax.errorbar(rows["elo"], y, yerr=np.vstack([lo, hi]), marker="o", capsize=3,
                    color=COLOURS[k % len(COLOURS)], label=str(group))  # fmt: skip
    ax.axhline(0, color="#888", ls="--", lw=1)
    ax.set_xlabel("Elo of the level played (the game's strength ladder)", fontsize=9)
    ax.set_ylabel("advantage, points (95 %)", fontsize=9)
    ax.set_title("The first player's advantage by strength", fontsize=10)
    if len(df):
        # Beside the axes, not on them: a short plot has no empty corner to spare.
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return ax


def to_svg(ax: Axes) -> str:
    """The axes' figure as an inline ``<svg>`` element (text kept as text)."""
    fig = ax.get_figure(root=True)
    if not isinstance(fig, Figure):
        raise TypeError("axes are not attached to a figure")
    if not isinstance(fig.canvas, _ReportCanvas):
        _ReportCanvas(fig)  # axes drawn on a caller's figure
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    svg = buf.getvalue()
    start = svg.find("<svg")
    svg = svg[start:]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, count=1, flags=re.S)
    # Let the page size the figure: keep the viewBox, drop the fixed physical size.
    return re.sub(r'(<svg[^>]*?) width="[^"]*" height="[^"]*"', r"\1", svg, count=1)
